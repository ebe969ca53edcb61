"""Python functions as tools: a :class:`~llm_core.tools.ToolSpec` from a signature and docstring
(the JSON schema through Pydantic), argument validation before the call, and running the call.

Everything here is checked when a conversation is made, before any request is sent: a parameter
whose type Pydantic cannot turn into a JSON schema, a duplicate tool name or something that is
not callable raises :class:`~llm_core.errors.InvalidInputError`. Tools served elsewhere (an MCP
server: :mod:`llm_core.mcp`) come from a :class:`ToolSource`, listed when the conversation first
needs them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, get_type_hints, runtime_checkable

import pydantic_core
from pydantic import BaseModel, ConfigDict, PydanticUserError, ValidationError, create_model

from llm_core.errors import InvalidInputError
from llm_core.tools import ToolCall, ToolSpec

#: The parameter through which a function tool receives its call's idempotency key (it is not
#: part of the schema the model sees).
IDEMPOTENCY_KEY = "idempotency_key"


@dataclass(frozen=True)
class Tool:
    """A tool of a conversation: what the model sees (``spec``, sent without the handler) and
    what runs when it is called (``handler``; ``None`` for a plain ToolSpec: the application
    answers such calls itself). ``requires_approval``: every call waits for
    ``chat.approve``/``chat.deny`` (see docs/conversations.md, "Approval")."""

    spec: ToolSpec
    handler: Callable[..., Any] | None
    arguments: type[BaseModel] | None = None  # the signature as a model (functions only)
    requires_approval: bool = False
    #: the handler's keyword for the call's idempotency key (None: the handler takes none)
    key_parameter: str | None = None
    #: the server that runs it (an MCP server's name; None for a function), for observers
    server: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def is_async(self) -> bool:
        return self.handler is not None and inspect.iscoroutinefunction(self.handler)

    def bind(self, call: ToolCall, key: str = "") -> dict[str, Any]:
        """The keyword arguments for ``handler`` (with the idempotency ``key`` when it takes
        one), validated against the signature; raises :class:`ToolArgumentsError` (what to tell
        the model) when they do not fit. A custom tool's handler gets the call's text as its
        first parameter."""
        if self.spec.kind == "custom":
            return self._bind_text(call)
        if self.arguments is not None:
            try:
                validated = self.arguments.model_validate(call.arguments)
            except ValidationError as exc:
                raise ToolArgumentsError(validation_summary(exc)) from exc
            kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
            if self.key_parameter is not None:
                kwargs[self.key_parameter] = key
            return kwargs
        missing = [name for name in self.spec.parameters.get("required", ()) if name not in call.arguments]
        if missing:
            raise ToolArgumentsError(f"missing required argument(s): {', '.join(missing)}")
        assert self.handler is not None
        try:
            inspect.signature(self.handler).bind(**call.arguments)
        except TypeError as exc:
            raise ToolArgumentsError(str(exc)) from exc
        return dict(call.arguments)

    def _bind_text(self, call: ToolCall) -> dict[str, Any]:
        assert self.handler is not None
        parameters = list(inspect.signature(self.handler).parameters)
        if call.input is None or not parameters:
            raise ToolArgumentsError(f"{self.name} is a custom tool: call it with text")
        return {parameters[0]: call.input}


class ToolArgumentsError(ValueError):
    """The arguments of a call do not fit the tool (the message is sent to the model)."""


class ToolOutputError(ValueError):
    """What a tool returned cannot be sent to the model (it cannot be serialised: a circular
    structure, an object whose ``str()`` fails); the serialiser's exception is the ``__cause__``."""


@runtime_checkable
class ToolSource(Protocol):
    """Tools served by something the conversation starts on first use and closes with itself
    (an MCP server: :class:`llm_core.mcp.MCPServer`). Both calls block; an async conversation
    makes them in a worker thread."""

    @property
    def name(self) -> str: ...

    def tools(self) -> list[Tool]:
        """The tools it serves now (started and listed on the first call, listed again only
        when they changed). Raises :class:`~llm_core.conversation.errors.ToolServerError`."""
        ...

    def close(self) -> None: ...


def tool_from_function(
    function: Callable[..., Any], *, name: str | None = None, requires_approval: bool = False
) -> Tool:
    """A :class:`Tool` from a plain or ``async def`` function: name, description (the
    docstring) and parameters (the signature's JSON schema, ``Annotated``/``Field`` descriptions
    included). A parameter named ``idempotency_key`` is not shown to the model: the conversation
    passes it a key unique to the call, the same when the call is resumed elsewhere.
    ``requires_approval=True``: each call waits for ``chat.approve``. Raises
    :class:`InvalidInputError` when the signature cannot become a schema."""
    tool_name = name or getattr(function, "__name__", "")
    try:
        signature = inspect.signature(function)
        hints = get_type_hints(function, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise InvalidInputError(f"tools: cannot read the signature of {tool_name or function!r}: {exc}") from None
    fields: dict[str, Any] = {}
    key_parameter = None
    for parameter in signature.parameters.values():
        if parameter.name == IDEMPOTENCY_KEY:
            key_parameter = parameter.name
            continue
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
    return Tool(
        spec=spec, handler=function, arguments=model, requires_approval=requires_approval, key_parameter=key_parameter
    )


ToolLike = Callable[..., Any] | ToolSpec | Tool | ToolSource


def build_tools(tools: Sequence[ToolLike] | None) -> tuple[dict[str, Tool], list[ToolSource]]:
    """The conversation's own tools by name (from functions, ToolSpecs with or without handler,
    and Tools), and the sources of the others (MCP servers)."""
    if isinstance(tools, str | bytes | Mapping) or (tools is not None and not isinstance(tools, Sequence)):
        raise InvalidInputError("tools must be a list of functions, ToolSpecs or MCP servers")
    found: dict[str, Tool] = {}
    sources: list[ToolSource] = []
    for index, item in enumerate(tools or ()):
        if isinstance(item, ToolSource):
            if any(source is item for source in sources):
                raise InvalidInputError(f"tools: the server {item.name!r} is given twice")
            sources.append(item)
            continue
        if isinstance(item, Tool):
            tool = item
        elif isinstance(item, ToolSpec):
            tool = Tool(spec=item.model_copy(update={"handler": None}), handler=item.handler)
        elif callable(item) and not isinstance(item, type):
            tool = tool_from_function(item)
        else:
            raise InvalidInputError(
                f"tools[{index}] is a {type(item).__name__}: give a function, a ToolSpec or an MCP server"
            )
        if tool.name in found:
            raise InvalidInputError(f"tools: the name {tool.name!r} is given twice; tool names must be unique")
        found[tool.name] = tool
    return found, sources


def with_served(own: Mapping[str, Tool], sources: Sequence[ToolSource]) -> dict[str, Tool]:
    """``own`` tools and those the ``sources`` serve now, by name. A name two of them use is
    refused (:class:`InvalidInputError`, before the model is called): give the server a prefix."""
    merged = dict(own)
    owner = dict.fromkeys(own, "a function of the conversation")
    for source in sources:
        for tool in source.tools():
            if tool.name in merged:
                raise InvalidInputError(
                    f"tools: the name {tool.name!r} is both {owner[tool.name]} and a tool of server "
                    f"{source.name!r}: give the server a prefix (e.g. MCPServer.stdio(..., prefix='{source.name}_'))"
                )
            merged[tool.name] = tool
            owner[tool.name] = f"a tool of server {source.name!r}"
    return merged


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
