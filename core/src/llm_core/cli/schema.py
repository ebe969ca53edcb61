"""``--schema``: a JSON Schema file, inline JSON Schema, or a concise schema as in ``llm``.

The concise form lists fields separated by commas (or new lines): ``name, age int, bio: a short
biography``. Each field is ``NAME [TYPE][: description]`` with TYPE one of ``str`` (default),
``int``, ``float``, ``bool``; every field is required. ``--schema-multi`` wraps it in
``{"items": [...]}``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from llm_core.errors import InvalidInputError
from llm_core.untrusted import load_json, read_text_file

_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
_FIELD = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\s+(?P<type>[a-z]+))?\s*(?::\s*(?P<desc>.*))?$")


def concise_schema(text: str) -> dict[str, Any]:
    """The JSON Schema of a concise schema string."""
    separator = "\n" if "\n" in text.strip() else ","
    properties: dict[str, Any] = {}
    for raw in text.split(separator):
        field = raw.strip()
        if not field:
            continue
        match = _FIELD.match(field)
        if match is None:
            raise InvalidInputError(
                f"--schema: cannot read the field {field!r} (expected 'name [type][: description]')"
            )
        kind = match["type"] or "str"
        if kind not in _TYPES:
            raise InvalidInputError(f"--schema: unknown type {kind!r} for {match['name']} (use {', '.join(_TYPES)})")
        prop: dict[str, Any] = {"type": _TYPES[kind]}
        if match["desc"]:
            prop["description"] = match["desc"].strip()
        properties[match["name"]] = prop
    if not properties:
        raise InvalidInputError("--schema: no fields given")
    return {"type": "object", "properties": properties, "required": list(properties)}


def load_schema(value: str, *, multi: bool = False) -> dict[str, Any]:
    """A JSON Schema from ``--schema``: a file, inline JSON, or the concise form."""
    stripped = value.strip()
    path = Path(value)
    if stripped.startswith("{"):
        schema = _parse_json(stripped, "--schema")
    elif path.suffix == ".json" or path.is_file():
        if not path.exists():
            raise FileNotFoundError(f"--schema: no such file {value}")
        schema = _parse_json(read_text_file(path, what="--schema"), str(path))
    else:
        schema = concise_schema(value)
    if multi:
        return {"type": "object", "properties": {"items": {"type": "array", "items": schema}}, "required": ["items"]}
    return schema


def _parse_json(text: str, where: str) -> dict[str, Any]:
    try:
        schema = load_json(text, what=where)
    except InvalidInputError:
        raise
    except ValueError as exc:
        raise InvalidInputError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise InvalidInputError(f"{where}: a JSON Schema must be an object")
    return schema
