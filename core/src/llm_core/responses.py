"""Typed results of provider calls."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_core.builtin_tools import BuiltinToolCall, Citation
from llm_core.errors import InvalidInputError, InvalidResponseError
from llm_core.tools import ToolCall

if TYPE_CHECKING:
    from llm_core.messages import ChatMessage

FINISH_STOP = "stop"
FINISH_LENGTH = "length"
FINISH_CONTENT_FILTER = "content_filter"
FINISH_TOOL_CALLS = "tool_calls"


class Usage(BaseModel):
    """Token counts. ``thinking_tokens`` counts reasoning/thought tokens where reported;
    ``cached_tokens`` the prompt tokens served from the provider's cache (part of
    ``prompt_tokens``; ``None`` when the provider did not say).

    ``tool_uses`` counts the billed uses of built-in tools by tool (``{"web_search": 2}``), in
    the unit the provider's price list bills them by (see docs/builtin-tools.md).

    ``cost`` is what the call cost in US dollars at the model's list prices, tool fees included
    (see docs/observability.md), ``None`` when a price or a count it needs is unknown.
    """

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    thinking_tokens: int | None = None
    cached_tokens: int | None = None
    tool_uses: dict[str, int] | None = None
    cost: Decimal | None = None

    def model_post_init(self, context: Any, /) -> None:
        """A missing total is the sum of the counts. Run once per validation, like an ``after``
        model validator, but not again when a validated ``Usage`` is put into a response."""
        if not self.total_tokens and (self.prompt_tokens or self.completion_tokens or self.thinking_tokens):
            object.__setattr__(
                self,
                "total_tokens",
                self.prompt_tokens + self.completion_tokens + (self.thinking_tokens or 0),
            )


class CompletionResponse(BaseModel):
    """The result of a chat or completion call. ``response_id`` is the provider's id of the
    answer (OpenAI ``resp_…``, Gemini ``responseId``), for support requests and log lookups.
    ``citations`` and ``builtin_tool_calls`` say what built-in tools found and did (see
    :mod:`llm_core.builtin_tools`)."""

    content: str
    model: str
    provider: str
    usage: Usage = Field(default_factory=Usage)
    response_id: str | None = None
    finish_reason: str = FINISH_STOP
    tool_calls: list[ToolCall] | None = None
    thinking: str | None = None
    citations: list[Citation] | None = None
    builtin_tool_calls: list[BuiltinToolCall] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_truncated(self) -> bool:
        return self.finish_reason == FINISH_LENGTH

    @property
    def is_filtered(self) -> bool:
        return self.finish_reason == FINISH_CONTENT_FILTER

    @property
    def is_complete(self) -> bool:
        return self.finish_reason == FINISH_STOP

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)

    @property
    def has_thinking(self) -> bool:
        return bool(self.thinking and self.thinking.strip())

    def to_message(self) -> ChatMessage:
        """This answer as the assistant turn of a conversation.

        Tool calls and ``metadata`` are carried over, so that what a provider must replay on the
        next turn (Gemini thought signatures, OpenAI encrypted reasoning items) is sent back.
        """
        from llm_core.messages import ChatMessage, Role

        return ChatMessage(
            role=Role.ASSISTANT, content=self.content, tool_calls=self.tool_calls, metadata=dict(self.metadata)
        )


class VisionResponse(CompletionResponse):
    """The result of :meth:`analyze_image`."""


class EmbeddingResponse(BaseModel):
    vectors: list[list[float]]
    model: str
    provider: str
    usage: Usage = Field(default_factory=Usage)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def dimensions(self) -> int:
        return len(self.vectors[0]) if self.vectors else 0

    @staticmethod
    def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
        """Cosine similarity; vectors of different length are refused."""
        if len(a) != len(b):
            raise InvalidInputError(f"cannot compare vectors of different length ({len(a)} and {len(b)})")
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return dot / norm if norm else 0.0

    def similarity(self, i: int, j: int) -> float:
        return self.cosine_similarity(self.vectors[i], self.vectors[j])


class ImageResponse(BaseModel):
    """A generated image. In JSON, ``data`` is base64 text; ``response_id`` is the provider's id
    of the answer where it sends one (Gemini's image models)."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    data: bytes
    mime_type: str
    model: str
    provider: str
    revised_prompt: str | None = None
    usage: Usage | None = None
    response_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __repr__(self) -> str:
        return f"ImageResponse({len(self.data)} bytes, mime_type={self.mime_type!r}, model={self.model!r})"

    __str__ = __repr__


class TokenCount(BaseModel):
    """The result of :meth:`count_tokens`: the input tokens a request would use, as the
    provider counts them (``cached_tokens`` where it says how many come from a cache)."""

    input_tokens: int = Field(ge=0)
    model: str
    provider: str
    cached_tokens: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ConnectionStatus(BaseModel):
    """The result of :meth:`test_connection`."""

    success: bool
    message: str
    provider: str
    models: list[str] = Field(default_factory=list)
    latency_ms: float | None = None


def decode_json(response: CompletionResponse, schema: Any, provider: str) -> Any:
    """Decode (and with a Pydantic model, validate) a JSON answer; raw text kept on failure."""
    if response.is_filtered:
        raise InvalidResponseError(
            "the model refused or was filtered instead of answering JSON", provider=provider, raw=response.content
        )
    text = response.content
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_validate_json(text)
        return json.loads(text)
    except (ValidationError, ValueError) as exc:
        hint = " (the answer was cut off: raise max_tokens)" if response.is_truncated else ""
        raise InvalidResponseError(
            f"the model's answer is not valid JSON for the schema{hint}: {exc}", provider=provider, raw=text
        ) from exc
