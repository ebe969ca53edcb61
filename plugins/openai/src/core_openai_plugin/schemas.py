"""Pure mapping of tools and structured output to the Responses API's JSON-schema shapes.

:func:`text_format` is the one place a JSON answer's ``text.format`` is built, for a single call,
a stream and a batch line alike (all three send it through ``responses.create`` or its JSON body).
:func:`function_tool` and :func:`tool_choice` map tools. Nothing here imports the SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from llm_core.errors import InvalidInputError
from llm_core.tools import ToolSpec

PROVIDER = "openai"

#: ``ResponseFormatTextJSONSchemaConfigParam.name``: "a-z, A-Z, 0-9, or underscores and dashes,
#: with a maximum length of 64".
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


def function_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool spec as a Responses function tool, strict when the schema allows it (or as asked);
    a custom tool as a ``custom`` tool (``CustomToolParam``), its grammar as its ``format``."""
    if tool.kind == "custom":
        custom: dict[str, Any] = {"type": "custom", "name": tool.name}
        if tool.description:
            custom["description"] = tool.description
        if tool.grammar is not None:
            custom["format"] = {"type": "grammar", **tool.grammar.model_dump()}
        return custom
    strict = tool.strict if tool.strict is not None else is_strict_schema(tool.parameters)
    spec: dict[str, Any] = {"type": "function", "name": tool.name, "parameters": tool.parameters, "strict": strict}
    if tool.description:
        spec["description"] = tool.description
    return spec


def tool_choice(choice: str, tools: Sequence[ToolSpec]) -> str | dict[str, Any]:
    """``auto``/``none``/``required``, or the name of one tool to force."""
    if choice in ("auto", "none", "required"):
        return choice
    chosen = next((tool for tool in tools if tool.name == choice), None)
    if chosen is None:
        raise InvalidInputError(
            f"tool_choice {choice!r} is neither auto, none, required nor one of the tools", provider=PROVIDER
        )
    return {"type": chosen.kind, "name": choice}  # ToolChoiceFunctionParam / ToolChoiceCustomParam


def is_strict_schema(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema``: every object closes ``additionalProperties``
    and requires all of its properties (checked through nested properties, items, unions, $defs)."""
    if not isinstance(schema, Mapping):
        return True
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, Mapping):
        props = properties if isinstance(properties, Mapping) else {}
        if schema.get("additionalProperties") is not False:
            return False
        required = schema.get("required", [])
        if not isinstance(required, list) or set(required) != set(props):
            return False
        if not all(is_strict_schema(value) for value in props.values()):
            return False
    children: list[Any] = []
    for key in ("items", "not"):
        if isinstance(schema.get(key), Mapping):
            children.append(schema[key])
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        if isinstance(schema.get(key), list):
            children.extend(schema[key])
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), Mapping):
            children.extend(schema[key].values())
    return all(is_strict_schema(child) for child in children)


def text_format(schema: Any) -> dict[str, Any]:
    """``text.format`` of a JSON answer (``ResponseFormatTextConfigParam``).

    A Pydantic model or a JSON-schema dict → ``{"type": "json_schema", "name", "schema",
    "strict"}`` (``ResponseFormatTextJSONSchemaConfigParam``): a model's schema is first made
    strict (:func:`strict_json_schema`) and named after the model, a dict is sent as given and
    named after its ``title``; strict whenever :func:`is_strict_schema` holds. No schema → JSON
    mode, ``{"type": "json_object"}``.
    """
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        name, json_schema = schema.__name__, strict_json_schema(schema)
    elif isinstance(schema, Mapping):
        name, json_schema = str(schema.get("title") or "response"), dict(schema)
    else:
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "name": _SCHEMA_NAME.sub("_", name)[:64],
        "schema": json_schema,
        "strict": is_strict_schema(json_schema),
    }


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A Pydantic model's JSON schema as Structured Outputs' strict mode takes it.

    Strict mode wants every object closed (``additionalProperties: false``) and every property
    required, and no keys beside a ``$ref``. So, as the openai SDK's ``responses.parse`` does for a
    ``text_format`` model (the request is the same): objects get ``additionalProperties: false``
    unless they say otherwise and require all their properties (an optional field stays nullable,
    its ``None`` default is dropped), a ``$ref`` with sibling keys is replaced by its definition, and
    an ``allOf`` of one schema is merged into its parent. A ``dict[str, X]`` field keeps its open
    ``additionalProperties``: :func:`text_format` then sends the schema as not strict.
    """
    schema = model.model_json_schema()
    strict: dict[str, Any] = _strict(schema, schema)
    return strict


def _strict(node: Any, root: Mapping[str, Any]) -> Any:
    if not isinstance(node, Mapping):  # e.g. a boolean schema
        return node
    schema = dict(node)
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), Mapping):
            schema[key] = {name: _strict(value, root) for name, value in schema[key].items()}
    if schema.get("type") == "object":
        schema.setdefault("additionalProperties", False)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        schema["required"] = list(properties)
        schema["properties"] = {name: _strict(value, root) for name, value in properties.items()}
    if isinstance(schema.get("items"), Mapping):
        schema["items"] = _strict(schema["items"], root)
    if isinstance(schema.get("anyOf"), list):
        schema["anyOf"] = [_strict(variant, root) for variant in schema["anyOf"]]
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        del schema["allOf"]
        schema.update(_strict(all_of[0], root))
    elif isinstance(all_of, list):
        schema["allOf"] = [_strict(entry, root) for entry in all_of]
    if "default" in schema and schema["default"] is None:
        del schema["default"]  # the field stays nullable; null needs no default
    ref = schema.get("$ref")
    if isinstance(ref, str) and len(schema) > 1:
        # the schema's own keys win over the definition's (e.g. a field's description)
        inlined = {**_definition(root, ref), **schema}
        del inlined["$ref"]
        return _strict(inlined, root)
    return schema


def _definition(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    """The schema a local ``$ref`` (``#/$defs/Name``) points at."""
    if not ref.startswith("#/"):
        raise InvalidInputError(f"a schema $ref must be local (#/...), not {ref!r}", provider=PROVIDER)
    target: Any = root
    for key in ref[2:].split("/"):
        target = target.get(key) if isinstance(target, Mapping) else None
    if not isinstance(target, Mapping):
        raise InvalidInputError(f"the schema $ref {ref!r} points at no schema", provider=PROVIDER)
    return target


def mentions_json(payload: Mapping[str, Any]) -> bool:
    """Whether a request's instructions or input say "JSON" (JSON mode requires the word)."""
    texts = [str(payload.get("instructions") or "")]
    given = payload["input"]
    for item in [{"content": given}] if isinstance(given, str) else given:
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(part.get("text", "")) for part in content)
    return any("json" in text.lower() for text in texts)
