"""``router.aio``: the async twins of a router's calls, with the same fallback rules."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from llm_core.capabilities import StreamingCapable
from llm_core.errors import FallbackExhaustedError, LLMError
from llm_core.provider import BaseProvider
from llm_core.responses import CompletionResponse
from llm_core.router_base import RouterBase
from llm_core.routing_policy import as_capable
from llm_core.streaming import StreamEvent, StreamEventType, aclose_stream, async_text_only

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation

T = TypeVar("T")


class AsyncRouter:
    """``router.aio``: the async twins, with the same fallback rules."""

    def __init__(self, router: RouterBase) -> None:
        self._r = router

    async def _call(
        self, operation: str, invoke: Callable[[BaseProvider], Awaitable[T]], args: tuple[Any, ...], options: Any
    ) -> T:
        r = self._r
        errors: dict[str, LLMError] = {}
        for candidate in r.candidates(operation, (args, options)):
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
        return await self._call(
            "chat_completion", lambda p: p.aio.chat_completion(messages, **options), (messages,), options
        )

    async def complete(self, prompt: Any, **options: Any) -> Any:
        return await self._call("complete", lambda p: p.aio.complete(prompt, **options), (prompt,), options)

    async def generate_text(self, prompt: Any, **options: Any) -> str:
        response: CompletionResponse = await self.complete(prompt, **options)
        return response.content

    async def answer(self, prompt: Any, **options: Any) -> str:
        return await self.generate_text(prompt, **options)

    async def chat_completion_with_tools(self, messages: Any, tools: Any, **options: Any) -> Any:
        return await self._call(
            "chat_completion_with_tools",
            lambda p: p.aio.chat_completion_with_tools(messages, tools, **options),
            (messages, tools),
            options,
        )

    async def analyze_image(self, image: Any, prompt: str = "Describe this image.", **options: Any) -> Any:
        return await self._call(
            "analyze_image", lambda p: p.aio.analyze_image(image, prompt, **options), (image, prompt), options
        )

    async def generate_json(self, prompt: Any, schema: Any = None, **options: Any) -> Any:
        return await self._call(
            "generate_json", lambda p: p.aio.generate_json(prompt, schema, **options), (prompt, schema), options
        )

    async def embeddings(self, input: Any, **options: Any) -> Any:  # noqa: A002
        return await self._call("embeddings", lambda p: p.aio.embeddings(input, **options), (input,), options)

    async def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        image = await self._call(
            "generate_image", lambda p: p.aio.generate_image(prompt, **options), (prompt,), options
        )
        return image.data, image.mime_type

    async def decide(self, subject: Any, questions: Any, **options: Any) -> Any:
        return await self._call(
            "decide", lambda p: p.aio.decide(subject, questions, **options), (subject, questions), options
        )

    async def stream_chat_completion(self, messages: Any, **options: Any) -> AsyncIterator[StreamEvent]:
        r = self._r
        errors: dict[str, LLMError] = {}
        for candidate in r.candidates("stream_chat_completion", ((messages,), options)):
            try:
                provider = as_capable(r._provider(candidate), StreamingCapable)
                events = provider.aio.stream_chat_completion(messages, **options)
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
