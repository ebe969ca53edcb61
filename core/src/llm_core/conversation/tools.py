"""Python functions as tools: a :class:`~llm_core.tools.ToolSpec` from a signature and docstring
(the JSON schema through Pydantic), argument validation before the call, and running the call.

Everything here is checked when a conversation is made, before any request is sent: a parameter
whose type Pydantic cannot turn into a JSON schema, a duplicate tool name or something that is
not callable raises :class:`~llm_core.errors.InvalidInputError`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints

import pydantic_core
from pydantic import BaseModel, ConfigDict, PydanticUserError, ValidationError, create_model

from llm_core.errors import InvalidInputError
from llm_core.tools import ToolCall, ToolSpec

ToolLike = Callable[..., Any] | ToolSpec


@dataclass(frozen=True)
class Tool:
    """A tool of a conversation: what the model sees (``spec``, sent without the handler) and
    what runs when it is called (``handler``; ``None`` for a plain ToolSpec: the application
    answers such calls itself)."""

    spec: ToolSpec
    handler: Callable[..., Any] | None
    arguments: type[BaseModel] | None = None  # the signature as a model (functions only)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_async(self) -> bool:
        return self.handler is not None and inspect.iscoroutinefunction(self.handler)

    def bind(self, call: ToolCall) -> dict[str, Any]:
        """The keyword arguments for ``handler``, validated against the signature; raises
        :class:`ToolArgumentsError` (what to tell the model) when they do not fit."""
        if self.arguments is not None:
            try:
                validated = self.arguments.model_validate(call.arguments)
            except ValidationError as exc:
                raise ToolArgumentsError(validation_summary(exc)) from exc
            return {name: getattr(validated, name) for name in type(validated).model_fields}
        missing = [name for name in self.spec.parameters.get("required", ()) if name not in call.arguments]
        if missing:
            raise ToolArgumentsError(f"missing required argument(s): {', '.join(missing)}")
        assert self.handler is not None
        try:
            inspect.signature(self.handler).bind(**call.arguments)
        except TypeError as exc:
            raise ToolArgumentsError(str(exc)) from exc
        return dict(call.arguments)


class ToolArgumentsError(ValueError):
    """The arguments of a call do not fit the tool (the message is sent to the model)."""


class ToolOutputError(ValueError):
    """What a tool returned cannot be sent to the model (it cannot be serialised: a circular
    structure, an object whose ``str()`` fails); the serialiser's exception is the ``__cause__``."""


def tool_from_function(function: Callable[..., Any], *, name: str | None = None) -> Tool:
    """A :class:`Tool` from a plain or ``async def`` function: name, description (the
    docstring) and parameters (the signature's JSON schema, ``Annotated``/``Field`` descriptions
    included). Raises :class:`InvalidInputError` when the signature cannot become a schema."""
    tool_name = name or getattr(function, "__name__", "")
    try:
        signature = inspect.signature(function)
        hints = get_type_hints(function, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise InvalidInputError(f"tools: cannot read the signature of {tool_name or function!r}: {exc}") from None
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise InvalidInputError(
                f"tools: {tool_name}(): *{parameter.name} cannot become a JSON schema; name every parameter"
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise InvalidInputError(f"tools: {tool_name}(): positional-only parameter {parameter.name!r}")
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    try:
        model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = _clean_schema(model.model_json_schema())
        spec = ToolSpec(name=tool_name, description=inspect.getdoc(function) or "", parameters=schema)
    except (PydanticUserError, TypeError, ValueError) as exc:
        message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc).splitlines()[0]
        raise InvalidInputError(f"tools: {tool_name or function!r} cannot become a tool: {message}") from None
    return Tool(spec=spec, handler=function, arguments=model)


def build_tools(tools: Sequence[ToolLike] | None) -> dict[str, Tool]:
    """The conversation's tools by name, from functions and ToolSpecs (with or without handler)."""
    if isinstance(tools, str | bytes | Mapping) or (tools is not None and not isinstance(tools, Sequence)):
        raise InvalidInputError("tools must be a list of functions or ToolSpecs")
    found: dict[str, Tool] = {}
    for index, item in enumerate(tools or ()):
        if isinstance(item, ToolSpec):
            tool = Tool(spec=item.model_copy(update={"handler": None}), handler=item.handler)
        elif callable(item) and not isinstance(item, type):
            tool = tool_from_function(item)
        else:
            raise InvalidInputError(f"tools[{index}] is a {type(item).__name__}: give a function or a ToolSpec")
        if tool.name in found:
            raise InvalidInputError(f"tools: the name {tool.name!r} is given twice; tool names must be unique")
        found[tool.name] = tool
    return found


def tool_output(value: Any) -> str:
    """What a tool returned, as the string sent back to the model: text as it is, anything else
    as JSON (Pydantic models, dataclasses, dicts and lists through Pydantic's serializer).
    Raises :class:`ToolOutputError` when it cannot be serialised."""
    if isinstance(value, str):
        return value
    try:
        return pydantic_core.to_json(value, fallback=str).decode("utf-8")
    except Exception as exc:  # the fallback runs the value's own __str__, which may raise anything
        raise ToolOutputError(
            f"the {type(value).__name__} it returned cannot be sent to the model: {describe(exc)}"
        ) from exc


def describe(error: BaseException) -> str:
    """``error``'s text, or its type's name when its ``__str__`` fails (a tool's exception, or
    what a tool returned, is the application's code and may be broken)."""
    try:
        return str(error)
    except Exception:  # noqa: BLE001 - anything its __str__ raises
        return f"<{type(error).__name__} whose text cannot be shown>"


def error_output(message: str) -> str:
    """A failure reported to the model as the tool's result."""
    return json.dumps({"error": message}, ensure_ascii=False)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's schema without the titles it makes up from the function and parameter names
    (they tell the model nothing the names do not)."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
    return "; ".join(parts)
