"""Fallback routing: a provider-shaped object that moves to the next capable provider when a
call fails in a way retries could not cure (rate limit, server error, timeout, connection)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from llm_core import observers
from llm_core.candidates import Candidate, no_match
from llm_core.capabilities import (
    DecisionCapable,
    EmbeddingCapable,
    ImageGenerationCapable,
    StreamingCapable,
    StructuredOutputCapable,
    ToolCapable,
    VisionCapable,
)
from llm_core.config import hide_secrets
from llm_core.decisions import DecisionResponse
from llm_core.errors import (
    ConfigurationError,
    FallbackExhaustedError,
    LLMError,
    PluginLoadError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature, parse_features
from llm_core.provider import BaseProvider
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse
from llm_core.specs import ProviderSpec
from llm_core.streaming import StreamEvent, StreamEventType, aclose_stream, async_text_only, close_stream, text_only

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation, Conversation

T = TypeVar("T")
IfaceT = TypeVar("IfaceT")


class ProviderSource(Protocol):
    """What a router needs of a registry (:class:`llm_core.registry.Registry` is one)."""

    def providers(self) -> list[ProviderSpec]: ...

    def candidates(
        self, *features: Feature | str, prefer: Sequence[str] | str | None = None, model: str | None = None
    ) -> list[Candidate]: ...

    def get(self, identifier: str, **config: Any) -> BaseProvider: ...


def _iface(provider: BaseProvider, interface: type[IfaceT]) -> IfaceT:
    """The provider as ``interface``; candidates were chosen by feature, so this holds unless a
    plugin's spec and class disagree."""
    if not isinstance(provider, interface):
        raise UnsupportedFeatureError(
            f"{provider.name} does not implement {getattr(interface, '__name__', interface)}",
            provider=provider.identifier,
        )
    return provider


#: Extra features a call needs beyond the router's own.
_CALL_FEATURES: dict[str, frozenset[Feature]] = {
    "chat_completion": frozenset({Feature.CHAT}),
    "complete": frozenset({Feature.COMPLETION}),
    "generate_text": frozenset({Feature.COMPLETION}),
    "answer": frozenset({Feature.COMPLETION}),
    "stream_chat_completion": frozenset({Feature.STREAMING}),
    "stream_text": frozenset({Feature.STREAMING}),
    "chat_completion_with_tools": frozenset({Feature.TOOLS}),
    "analyze_image": frozenset({Feature.VISION}),
    "generate_json": frozenset({Feature.JSON_MODE}),
    "embeddings": frozenset({Feature.EMBEDDINGS}),
    "generate_image_bytes": frozenset({Feature.IMAGE}),
    "generate_image": frozenset({Feature.IMAGE}),
    "decide": frozenset({Feature.DECISION}),
}


_RESPONSE_TYPES = (CompletionResponse, EmbeddingResponse, ImageResponse, DecisionResponse)


def should_fall_back(error: LLMError) -> bool:
    """Fall back on transient failures only; a bad request would fail everywhere."""
    return error.fallback


