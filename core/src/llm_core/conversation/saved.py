"""A saved conversation: the document :meth:`~llm_core.conversation.state.ConversationState.to_json`
writes, and the checks ``from_json`` makes before it trusts one (someone may have edited it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from llm_core.conversation.calls import CallRecord
from llm_core.conversation.tools import validation_summary
from llm_core.errors import InvalidInputError
from llm_core.messages import ChatMessage
from llm_core.redaction import is_credential_name
from llm_core.responses import Usage
from llm_core.routing.fallback import ANSWERED_BY
from llm_core.untrusted import check_nesting, load_json

SAVE_FORMAT = "llm-core.conversation/1"


def without_credentials(value: Any) -> Any:
    """``value`` (JSON) without the entries whose name is a credential's, at any depth."""
    if isinstance(value, dict):
        return {k: without_credentials(v) for k, v in value.items() if not is_credential_name(k)}
    if isinstance(value, list):
        return [without_credentials(item) for item in value]
    return value


#: What a saved conversation holds beside its call options: constructor parameters, which the
#: saved ``options`` must not name (``options.messages`` would replace the history).
_NOT_OPTIONS = frozenset(
    {"system", "tools", "model", "max_steps", "tool_retries", "raise_tool_errors", "before_tool_call"}
    | {"checkpoint", "messages", "usage", "tool_calls", "tool_choice", "backend"}
)


def saved_settings(data: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """The constructor arguments of a saved conversation (see :meth:`ConversationState.to_json`).
    Anything that is not such a document raises :class:`InvalidInputError` naming what is wrong."""
    if isinstance(data, str | bytes):
        try:
            saved = load_json(data, what="from_json: the document")
        except InvalidInputError:
            raise
        except ValueError as exc:
            raise InvalidInputError(f"from_json: not JSON ({exc})") from None
    elif isinstance(data, Mapping):
        saved = dict(data)
        check_nesting(saved, what="from_json: the document")
    else:
        raise InvalidInputError(f"from_json takes JSON text or a mapping, not {type(data).__name__}")
    if not isinstance(saved, dict):
        raise InvalidInputError(f"from_json: a saved conversation is a JSON object, not {_kind(saved)}")
    if saved.get("format") != SAVE_FORMAT:
        raise InvalidInputError(f"from_json: not a saved conversation (format {saved.get('format')!r})")
    for name in ("system", "model"):
        if saved.get(name) is not None and not isinstance(saved[name], str):
            raise InvalidInputError(f"from_json: {name} must be a string or null, not {_kind(saved[name])}")
    max_steps = saved.get("max_steps", 10)
    if type(max_steps) is not int or max_steps < 1:
        raise InvalidInputError(f"from_json: max_steps must be a positive integer, not {max_steps!r}")
    options = saved.get("options")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InvalidInputError(f"from_json: options must be an object, not {_kind(options)}")
    named = sorted(set(options) & _NOT_OPTIONS)
    if named:
        raise InvalidInputError(f"from_json: options.{named[0]} is not a call option (it is refused, not applied)")
    if not isinstance(saved.get("messages"), list):
        raise InvalidInputError(f"from_json: messages must be a list, not {_kind(saved.get('messages'))}")
    messages = [_saved_message(index, item) for index, item in enumerate(saved["messages"])]
    usage = saved.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise InvalidInputError(f"from_json: usage must be an object, not {_kind(usage)}")
    try:
        total = Usage.model_validate(usage or {})
    except ValidationError as exc:
        raise InvalidInputError(f"from_json: usage: {validation_summary(exc)}") from None
    return {
        "system": saved.get("system"),
        "model": saved.get("model"),
        "max_steps": max_steps,
        "messages": messages,
        "usage": total,
        "tool_calls": _saved_calls(saved.get("tool_calls")),
        **options,
    }


def _saved_calls(value: Any) -> dict[str, CallRecord]:
    """The records of the last turn's tool calls (absent in documents saved before they were kept)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"from_json: tool_calls must be an object, not {_kind(value)}")
    found = {}
    for call_id, item in value.items():
        if not isinstance(item, dict):
            raise InvalidInputError(f"from_json: tool_calls[{call_id!r}] must be an object, not {_kind(item)}")
        try:
            found[call_id] = CallRecord.model_validate(item)
        except ValidationError as exc:
            raise InvalidInputError(f"from_json: tool_calls[{call_id!r}]: {validation_summary(exc)}") from None
    return found


def _saved_message(index: int, item: Any) -> ChatMessage:
    if not isinstance(item, dict):
        raise InvalidInputError(f"from_json: messages[{index}] must be an object, not {_kind(item)}")
    try:
        message = ChatMessage.model_validate(item)
    except ValidationError as exc:
        raise InvalidInputError(f"from_json: messages[{index}]: {validation_summary(exc)}") from None
    answered = message.metadata.get(ANSWERED_BY)
    if answered is not None and not isinstance(answered, str):
        raise InvalidInputError(f"from_json: messages[{index}].metadata.{ANSWERED_BY} must be a string")
    return message


def _kind(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "an object" if isinstance(value, dict) else type(value).__name__)
