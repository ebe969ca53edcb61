"""The history of a conversation and how each provider gets it.

Every assistant turn keeps the replay data of the provider that answered it (Gemini parts and
thought signatures, OpenAI reasoning items) in ``metadata``, with ``metadata["answered_by"]``
naming that provider. A provider is sent its own replay data only: turns another provider
answered go to it as plain text and tool calls (their data stays in the history, so the
conversation can go back).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llm_core.builtin_tools import features_of_call
from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart, normalize_messages
from llm_core.responses import CompletionResponse, Usage
from llm_core.routing.fallback import ANSWERED_BY
from llm_core.streaming import StreamMetadata
from llm_core.tools import ToolCall

UserInput = str | ChatMessage | Sequence[TextPart | ImagePart | DocumentPart | str]


def user_turn(message: UserInput) -> ChatMessage:
    """The user turn for ``send(message)``; blank text and non-user messages are refused."""
    if isinstance(message, ChatMessage):
        if message.role is not Role.USER:
            raise InvalidInputError(f"send() takes a user message, not a {message.role.value} message")
        turn = message
    elif isinstance(message, str):
        turn = normalize_messages(message)[0]
    elif isinstance(message, Sequence):
        turn = ChatMessage.user(list(message))
    else:
        raise InvalidInputError(
            f"message must be text, a user ChatMessage or a list of parts, not {type(message).__name__}"
        )
    if not turn.parts or not any(not isinstance(p, TextPart) or p.text.strip() for p in turn.parts):
        raise InvalidInputError("the message is empty: give some text to send")
    return turn


def assistant_turn(response: CompletionResponse) -> ChatMessage:
    """The assistant turn of ``response``, its replay data tagged with who answered."""
    metadata = dict(response.metadata)
    metadata[ANSWERED_BY] = metadata.get(ANSWERED_BY) or response.provider
    return ChatMessage(role=Role.ASSISTANT, content=response.content, tool_calls=response.tool_calls, metadata=metadata)


def for_provider(messages: Iterable[ChatMessage], identifier: str) -> list[ChatMessage]:
    """The history as ``identifier`` is sent it: another provider's replay data left out."""
    result: list[ChatMessage] = []
    for message in messages:
        answered = message.metadata.get(ANSWERED_BY) if message.role is Role.ASSISTANT else None
        if answered is not None and answered != identifier:
            message = message.model_copy(update={"metadata": {ANSWERED_BY: answered}})
        result.append(message)
    return result


def unanswered_calls(messages: Sequence[ChatMessage]) -> list[ToolCall]:
    """Tool calls of the last assistant turn that have no tool result after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.ASSISTANT:
            answered = {m.tool_call_id for m in messages[index + 1 :] if m.role is Role.TOOL}
            return [call for call in message.tool_calls or () if call.id not in answered]
        if message.role is not Role.TOOL:
            return []
    return []


def needed_features(messages: Iterable[ChatMessage], *, tools: bool, options: Mapping[str, Any]) -> set[Feature]:
    """What a provider must offer to continue this conversation: tools when it has any,
    vision/documents for image/document parts in the history, thinking and built-in tools when
    asked for."""
    needed = {Feature.TOOLS} if tools else {Feature.CHAT}
    needed |= features_of_call((), options)
    thinking = options.get("thinking")
    if thinking is not None and thinking is not False:
        needed.add(Feature.THINKING)
    for message in messages:
        for part in message.parts if not isinstance(message.content, str) else ():
            if isinstance(part, ImagePart):
                needed.add(Feature.VISION)
            elif isinstance(part, DocumentPart):
                needed.add(Feature.DOCUMENTS)
    return needed


def add_usage(total: Usage, more: Usage) -> Usage:
    thinking = _sum_reported(total.thinking_tokens, more.thinking_tokens)
    # a conversation's cost is known while every turn's is (the first turn starts from an empty Usage)
    empty = not (total.prompt_tokens or total.completion_tokens or total.total_tokens)
    cost = more.cost
    if not empty:
        cost = total.cost + more.cost if total.cost is not None and more.cost is not None else None
    return Usage(
        prompt_tokens=total.prompt_tokens + more.prompt_tokens,
        completion_tokens=total.completion_tokens + more.completion_tokens,
        total_tokens=total.total_tokens + more.total_tokens,
        thinking_tokens=thinking,
        cached_tokens=_sum_reported(total.cached_tokens, more.cached_tokens),
        cost=cost,
    )


def _sum_reported(a: int | None, b: int | None) -> int | None:
    """The sum of two optional counts; ``None`` while neither turn reported one."""
    return None if a is None and b is None else (a or 0) + (b or 0)


def streamed_response(text: str, thinking: str, meta: StreamMetadata, provider: str) -> CompletionResponse:
    """The response a streamed model turn amounts to (text and thinking joined from its
    tokens; usage, stop reason, tool calls and replay data from its METADATA)."""
    return CompletionResponse(
        content=text,
        thinking=thinking or None,
        model=meta.model or "",
        provider=meta.provider or provider,
        usage=meta.usage,
        response_id=meta.response_id,
        finish_reason=meta.stop_reason or ("tool_calls" if meta.tool_calls else "stop"),
        tool_calls=meta.tool_calls,
        metadata=dict(meta.extra),
    )
