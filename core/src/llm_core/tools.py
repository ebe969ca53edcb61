"""Tool (function) specifications and the calls a model makes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")


class Grammar(BaseModel):
    """The grammar a custom tool's text input must follow: a Lark grammar or a regular expression."""

    model_config = ConfigDict(frozen=True)

    syntax: Literal["lark", "regex"]
    definition: str = Field(min_length=1)


class ToolSpec(BaseModel):
    """A tool the model may call. A ``function`` tool (the default) is called with JSON
    arguments following ``parameters``, a JSON schema of type object; a ``custom`` tool (OpenAI's
    freeform tools, :meth:`custom`) is called with plain text, constrained by ``grammar`` if set.

    ``handler`` (optional, never serialised or sent) is the function a conversation runs when the
    model calls the tool (see ``docs/conversations.md``); a custom tool's handler gets the text."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None
    kind: Literal["function", "custom"] = "function"
    grammar: Grammar | None = None
    handler: SkipJsonSchema[Callable[..., Any] | None] = Field(default=None, exclude=True, repr=False)

    @classmethod
    def custom(
        cls,
        name: str,
        description: str = "",
        grammar: Grammar | None = None,
        handler: Callable[[str], Any] | None = None,
    ) -> ToolSpec:
        """A custom (freeform) tool: the model calls it with text (``ToolCall.input``)."""
        return cls(name=name, description=description, kind="custom", grammar=grammar, handler=handler)

    @model_validator(mode="after")
    def _kind_fits(self) -> ToolSpec:
        if self.kind == "custom" and (self.parameters.get("properties") or self.strict is not None):
            raise ValueError("a custom tool takes text: give it no parameters or strict (a grammar instead)")
        if self.kind == "function" and self.grammar is not None:
            raise ValueError("a grammar constrains a custom tool's text: use ToolSpec.custom(...)")
        return self

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
    """A call the model asked for. ``arguments`` given as a JSON string are decoded. A call of
    a custom tool carries its text in ``input`` (``None`` for a function call) and no arguments."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    input: str | None = None

    @property
    def is_custom(self) -> bool:
        return self.input is not None

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
