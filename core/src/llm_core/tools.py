"""Tool (function) specifications and the calls a model makes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")


class ToolSpec(BaseModel):
    """A function the model may call. ``parameters`` is a JSON schema of type object.

    ``handler`` (optional, never serialised or sent) is the function a conversation runs when the
    model calls the tool (see ``docs/conversations.md``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None
    handler: SkipJsonSchema[Callable[..., Any] | None] = Field(default=None, exclude=True, repr=False)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _TOOL_NAME.fullmatch(value):
            raise ValueError(
                "tool name must be 1-128 characters: letters, digits, '_', '.', ':' or '-', "
                "starting with a letter or '_'"
            )
        return value

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type", "object") != "object":
            raise ValueError("tool parameters must be a JSON schema with type 'object'")
        props = value.get("properties")
        if props is None or props == []:  # empty (also PHP-style []) is sent as an object
            props = {}
        if not isinstance(props, dict):
            raise ValueError("tool parameters 'properties' must be an object")
        required = value.get("required", [])
        if not isinstance(required, list) or any(r not in props for r in required):
            raise ValueError("tool parameters 'required' must list names from 'properties'")
        return {"type": "object", **value, "properties": props}


class ToolCall(BaseModel):
    """A call the model asked for. ``arguments`` given as a JSON string are decoded."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("arguments", mode="before")
    @classmethod
    def _decode(cls, value: Any) -> Any:
        if value is None or value == "":
            return {}
        if isinstance(value, str):
            try:
                decoded = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"tool call arguments are not valid JSON: {exc.msg}") from exc
            if not isinstance(decoded, dict):
                raise ValueError("tool call arguments must decode to a JSON object")
            return decoded
        return value
