"""Fallback routing: a provider-shaped object that moves to the next capable provider when a
call fails in a way retries could not cure (rate limit, server error, timeout, connection).

The rules live beside it: which providers a call tries and in which order
(:mod:`llm_core.routing_policy`, by cost with :mod:`llm_core.cost_estimate`), the state and
fallback steps both surfaces share (:mod:`llm_core.router_base`), and ``router.aio``
(:mod:`llm_core.async_routing`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from llm_core.async_routing import AsyncRouter
from llm_core.capabilities import (
    DecisionCapable,
    EmbeddingCapable,
    ImageGenerationCapable,
    StreamingCapable,
    StructuredOutputCapable,
    ToolCapable,
    VisionCapable,
)
from llm_core.errors import FallbackExhaustedError, LLMError
from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.router_base import RouterBase
from llm_core.routing_policy import ProviderSource, as_capable, should_fall_back
from llm_core.streaming import StreamEvent, StreamEventType, close_stream, text_only

if TYPE_CHECKING:
    from llm_core.conversation import Conversation

__all__ = ["AsyncRouter", "FallbackExhaustedError", "ProviderSource", "Router", "should_fall_back"]

T = TypeVar("T")


class Router(RouterBase):
    """Same call surface as a provider (sync and ``router.aio``). Each response names the
    provider that answered (``response.provider``) and the ones that failed before it
    (``response.metadata["fallback_from"]``); ``last_provider`` holds it too.

    ``prefer`` is the preference order (identifiers), or ``"cheapest"``: each call tries the
    capable providers in order of what that call is expected to cost at their prices
    (:mod:`llm_core.cost_estimate`). A router pickles by its settings, never with a key."""

    def __init__(
        self,
        registry: ProviderSource,
        features: Iterable[Feature | str],
        *,
        prefer: Sequence[str] | str | None = None,
        config: dict[str, Any] | None = None,
        fall_back: Callable[[LLMError], bool] = should_fall_back,
    ) -> None:
        super().__init__(registry, features, prefer=prefer, config=config, fall_back=fall_back)
        self.aio = AsyncRouter(self)

    def _call(self, operation: str, invoke: Callable[[BaseProvider], T], args: tuple[Any, ...], options: Any) -> T:
        errors: dict[str, LLMError] = {}
        for candidate in self.candidates(operation, (args, options)):
            try:
                result = invoke(self._provider(candidate))
            except LLMError as exc:
                if not self._can_skip(exc):
                    raise
                errors[candidate.identifier] = exc
                continue
            return self._answered(candidate.identifier, result, errors)
        raise FallbackExhaustedError(errors)

    def _stream(
        self,
        operation: str,
        invoke: Callable[[BaseProvider], Iterator[StreamEvent]],
        args: tuple[Any, ...],
        options: Any,
    ) -> Iterator[StreamEvent]:
        """Falls back only while no token was delivered; afterwards an ERROR ends the stream."""
        errors: dict[str, LLMError] = {}
        for candidate in self.candidates(operation, (args, options)):
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

    def conversation(self, **options: Any) -> Conversation:
        """A conversation whose every model call may fall back to the next capable provider
        (see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, RouterBackend

        return Conversation(RouterBackend(self), **options)

    # -- the provider surface ---------------------------------------------------------

    def chat_completion(self, messages: Any, **options: Any) -> Any:
        return self._call("chat_completion", lambda p: p.chat_completion(messages, **options), (messages,), options)

    def complete(self, prompt: Any, **options: Any) -> Any:
        return self._call("complete", lambda p: p.complete(prompt, **options), (prompt,), options)

    def generate_text(self, prompt: Any, **options: Any) -> str:
        return self._call("generate_text", lambda p: p.complete(prompt, **options), (prompt,), options).content

    def answer(self, prompt: Any, **options: Any) -> str:
        return self.generate_text(prompt, **options)

    def chat_completion_with_tools(self, messages: Any, tools: Any, **options: Any) -> Any:
        return self._call(
            "chat_completion_with_tools",
            lambda p: as_capable(p, ToolCapable).chat_completion_with_tools(messages, tools, **options),
            (messages, tools),
            options,
        )

    def analyze_image(self, image: Any, prompt: str = "Describe this image.", **options: Any) -> Any:
        return self._call(
            "analyze_image",
            lambda p: as_capable(p, VisionCapable).analyze_image(image, prompt, **options),
            (image, prompt),
            options,
        )

    def generate_json(self, prompt: Any, schema: Any = None, **options: Any) -> Any:
        return self._call(
            "generate_json",
            lambda p: as_capable(p, StructuredOutputCapable).generate_json(prompt, schema, **options),
            (prompt, schema),
            options,
        )

    def embeddings(self, input: Any, **options: Any) -> Any:  # noqa: A002
        return self._call(
            "embeddings", lambda p: as_capable(p, EmbeddingCapable).embeddings(input, **options), (input,), options
        )

    def generate_image(self, prompt: str, **options: Any) -> Any:
        return self._call(
            "generate_image",
            lambda p: as_capable(p, ImageGenerationCapable).generate_image(prompt, **options),
            (prompt,),
            options,
        )

    def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        image = self.generate_image(prompt, **options)
        return image.data, image.mime_type

    def decide(self, subject: Any, questions: Any, **options: Any) -> Any:
        return self._call(
            "decide",
            lambda p: as_capable(p, DecisionCapable).decide(subject, questions, **options),
            (subject, questions),
            options,
        )

    def stream_chat_completion(self, messages: Any, **options: Any) -> Iterator[StreamEvent]:
        return self._stream(
            "stream_chat_completion",
            lambda p: as_capable(p, StreamingCapable).stream_chat_completion(messages, **options),
            (messages,),
            options,
        )

    def stream_text(self, prompt: Any, **options: Any) -> Iterator[str]:
        return text_only(self.stream_chat_completion(prompt, **options))
