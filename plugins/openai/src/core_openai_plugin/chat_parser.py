"""The pure response parser of the Chat Completions dialect: a ``ChatCompletion`` (as the SDK
returns it, unvalidated) → :class:`CompletionResponse`.

Reasoning comes in three forms, all made ``thinking``: a ``reasoning_content`` field (DeepSeek,
vLLM, llama.cpp server), a ``reasoning`` field (Ollama, Groq, OpenRouter) and ``<think>…</think>``
blocks inside the content (models served without a reasoning parser), taken out of the content by
:func:`llm_core.thinking.extract_think_tags`. The fields a server wants back in later turns are
kept in the metadata (:data:`~core_openai_plugin.chat_mapper.REASONING_REPLAY`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core_openai_plugin.chat_mapper import REASONING_REPLAY, REPLAYED_FIELDS
from core_openai_plugin.errors import describe
from core_openai_plugin.response_parser import dump, tool_call
from core_openai_plugin.usage import field, usage_from
from llm_core.builtin_tools import BuiltinToolCall, Citation
from llm_core.errors import InvalidResponseError, answer_guard
from llm_core.requests import ChatRequest
from llm_core.responses import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    CompletionResponse,
)
from llm_core.thinking import combine_thinking, extract_think_tags
from llm_core.tools import ToolCall

#: The message fields that carry reasoning text, by the servers that send them.
REASONING_FIELDS = ("reasoning_content", "reasoning")
_FINISH = {
    "stop": FINISH_STOP,
    "length": FINISH_LENGTH,
    "tool_calls": FINISH_TOOL_CALLS,
    "function_call": FINISH_TOOL_CALLS,
    "content_filter": FINISH_CONTENT_FILTER,
}


def finish(reason: object, *, has_calls: bool) -> str:
    """The common finish vocabulary for a ``finish_reason`` (``None`` from some servers' last
    chunk: ``tool_calls`` when calls came, else ``stop``)."""
    if isinstance(reason, str) and reason:
        mapped = _FINISH.get(reason, reason.lower())
        return FINISH_TOOL_CALLS if has_calls and mapped == FINISH_STOP else mapped
    return FINISH_TOOL_CALLS if has_calls else FINISH_STOP


def reasoning_text(message: Any) -> str | None:
    """The reasoning a message (or a delta) carries in a field, ``None`` when it has none."""
    for name in REASONING_FIELDS:
        value = field(message, name)
        if isinstance(value, str) and value:
            return value
    return None


def url_citations(message: Any, content: str) -> list[Citation]:
    """The ``url_citation`` annotations of a search model's message (``{"type": "url_citation",
    "url_citation": {"start_index", "end_index", "title", "url"}}``) as citations of ``content``."""
    found: list[Citation] = []
    for note in field(message, "annotations") or ():
        cited = field(note, "url_citation")
        if field(note, "type") != "url_citation" or cited is None:
            continue
        start, end = field(cited, "start_index"), field(cited, "end_index")
        span = isinstance(start, int) and isinstance(end, int) and end >= start
        found.append(
            Citation(
                tool="web_search",
                url=field(cited, "url"),
                title=field(cited, "title"),
                start=start if span else None,
                end=end if span else None,
                text=content[start:end] if span else None,
            )
        )
    return found


def calls_of(message: Any, service: str, endpoint: str) -> list[ToolCall]:
    calls = field(message, "tool_calls") or []
    if not isinstance(calls, list):
        raise InvalidResponseError(f"{service}'s tool_calls are {describe(calls)}, not a list", provider=endpoint)
    found: list[ToolCall] = []
    for call in calls:
        function = field(call, "function")
        name = field(function, "name")
        if not isinstance(name, str) or not name:
            raise InvalidResponseError(f"{service} sent a tool call without a function name", provider=endpoint)
        found.append(tool_call(str(field(call, "id") or f"call_{len(found)}"), name, field(function, "arguments")))
    return found


def parse_chat_completion(raw: Any, request: ChatRequest, *, endpoint: str, service: str) -> CompletionResponse:
    """A ``ChatCompletion`` → :class:`CompletionResponse`. ``endpoint`` is the provider identifier
    (the answer's ``provider``, named in errors), ``service`` what to call the server in messages.
    Anything that is not a usable answer raises :class:`InvalidResponseError`."""
    return answer_guard(service, endpoint)(_parse)(raw, request, endpoint, service)


def _parse(raw: Any, request: ChatRequest, endpoint: str, service: str) -> CompletionResponse:
    if not isinstance(raw, BaseModel):
        raise InvalidResponseError(f"{service} answered with {describe(raw)}, not a chat completion", provider=endpoint)
    choices = field(raw, "choices")
    if not isinstance(choices, list) or not choices:
        raise InvalidResponseError(f"{service}'s chat completion has no choices", provider=endpoint)
    choice = choices[0]
    message = field(choice, "message")
    if message is None:
        raise InvalidResponseError(f"{service}'s chat completion has no message", provider=endpoint)
    text = field(message, "content")
    if text is not None and not isinstance(text, str):
        raise InvalidResponseError(f"{service}'s message content is {describe(text)}, not text", provider=endpoint)
    content, inline = extract_think_tags(text or "")
    thinking = combine_thinking(reasoning_text(message), inline)
    refusal = field(message, "refusal")
    calls = calls_of(message, service, endpoint)
    reason = finish(field(choice, "finish_reason"), has_calls=bool(calls))
    if not (content or calls or refusal):
        cut = " (cut at max_tokens: raise max_tokens)" if reason == FINISH_LENGTH else ""
        raise InvalidResponseError(
            f"{service}'s answer carries no text, tool call or refusal{cut}", provider=endpoint, raw=str(text or "")
        )
    usage = field(raw, "usage")
    counted = usage_from(usage, service=service, provider=endpoint)
    metadata: dict[str, Any] = {}
    replay = {name: field(message, name) for name in REPLAYED_FIELDS if field(message, name)}
    if replay:
        metadata[REASONING_REPLAY] = replay
    if refusal:
        metadata["refusal"] = refusal
    if usage is not None:
        metadata["raw_usage"] = dump(usage)
    searched = [BuiltinToolCall(tool="web_search", status="completed")] if request.builtin_tools else None
    if searched:
        counted = counted.model_copy(update={"tool_uses": {"web_search": 1}})
    return CompletionResponse(
        content=content or (refusal if isinstance(refusal, str) and not calls else ""),
        citations=url_citations(message, content) or None,
        builtin_tool_calls=searched,
        model=field(raw, "model") or request.model,
        provider=endpoint,
        usage=counted,
        response_id=field(raw, "id"),
        finish_reason=FINISH_CONTENT_FILTER if refusal and not content else reason,
        tool_calls=calls or None,
        thinking=thinking,
        metadata=metadata,
    )
