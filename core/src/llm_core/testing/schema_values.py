"""A value that a JSON Schema accepts, built from the schema alone (for :class:`TestProvider`).

Covers what structured output and tool schemas use: objects (every property, required or not),
arrays (``minItems`` items, at least one), strings (``enum``/``const``, ``format`` date, date-time,
email, uri, uuid, ``minLength``), integers and numbers (``minimum``/``exclusiveMinimum``,
``multipleOf``), booleans, null, ``anyOf``/``oneOf``/``allOf`` (first branch / merged) and
``$ref`` into ``$defs``/``definitions``.
"""

from __future__ import annotations

from typing import Any

_FORMATS = {
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def value_for(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A value valid against ``schema`` (``root`` holds the ``$defs`` that ``$ref`` points into)."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > 20:
        return None
    if "$ref" in schema:
        return value_for(_resolve(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if not (isinstance(b, dict) and b.get("type") == "null")]
            return value_for((branches or schema[key])[0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = _resolve(part["$ref"], root) if isinstance(part, dict) and "$ref" in part else part
            merged = _merge(merged, part)
        return value_for(merged, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: value_for(sub, root, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        items = schema.get("items", {})
        if isinstance(schema.get("prefixItems"), list):
            return [value_for(sub, root, depth + 1) for sub in schema["prefixItems"]]
        return [value_for(items, root, depth + 1) for _ in range(count)]
    if kind == "string":
        if schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        return "a" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return True
    return None


def _number(schema: dict[str, Any], kind: str) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    value: float = 0 if low is None else low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    step = schema.get("multipleOf")
    if step:
        value = -(-value // step) * step
    high = schema.get("maximum")
    if high is not None and value > high:
        value = high
    return int(value) if kind == "integer" else float(value)


def _resolve(ref: str, root: Any) -> Any:
    node = root
    for part in ref.lstrip("#/").split("/"):
        if part:
            node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    merged = {**left, **right}
    if "properties" in left or "properties" in right:
        merged["properties"] = {**left.get("properties", {}), **right.get("properties", {})}
    return merged
