"""What ``provider.aio`` needs of a provider with a capability, as structural types.

The capability interfaces in :mod:`llm_core.capabilities` subclass :class:`BaseProvider`, so the
async view (defined with :class:`BaseProvider`) cannot import them without an import circle.
It checks a provider against these protocols instead: a provider has them exactly when it
inherits the matching interface, which declares and implements every method listed here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from llm_core.decisions import DecisionResponse, DecisionSubject, Question
from llm_core.errors import InvalidRequestError
from llm_core.media import ImageInput
from llm_core.messages import MessageLike, TextPart
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest, Prompt
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, VisionResponse
from llm_core.stream_driver import StreamParser
from llm_core.tools import ToolSpec


@runtime_checkable
class Streams(Protocol):
    def _asend_stream(self, payload: dict[str, Any]) -> Awaitable[AsyncIterator[Any]]: ...

    def new_stream_parser(self, request: ChatRequest) -> StreamParser: ...


@runtime_checkable
class CallsTools(Protocol):
    def build_tool_request(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> ChatRequest: ...


@runtime_checkable
class SeesImages(Protocol):
    def build_vision_request(
        self, image: ImageInput | Sequence[ImageInput | TextPart], prompt: str, mime_type: str | None, **options: Any
    ) -> ChatRequest: ...

    def _parse_vision(self, raw: Any, request: ChatRequest) -> VisionResponse: ...


@runtime_checkable
class AnswersJson(Protocol):
    def build_json_request(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: Any, **options: Any
    ) -> ChatRequest: ...


@runtime_checkable
class Embeds(Protocol):
    def build_embedding_request(self, input: str | Sequence[str], **options: Any) -> EmbeddingRequest: ...  # noqa: A002

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]: ...

    def _asend_embeddings(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse: ...

    def embedding_batches(self, request: EmbeddingRequest) -> list[EmbeddingRequest]: ...

    def merge_embeddings(self, parts: Sequence[EmbeddingResponse]) -> EmbeddingResponse: ...


@runtime_checkable
class MakesImages(Protocol):
    def build_image_request(self, prompt: str, **options: Any) -> ImageRequest: ...

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]: ...

    def _asend_image(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse: ...

    def retry_image_request(self, request: ImageRequest, error: InvalidRequestError) -> ImageRequest | None: ...


@runtime_checkable
class Decides(Protocol):
    def build_decision_request(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        **options: Any,
    ) -> DecisionRequest: ...

    def native_decisions(self, model: str) -> bool: ...

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]: ...

    def _asend_decision(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def _checked(self, raw: Any, request: DecisionRequest) -> DecisionResponse: ...

    def fallback_chat_request(self, request: DecisionRequest) -> ChatRequest: ...

    def fallback_response(self, response: CompletionResponse, request: DecisionRequest) -> DecisionResponse: ...


@runtime_checkable
class SubmitsBatches(Protocol):
    def asubmit_batch(self, items: Any, *, tag: str | None = None) -> Awaitable[Any]: ...