class Router:
    """Same call surface as a provider (sync and ``router.aio``). Each response names the
    provider that answered (``response.provider``) and the ones that failed before it
    (``response.metadata["fallback_from"]``); ``last_provider`` holds it too."""

    def __init__(
        self,
        registry: ProviderSource,
        features: Iterable[Feature | str],
        *,
        prefer: Sequence[str] | str | None = None,
        config: dict[str, Any] | None = None,
        fall_back: Callable[[LLMError], bool] = should_fall_back,
    ) -> None:
        self.registry = registry
        self.features = parse_features(features)
        self.prefer = prefer
        self.config = hide_secrets(config or {})  # per-provider settings, keys as Secret
        self.fall_back = fall_back
        self.last_provider: str | None = None
        self._built: dict[str, BaseProvider] = {}
        self._lock = threading.Lock()
        self.aio = AsyncRouter(self)

    def candidates(self, operation: str) -> list[Candidate]:
        wanted = self.features | _CALL_FEATURES.get(operation, frozenset())
        found = self.registry.candidates(*wanted, prefer=self.prefer)
        if not found:
            raise no_match(self.registry.providers(), wanted, None)
        return found

    def _provider(self, candidate: Candidate) -> BaseProvider:
        """The candidate's provider, built once per router (thread-safe)."""
        built = self._built.get(candidate.identifier)
        if built is not None:
            return built
        with self._lock:
            built = self._built.get(candidate.identifier)
            if built is None:
                config = dict(self.config.get(candidate.identifier, {}))
                if candidate.model and candidate.model != candidate.spec.default_model:
                    config.setdefault("model", candidate.model)
                built = self.registry.get(candidate.identifier, **config)
                self._built[candidate.identifier] = built
            return built

    def _can_skip(self, error: LLMError) -> bool:
        """Whether the next candidate may serve after ``error``: the provider cannot be built
        (no key, a broken plugin) or failed in a way retries did not cure."""
        return isinstance(error, ConfigurationError | PluginLoadError) or self.fall_back(error)

    def _stream_step(
        self, identifier: str, event: StreamEvent, delivered: bool, errors: dict[str, LLMError]
    ) -> StreamEvent | None:
        """What a router stream passes on for ``event``: ``None`` to move to the next candidate
        (a curable failure before any token), else the event (METADATA names the fallbacks)."""
        failed = event.error if event.type is StreamEventType.ERROR and not delivered else None
        if failed is not None and self.fall_back(failed):
            errors[identifier] = failed
            return None
        if event.type is StreamEventType.METADATA and event.metadata is not None:
            self.last_provider = identifier
            extra = {**event.metadata.extra, "fallback_from": list(errors)}
            return StreamEvent.meta(event.metadata.model_copy(update={"extra": extra}))
        return event

    def _call(self, operation: str, invoke: Callable[[BaseProvider], T]) -> T:
        errors: dict[str, LLMError] = {}
        for candidate in self.candidates(operation):
            try:
                result = invoke(self._provider(candidate))
            except LLMError as exc:
                if not self._can_skip(exc):
                    raise
                errors[candidate.identifier] = exc
                continue
            return self._answered(candidate.identifier, result, errors)
        raise FallbackExhaustedError(errors)

    def _answered(self, identifier: str, result: T, errors: dict[str, LLMError]) -> T:
        self.last_provider = identifier
        metadata = getattr(result, "metadata", None) if isinstance(result, _RESPONSE_TYPES) else None
        if isinstance(metadata, dict):
            metadata["answered_by"] = identifier
            metadata["fallback_from"] = list(errors)
        if errors:
            observers.emit(
                "llm_core_after_response",
                {
                    "provider": identifier,
                    "operation": "fallback",
                    "fallback_from": list(errors),
                    "model": getattr(result, "model", None),
                    "usage": None,
                    "latency_ms": 0.0,
                    "attempts": len(errors) + 1,
                    "call_id": 0,
                },
            )
        return result

    def _stream(self, operation: str, invoke: Callable[[BaseProvider], Iterator[StreamEvent]]) -> Iterator[StreamEvent]:
        """Falls back only while no token was delivered; afterwards an ERROR ends the stream."""
        errors: dict[str, LLMError] = {}
        for candidate in self.candidates(operation):
            try:
                events = invoke(self._provider(candidate))
            except LLMError as exc:
                if not self._can_skip(exc):
                    raise
                errors[candidate.identifier] = exc
                continue
            delivered = False
            try:  # closing this stream early closes the provider's (and its SDK stream) at once
                for event in events:
                    passed = self._stream_step(candidate.identifier, event, delivered, errors)
                    if passed is None:
                        break
                    delivered = delivered or passed.type is StreamEventType.TOKEN
                    yield passed
                else:
                    self.last_provider = candidate.identifier
                    return
            finally:
                close_stream(events)
        yield StreamEvent.failure(FallbackExhaustedError(errors))
        yield StreamEvent.end()

    # -- conversations: llm_core.conversation falls back per model call -------------------

    def conversation(self, **options: Any) -> Conversation:
        """A conversation whose every model call may fall back to the next capable provider
        (see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, RouterBackend

        return Conversation(RouterBackend(self), **options)

    def fallback_providers(
        self, features: Iterable[Feature | str] = ()
    ) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        """``(identifier, provider)`` for each provider offering the router's features and
        ``features``, best first, built when reached (the error in its place when it cannot be
        built). Raises :class:`NoMatchingProviderError` at once when none fits."""
        wanted = self.features | parse_features(features)
        found = self.registry.candidates(*wanted, prefer=self.prefer)
        if not found:
            raise no_match(self.registry.providers(), wanted, None)
        return self._built_in_turn(found)

    def _built_in_turn(self, found: list[Candidate]) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        for candidate in found:
            try:
                yield candidate.identifier, self._provider(candidate)
            except (ConfigurationError, PluginLoadError) as exc:
                yield candidate.identifier, exc

    def can_fall_back(self, error: LLMError) -> bool:
        """Whether the next provider may serve after ``error`` (see ``fall_back``)."""
        return self._can_skip(error)

    # -- the provider surface ---------------------------------------------------------

    def chat_completion(self, messages: Any, **options: Any) -> Any:
        return self._call("chat_completion", lambda p: p.chat_completion(messages, **options))

    def complete(self, prompt: Any, **options: Any) -> Any:
        return self._call("complete", lambda p: p.complete(prompt, **options))

    def generate_text(self, prompt: Any, **options: Any) -> str:
        return self._call("generate_text", lambda p: p.complete(prompt, **options)).content

    def answer(self, prompt: Any, **options: Any) -> str:
        return self.generate_text(prompt, **options)

    def chat_completion_with_tools(self, messages: Any, tools: Any, **options: Any) -> Any:
        return self._call(
            "chat_completion_with_tools",
            lambda p: _iface(p, ToolCapable).chat_completion_with_tools(messages, tools, **options),
        )

    def analyze_image(self, image: Any, prompt: str = "Describe this image.", **options: Any) -> Any:
        return self._call("analyze_image", lambda p: _iface(p, VisionCapable).analyze_image(image, prompt, **options))

    def generate_json(self, prompt: Any, schema: Any = None, **options: Any) -> Any:
        return self._call(
            "generate_json", lambda p: _iface(p, StructuredOutputCapable).generate_json(prompt, schema, **options)
        )

    def embeddings(self, input: Any, **options: Any) -> Any:  # noqa: A002
        return self._call("embeddings", lambda p: _iface(p, EmbeddingCapable).embeddings(input, **options))

    def generate_image(self, prompt: str, **options: Any) -> Any:
        return self._call(
            "generate_image", lambda p: _iface(p, ImageGenerationCapable).generate_image(prompt, **options)
        )

    def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        image = self.generate_image(prompt, **options)
        return image.data, image.mime_type

    def decide(self, subject: Any, questions: Any, **options: Any) -> Any:
        return self._call("decide", lambda p: _iface(p, DecisionCapable).decide(subject, questions, **options))

    def stream_chat_completion(self, messages: Any, **options: Any) -> Iterator[StreamEvent]:
        return self._stream(
            "stream_chat_completion", lambda p: _iface(p, StreamingCapable).stream_chat_completion(messages, **options)
        )

    def stream_text(self, prompt: Any, **options: Any) -> Iterator[str]:
        return text_only(self.stream_chat_completion(prompt, **options))


class AsyncRouter:
    """``router.aio``: the async twins, with the same fallback rules."""

    def __init__(self, router: Router) -> None:
        self._r = router

    async def _call(self, operation: str, invoke: Callable[[BaseProvider], Awaitable[T]]) -> T:
        r = self._r
        errors: dict[str, LLMError] = {}
        for candidate in r.candidates(operation):
            try:
                result = await invoke(r._provider(candidate))
            except LLMError as exc:
                if not r._can_skip(exc):
                    raise
                errors[candidate.identifier] = exc
                continue
            return r._answered(candidate.identifier, result, errors)
        raise FallbackExhaustedError(errors)

    def conversation(self, **options: Any) -> AsyncConversation:
        """An async conversation that falls back per model call (see ``Router.conversation``)."""
        from llm_core.conversation import AsyncConversation, RouterBackend

        return AsyncConversation(RouterBackend(self._r), **options)

    async def chat_completion(self, messages: Any, **options: Any) -> Any:
        return await self._call("chat_completion", lambda p: p.aio.chat_completion(messages, **options))

    async def complete(self, prompt: Any, **options: Any) -> Any:
        return await self._call("complete", lambda p: p.aio.complete(prompt, **options))

    async def generate_text(self, prompt: Any, **options: Any) -> str:
        response: CompletionResponse = await self.complete(prompt, **options)
        return response.content

    async def answer(self, prompt: Any, **options: Any) -> str:
        return await self.generate_text(prompt, **options)

    async def chat_completion_with_tools(self, messages: Any, tools: Any, **options: Any) -> Any:
        return await self._call(
            "chat_completion_with_tools", lambda p: p.aio.chat_completion_with_tools(messages, tools, **options)
        )

    async def analyze_image(self, image: Any, prompt: str = "Describe this image.", **options: Any) -> Any:
        return await self._call("analyze_image", lambda p: p.aio.analyze_image(image, prompt, **options))

    async def generate_json(self, prompt: Any, schema: Any = None, **options: Any) -> Any:
        return await self._call("generate_json", lambda p: p.aio.generate_json(prompt, schema, **options))

    async def embeddings(self, input: Any, **options: Any) -> Any:  # noqa: A002
        return await self._call("embeddings", lambda p: p.aio.embeddings(input, **options))

    async def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        image = await self._call("generate_image", lambda p: p.aio.generate_image(prompt, **options))
        return image.data, image.mime_type

    async def decide(self, subject: Any, questions: Any, **options: Any) -> Any:
        return await self._call("decide", lambda p: p.aio.decide(subject, questions, **options))

    async def stream_chat_completion(self, messages: Any, **options: Any) -> AsyncIterator[StreamEvent]:
        r = self._r
        errors: dict[str, LLMError] = {}
        for candidate in r.candidates("stream_chat_completion"):
            try:
                events = _iface(r._provider(candidate), StreamingCapable).aio.stream_chat_completion(
                    messages, **options
                )
            except LLMError as exc:
                if not r._can_skip(exc):
                    raise
                errors[candidate.identifier] = exc
                continue
            delivered = False
            fell_back = False
            try:  # as in Router._stream: an early close reaches the provider's stream at once
                async for event in events:
                    passed = r._stream_step(candidate.identifier, event, delivered, errors)
                    if passed is None:
                        fell_back = True
                        break
                    delivered = delivered or passed.type is StreamEventType.TOKEN
                    yield passed
            finally:
                await aclose_stream(events)
            if not fell_back:
                r.last_provider = candidate.identifier
                return
        yield StreamEvent.failure(FallbackExhaustedError(errors))
        yield StreamEvent.end()

    def stream_text(self, prompt: Any, **options: Any) -> AsyncIterator[str]:
        return async_text_only(self.stream_chat_completion(prompt, **options))
