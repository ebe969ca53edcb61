"""``provider.aio``: the async twin of every provider call, same names and arguments.

Each method validates and maps exactly as the sync call does (same functions), then awaits the
SDK's async client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from llm_core.capabilities import (
    DecisionCapable,
    EmbeddingCapable,
    ImageGenerationCapable,
    ImageInput,
    StreamingCapable,
    StructuredOutputCapable,
    ToolCapable,
    VisionCapable,
    async_text_only,
    decode_json,
)
from llm_core.decisions import DecisionResponse, DecisionSubject, Question
from llm_core.errors import InvalidRequestError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.messages import MessageLike, TextPart
from llm_core.provider import BaseProvider
from llm_core.requests import Prompt
from llm_core.responses import CompletionResponse, ConnectionStatus, EmbeddingResponse, ImageResponse, VisionResponse
from llm_core.streaming import StreamEvent
from llm_core.tools import ToolSpec

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation

P = TypeVar("P", bound=BaseProvider)


class AsyncProvider:
    """Async view of a provider (``provider.aio``)."""

    def __init__(self, provider: BaseProvider) -> None:
        self._p = provider

    @property
    def provider(self) -> BaseProvider:
        return self._p

    def _cap(self, iface: type[P], feature: Feature) -> P:
        if not isinstance(self._p, iface):
            raise UnsupportedFeatureError(
                f"{self._p.name} does not support {feature.value}", provider=self._p.identifier
            )
        return self._p

    def conversation(self, **options: Any) -> AsyncConversation:
        """An async conversation (``await conversation.send(...)``); see ``BaseProvider.conversation``."""
        from llm_core.conversation import AsyncConversation, ProviderBackend

        return AsyncConversation(ProviderBackend(self._p), **options)

    async def chat_completion(
        self, messages: Sequence[MessageLike] | str | Prompt, **options: Any
    ) -> CompletionResponse:
        p = self._p
        request = p.build_chat_request(messages, **options)
        return await p._arun("chat", request, p.map_chat_request, p._asend_chat, p.parse_chat_response)

    async def complete(self, prompt: str | Prompt, **options: Any) -> CompletionResponse:
        p = self._p
        request = p.build_chat_request(prompt, feature=Feature.COMPLETION, **options)
        return await p._arun("complete", request, p.map_chat_request, p._asend_chat, p.parse_chat_response)

    async def generate_text(self, prompt: str | Prompt, **options: Any) -> str:
        return (await self.complete(prompt, **options)).content

    async def answer(self, prompt: str | Prompt, **options: Any) -> str:
        return await self.generate_text(prompt, **options)

    async def available_models(self) -> list[str]:
        return await self._p._aexecute("list_models", None, self._p._asend_list_models)

    async def test_connection(self) -> ConnectionStatus:
        import time

        from llm_core.errors import LLMError, ProviderConnectionError

        started = time.perf_counter()
        try:
            models = await self.available_models()
        except LLMError as exc:
            raise ProviderConnectionError(
                f"connection test failed: {exc.message}", provider=self._p.identifier
            ) from exc
        return ConnectionStatus(
            success=True,
            provider=self._p.identifier,
            models=models,
            message=f"connected to {self._p.name}: {len(models)} models available",
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def stream_chat_completion(
        self, messages: Sequence[MessageLike] | str | Prompt, **options: Any
    ) -> AsyncIterator[StreamEvent]:
        p = self._cap(StreamingCapable, Feature.STREAMING)
        request = p.build_chat_request(messages, feature=Feature.STREAMING, **options)
        return p._astream_events(request, p._asend_stream, p.new_stream_parser(request))

    def stream_text(self, prompt: str | Prompt | Sequence[MessageLike], **options: Any) -> AsyncIterator[str]:
        return async_text_only(self.stream_chat_completion(prompt, **options))

    async def chat_completion_with_tools(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> CompletionResponse:
        p = self._cap(ToolCapable, Feature.TOOLS)
        request = p.build_tool_request(messages, tools, **options)
        return await p._arun("chat_with_tools", request, p.map_chat_request, p._asend_chat, p.parse_chat_response)

    async def analyze_image(
        self,
        image: ImageInput | Sequence[ImageInput | TextPart],
        prompt: str = "Describe this image.",
        *,
        mime_type: str | None = None,
        **options: Any,
    ) -> VisionResponse:
        p = self._cap(VisionCapable, Feature.VISION)
        request = p.build_vision_request(image, prompt, mime_type, **options)
        return await p._arun("analyze_image", request, p.map_chat_request, p._asend_chat, p._parse_vision)

    async def generate_json(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any
    ) -> Any:
        p = self._cap(StructuredOutputCapable, Feature.JSON_MODE)
        request = p.build_json_request(prompt, schema, **options)
        response = await p._arun("generate_json", request, p.map_chat_request, p._asend_chat, p.parse_chat_response)
        return decode_json(response, schema, p.identifier)

    async def embeddings(self, input: str | Sequence[str], **options: Any) -> EmbeddingResponse:  # noqa: A002
        p = self._cap(EmbeddingCapable, Feature.EMBEDDINGS)
        request = p.build_embedding_request(input, **options)
        return await p._arun(
            "embeddings", request, p.map_embedding_request, p._asend_embeddings, p.parse_embedding_response
        )

    async def generate_image(self, prompt: str, **options: Any) -> ImageResponse:
        p = self._cap(ImageGenerationCapable, Feature.IMAGE)
        request = p.build_image_request(prompt, **options)
        try:
            return await p._arun("generate_image", request, p.map_image_request, p._asend_image, p.parse_image_response)
        except InvalidRequestError as exc:
            retry = p.retry_image_request(request, exc)
            if retry is None:
                raise
            return await p._arun("generate_image", retry, p.map_image_request, p._asend_image, p.parse_image_response)

    async def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        image = await self.generate_image(prompt, **options)
        return image.data, image.mime_type

    async def decide(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        **options: Any,
    ) -> DecisionResponse:
        p = self._cap(DecisionCapable, Feature.DECISION)
        request = p.build_decision_request(subject, questions, **options)
        if p.native_decisions(request.model):
            return await p._arun("decide", request, p.map_decision_request, p._asend_decision, p._checked)
        chat = p.fallback_chat_request(request)
        response = await p._arun("decide", chat, p.map_chat_request, p._asend_chat, p.parse_chat_response)
        return p.fallback_response(response, request)

    async def submit_batch(self, items: Any, **options: Any) -> Any:
        """``provider.asubmit_batch`` (llm_core.batch, a layer above: imported on use)."""
        from llm_core.batch.capability import BatchCapable

        return await self._cap(BatchCapable, Feature.BATCH).asubmit_batch(items, **options)


__all__ = ["AsyncProvider", "BaseModel"]
