"""Stream events: ``TOKEN*`` then ``METADATA`` then ``END``, or ``TOKEN*``,
``ERROR``, ``END`` on failure. ``END`` is always last."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from llm_core.builtin_tools import BuiltinToolCall, Citation
from llm_core.errors import LLMError
from llm_core.responses import Usage
from llm_core.tools import ToolCall


class StreamEventType(StrEnum):
    TOKEN = "TOKEN"  # noqa: S105 - an event type, not a password
    METADATA = "METADATA"
    ERROR = "ERROR"
    END = "END"
    # between the model turns of a conversation's tool loop (llm_core.conversation)
    TOOL_CALL = "TOOL_CALL"
    TOOL_RESULT = "TOOL_RESULT"
    TOOL_APPROVAL = "TOOL_APPROVAL"  # a call waits for chat.approve / chat.deny


class CallContext(StrEnum):
    """Why a call is made; picks the token-type pair of its stream."""

    AGENT_THOUGHT = "AGENT_THOUGHT"
    FINAL_SYNTHESIS = "FINAL_SYNTHESIS"


class TokenType(StrEnum):
    LLM_THINKING = "LLM_THINKING"
    LLM_RESPONSE = "LLM_RESPONSE"
    AGENT_THOUGHT_LLM_THINKING = "AGENT_THOUGHT_LLM_THINKING"
    AGENT_THOUGHT_LLM_RESPONSE = "AGENT_THOUGHT_LLM_RESPONSE"
    FINAL_SYNTHESIS_LLM_THINKING = "FINAL_SYNTHESIS_LLM_THINKING"
    FINAL_SYNTHESIS_LLM_RESPONSE = "FINAL_SYNTHESIS_LLM_RESPONSE"

    @property
    def is_thinking(self) -> bool:
        return self.value.endswith("_THINKING")

    @classmethod
    def for_chunk(cls, *, thinking: bool, context: CallContext | None = None) -> TokenType:
        """The token type of a chunk in a call made with ``context``."""
        prefix = f"{context.value}_" if context is not None else ""
        return cls(f"{prefix}LLM_{'THINKING' if thinking else 'RESPONSE'}")


class StreamMetadata(BaseModel):
    """What a stream's METADATA event carries: its counts (as :class:`~llm_core.responses.Usage`
    names them: ``input_tokens`` is ``prompt_tokens``, ``output_tokens`` ``completion_tokens``),
    timings, stop reason and the provider's ``response_id``."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None
    thinking_tokens: int | None = None
    #: Prompt tokens served from the provider's cache (part of ``input_tokens``).
    cached_tokens: int | None = None
    #: US dollars at list prices, as :attr:`llm_core.responses.Usage.cost`.
    cost: Decimal | None = None
    time_to_first_token_ms: float | None = None
    total_time_ms: float | None = None
    stop_reason: str | None = None
    model: str | None = None
    provider: str | None = None
    #: The provider's id of the answer (OpenAI ``resp_…``, Gemini ``responseId``).
    response_id: str | None = None
    raw_usage: dict[str, Any] | None = None
    tool_calls: list[ToolCall] | None = None
    #: What built-in tools did, as in :class:`~llm_core.responses.CompletionResponse`.
    citations: list[Citation] | None = None
    builtin_tool_calls: list[BuiltinToolCall] | None = None
    #: Billed uses of built-in tools, as :attr:`~llm_core.responses.Usage.tool_uses`.
    tool_uses: dict[str, int] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def usage(self) -> Usage:
        """The counts and cost as a :class:`~llm_core.responses.Usage` (missing counts are 0)."""
        return Usage(
            prompt_tokens=self.input_tokens or 0,
            completion_tokens=self.output_tokens or 0,
            thinking_tokens=self.thinking_tokens,
            cached_tokens=self.cached_tokens,
            tool_uses=self.tool_uses,
            cost=self.cost,
        )


class StreamEvent(BaseModel):
    """One event of a stream. ``text``/``token_type`` for TOKEN, ``metadata`` for METADATA,
    ``error`` for ERROR. In a conversation's stream, ``tool_call`` for TOOL_CALL and TOOL_RESULT;
    a TOOL_RESULT has the output sent to the model in ``text`` and, when the tool failed or was
    denied, the failure in ``error``; a TOOL_APPROVAL names a call that waits for approval."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    type: StreamEventType
    text: str | None = None
    token_type: TokenType | None = None
    metadata: StreamMetadata | None = None
    error: LLMError | None = None
    tool_call: ToolCall | None = None

    @classmethod
    def token(cls, text: str, token_type: TokenType) -> StreamEvent:
        # validated: pydantic-core builds a model faster than model_construct's Python loop
        return cls(type=StreamEventType.TOKEN, text=text, token_type=token_type)

    @classmethod
    def meta(cls, metadata: StreamMetadata) -> StreamEvent:
        return cls(type=StreamEventType.METADATA, metadata=metadata)

    @classmethod
    def failure(cls, error: LLMError) -> StreamEvent:
        return cls(type=StreamEventType.ERROR, error=error)

    @classmethod
    def end(cls) -> StreamEvent:
        return _END

    @property
    def is_thinking(self) -> bool:
        return self.token_type is not None and self.token_type.is_thinking


_END = StreamEvent.model_construct(type=StreamEventType.END)


def _text_of(event: StreamEvent) -> str | None:
    """The response text of a TOKEN event (None for thinking and empty chunks); raises the
    error of an ERROR event."""
    if event.type is StreamEventType.TOKEN:
        return event.text if event.text and not event.is_thinking else None
    if event.type is StreamEventType.ERROR and event.error is not None:
        raise event.error
    return None


def text_only(events: Iterator[StreamEvent]) -> Iterator[str]:
    """``stream_text`` over a stream of events: response text only; a stream error is raised.
    Closing it closes ``events`` at once."""
    try:
        for event in events:
            text = _text_of(event)
            if text is not None:
                yield text
    finally:
        close_stream(events)


async def async_text_only(events: AsyncIterator[StreamEvent]) -> AsyncIterator[str]:
    """The async twin of :func:`text_only`."""
    try:
        async for event in events:
            text = _text_of(event)
            if text is not None:
                yield text
    finally:
        await aclose_stream(events)


def close_stream(events: Iterator[StreamEvent]) -> None:
    """Close a stream of events now (a generator's ``close``), releasing what it holds."""
    close = getattr(events, "close", None)
    if close is not None:
        close()


async def aclose_stream(events: AsyncIterator[StreamEvent]) -> None:
    """The async twin of :func:`close_stream` (an async generator's ``aclose``)."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()
