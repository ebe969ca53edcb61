"""The provider base class that plugins subclass, and its async view ``provider.aio``.

A plugin writes, per operation, a pure request mapper (``map_*``), the SDK call in sync and
async form (``_send_*`` / ``_asend_*``), a pure response parser (``parse_*``) and one error
mapper (``map_error``). Everything else lives in the core once and serves both the sync methods
and their :attr:`BaseProvider.aio` twins: settings and features (:mod:`llm_core.settings`),
request building (:mod:`llm_core.chat_requests`), retries and observers
(:mod:`llm_core.execution`) and the streaming driver (:mod:`llm_core.stream_driver`).
See docs/architecture.md for how a call flows through them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llm_core.capability_hooks import (
    AnswersJson,
    CallsTools,
    Decides,
    Embeds,
    MakesImages,
    SeesImages,
    Streams,
    SubmitsBatches,
)
from llm_core.chat_requests import ChatRequestBuilding
from llm_core.decisions import DecisionResponse, DecisionSubject, Question
from llm_core.errors import InvalidRequestError, LLMError, ProviderConnectionError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.media import ImageInput
from llm_core.messages import MessageLike, TextPart
from llm_core.requests import ChatRequest, Prompt
from llm_core.responses import (
    CompletionResponse,
    ConnectionStatus,
    EmbeddingResponse,
    ImageResponse,
    VisionResponse,
    decode_json,
)
from llm_core.stream_driver import StreamDriver, StreamParser
from llm_core.streaming import StreamEvent, async_text_only
from llm_core.tools import ToolSpec

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation, Conversation

__all__ = ["AsyncProvider", "BaseProvider", "StreamParser"]


class BaseProvider(StreamDriver, ChatRequestBuilding):
    """Common behaviour of every provider. Subclass it together with capability mixins."""

    #: The async view, built on first use of :attr:`aio`.
    _aio: AsyncProvider | None = None

    @property
    def aio(self) -> AsyncProvider:
        """The async twins of every call: ``await provider.aio.chat_completion(...)``."""
        if self._aio is None:
            self._aio = AsyncProvider(self)
        return self._aio

    # -- hooks every plugin implements ---------------------------------------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Any]:
        """An awaitable of the SDK's answer: an ``async def``, or a plain ``def`` that returns
        the SDK's own coroutine."""
        raise NotImplementedError

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        raise NotImplementedError

    def _send_list_models(self) -> list[str]:
        raise NotImplementedError

    async def _asend_list_models(self) -> list[str]:
        raise NotImplementedError

    # -- public calls every provider has --------------------------------------------------

    def chat_completion(self, messages: Sequence[MessageLike] | str | Prompt, **options: Any) -> CompletionResponse:
        """Chat: messages (typed, plain mappings, a string or a Prompt) → response.

        Options: ``model``, ``temperature``, ``max_tokens``, ``system``, ``thinking``,
        ``call_context``, ``top_p``, ``stop`` and provider-specific extras.
        """
        request = self.build_chat_request(messages, **options)
        return self._run("chat", request, self.map_chat_request, self._send_chat, self.parse_chat_response)

    def complete(self, prompt: str | Prompt, **options: Any) -> CompletionResponse:
        """Simple completion from one prompt."""
        request = self.build_chat_request(prompt, feature=Feature.COMPLETION, **options)
        return self._run("complete", request, self.map_chat_request, self._send_chat, self.parse_chat_response)

    def generate_text(self, prompt: str | Prompt, **options: Any) -> str:
        """The generated text for ``prompt``."""
        return self.complete(prompt, **options).content

    def answer(self, prompt: str | Prompt, **options: Any) -> str:
        """Same as :meth:`generate_text` (kept for dispatcher compatibility)."""
        return self.generate_text(prompt, **options)

    def conversation(self, **options: Any) -> Conversation:
        """A conversation with automatic tool calls (``system``, ``tools``, ``model``,
        ``max_steps`` and call options; see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, ProviderBackend

        return Conversation(ProviderBackend(self), **options)

    def available_models(self) -> list[str]:
        """The live model list from the provider (``models/`` prefixes stripped)."""
        return self._execute("list_models", None, self._send_list_models)

    def test_connection(self) -> ConnectionStatus:
        """List models to prove key and network work; failures raise a connection error."""
        started = time.perf_counter()
        try:
            models = self.available_models()
        except LLMError as exc:
            raise self._connection_failed(exc) from exc
        return self._connected(models, started)

    def _connection_failed(self, error: LLMError) -> ProviderConnectionError:
        return ProviderConnectionError(f"connection test failed: {error.message}", provider=self.identifier)

    def _connected(self, models: list[str], started: float) -> ConnectionStatus:
        return ConnectionStatus(
            success=True,
            provider=self.identifier,
            models=models,
            message=f"connected to {self.name}: {len(models)} models available",
            latency_ms=(time.perf_counter() - started) * 1000,
        )


class AsyncProvider:
    """Async view of a provider (``provider.aio``): the same calls, names and arguments.

    Each method validates and maps exactly as the sync call does (same functions), then awaits
    the SDK's async client.
    """

    def __init__(self, provider: BaseProvider) -> None:
        self._p = provider

    @property
    def provider(self) -> BaseProvider:
        return self._p

    def _unsupported(self, feature: Feature) -> UnsupportedFeatureError:
        """The error for a call of a capability the provider's class does not implement."""
        return UnsupportedFeatureError(f"{self._p.name} does not support {feature.value}", provider=self._p.identifier)

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
        started = time.perf_counter()
        try:
            models = await self.available_models()
        except LLMError as exc:
            raise self._p._connection_failed(exc) from exc
        return self._p._connected(models, started)

    def stream_chat_completion(
        self, messages: Sequence[MessageLike] | str | Prompt, **options: Any
    ) -> AsyncIterator[StreamEvent]:
        p = self._p
        if not isinstance(p, Streams):
            raise self._unsupported(Feature.STREAMING)
        request = p.build_chat_request(messages, feature=Feature.STREAMING, **options)
        payload = p.map_chat_request(request)
        return p._astream_events(request, payload, p._asend_stream, p.new_stream_parser(request))

    def stream_text(self, prompt: str | Prompt | Sequence[MessageLike], **options: Any) -> AsyncIterator[str]:
        return async_text_only(self.stream_chat_completion(prompt, **options))

    async def chat_completion_with_tools(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> CompletionResponse:
        p = self._p
        if not isinstance(p, CallsTools):
            raise self._unsupported(Feature.TOOLS)
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
        p = self._p
        if not isinstance(p, SeesImages):
            raise self._unsupported(Feature.VISION)
        request = p.build_vision_request(image, prompt, mime_type, **options)
        return await p._arun("analyze_image", request, p.map_chat_request, p._asend_chat, p._parse_vision)

    async def generate_json(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any
    ) -> Any:
        p = self._p
        if not isinstance(p, AnswersJson):
            raise self._unsupported(Feature.JSON_MODE)
        request = p.build_json_request(prompt, schema, **options)
        response = await p._arun("generate_json", request, p.map_chat_request, p._asend_chat, p.parse_chat_response)
        return decode_json(response, schema, p.identifier)

    async def embeddings(self, input: str | Sequence[str], **options: Any) -> EmbeddingResponse:  # noqa: A002
        p = self._p
        if not isinstance(p, Embeds):
            raise self._unsupported(Feature.EMBEDDINGS)
        request = p.build_embedding_request(input, **options)
        parts = [
            await p._arun("embeddings", batch, p.map_embedding_request, p._asend_embeddings, p.parse_embedding_response)
            for batch in p.embedding_batches(request)
        ]
        return p.merge_embeddings(parts)

    async def generate_image(self, prompt: str, **options: Any) -> ImageResponse:
        p = self._p
        if not isinstance(p, MakesImages):
            raise self._unsupported(Feature.IMAGE)
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
        p = self._p
        if not isinstance(p, Decides):
            raise self._unsupported(Feature.DECISION)
        request = p.build_decision_request(subject, questions, **options)
        if p.native_decisions(request.model):
            return await p._arun("decide", request, p.map_decision_request, p._asend_decision, p._checked)
        chat = p.fallback_chat_request(request)
        response = await p._arun("decide", chat, p.map_chat_request, p._asend_chat, p.parse_chat_response)
        return p.fallback_response(response, request)

    async def submit_batch(self, items: Any, **options: Any) -> Any:
        """``provider.asubmit_batch`` (see :mod:`llm_core.batch`)."""
        p = self._p
        if not isinstance(p, SubmitsBatches):
            raise self._unsupported(Feature.BATCH)
        return await p.asubmit_batch(items, **options)
