"""Token counts of an OpenAI answer (Responses, Chat Completions, compatible servers) → :class:`Usage`.

The SDK builds answers without validating them, so a usage of the wrong type (a list, a count
that is an object or text) reaches this module as sent: it is an invalid response, never a zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from core_openai_plugin.errors import describe
from llm_core.errors import InvalidResponseError
from llm_core.responses import Usage

PROVIDER = "openai"


def usage_from(usage: Any, *, service: str = "OpenAI", provider: str = PROVIDER) -> Usage:
    """OpenAI usage → :class:`Usage` (Responses, Chat Completions and compatible servers).

    ``completion_tokens`` counts visible output only: OpenAI's ``output_tokens`` (Chat Completions:
    ``completion_tokens``) include the reasoning tokens (``…_tokens_details.reasoning_tokens``),
    which go to ``thinking_tokens``. ``cached_tokens`` is
    ``input_tokens_details.cached_tokens`` (``prompt_tokens_details`` on Chat Completions), part
    of the input count as OpenAI reports it. ``service`` and ``provider`` name the sender in errors.
    """
    if usage is None:
        return Usage()
    if not isinstance(usage, BaseModel | Mapping):  # the SDK keeps a field of the wrong type as sent
        raise InvalidResponseError(f"{service}'s usage is {describe(usage)}, not an object", provider=provider)
    sender = (service, provider)
    prompt = _count(usage, "input_tokens", sender) or _count(usage, "prompt_tokens", sender) or 0
    output = _count(usage, "output_tokens", sender) or _count(usage, "completion_tokens", sender) or 0
    outputs = field(usage, "output_tokens_details") or field(usage, "completion_tokens_details")
    thinking = _detail(outputs, "reasoning_tokens", sender)
    inputs = field(usage, "input_tokens_details") or field(usage, "prompt_tokens_details")
    total = _count(usage, "total_tokens", sender) or prompt + output
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=output - (thinking or 0),
        total_tokens=total,
        thinking_tokens=thinking,
        cached_tokens=_detail(inputs, "cached_tokens", sender),
    )


def field(obj: Any, name: str) -> Any:
    """A field of an SDK object, including one the SDK does not declare (servers add their own:
    ``reasoning_content``), or of a plain dict (a nested object the SDK left unvalidated);
    ``None`` when absent. Read by name, never by a failed attribute lookup (an exception per
    missing field, for every stream chunk)."""
    if isinstance(obj, BaseModel | Mapping):
        return fields(obj).get(name)
    return getattr(obj, name, None)


def fields(obj: Any) -> Mapping[str, Any]:
    """Every field of an SDK object at once, declared and undeclared (:func:`field` reads one of
    them), for an object read field after field such as a stream chunk; a mapping as it is;
    ``{}`` for anything without fields."""
    if isinstance(obj, BaseModel):  # declared fields are its attributes, the others its extras
        extra = obj.model_extra
        return {**vars(obj), **extra} if extra else vars(obj)
    if isinstance(obj, Mapping):
        return obj
    return vars(obj) if hasattr(obj, "__dict__") else {}


def _count(obj: Any, name: str, sender: tuple[str, str] = ("OpenAI", PROVIDER)) -> int | None:
    """A token count of a usage object: a whole number, ``None`` when it is not reported; anything
    else (an object, a list, text) is an answer the usage cannot be read from."""
    value = field(obj, name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        service, provider = sender
        raise InvalidResponseError(
            f"{service}'s usage {name} is {describe(value)}, not a token count", provider=provider
        )
    return value


def _detail(details: Any, name: str, sender: tuple[str, str] = ("OpenAI", PROVIDER)) -> int | None:
    """A count of a usage details object, ``None`` when it is not reported."""
    if details is None:
        return None
    if not isinstance(details, BaseModel | Mapping):
        raise InvalidResponseError(
            f"{sender[0]}'s usage details holding {name} are {describe(details)}, not an object", provider=sender[1]
        )
    return _count(details, name, sender)
