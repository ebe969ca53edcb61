"""The fallback loop: one call tried on each capable provider in turn until one answers.

:class:`Fallback` holds the decisions (which provider is next, whether an error lets the next
one serve, what the answer says about the walk); :func:`call_each`, :func:`acall_each`,
:func:`stream_each` and :func:`astream_each` run it, and differ only in awaiting. A router's
calls and streams (``router`` and ``router.aio``) and a conversation over a router all use them.

A stream falls back only until its first token: after that, a failure ends it with ERROR. A
provider's stream is closed as soon as the walk leaves it (a fallback, or the reader stopping).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from llm_core.errors import FallbackExhaustedError, LLMError
from llm_core.observe import observers
from llm_core.streaming import StreamEvent, StreamEventType, aclose_stream, close_stream

T = TypeVar("T")

#: The response metadata keys naming who answered and who failed before.
ANSWERED_BY = "answered_by"
FALLBACK_FROM = "fallback_from"


class Fallback:
    """One walk over candidate providers, best first.

    ``providers`` yields ``(identifier, provider)``, or ``(identifier, error)`` for one that
    could not be built; ``can_fall_back`` says whether an error lets the next one serve;
    ``on_answer`` hears who answered.
    """

    def __init__(
        self,
        providers: Iterable[tuple[str, Any]],
        can_fall_back: Callable[[LLMError], bool],
        on_answer: Callable[[str], None] | None = None,
    ) -> None:
        self._providers = providers
        self._can_fall_back = can_fall_back
        self._on_answer = on_answer
        #: Each provider that failed so far → its error.
        self.errors: dict[str, LLMError] = {}

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """The providers to try, each built one (one that could not be built counts as failed)."""
        for identifier, provider in self._providers:
            if isinstance(provider, LLMError):
                self.failed(identifier, provider)
                continue
            yield identifier, provider

    def failed(self, identifier: str, error: LLMError) -> None:
        """Record ``error`` of ``identifier`` and go on, or raise it when it may not fall back."""
        if not self._can_fall_back(error):
            raise error
        self.errors[identifier] = error

    def answered(self, identifier: str, response: T) -> T:
        """``response`` of ``identifier``, its metadata naming who answered and who failed
        before; observers hear of a fallback (``operation: "fallback"``)."""
        metadata = getattr(response, "metadata", None)
        if isinstance(metadata, dict):
            metadata[ANSWERED_BY] = identifier
            metadata[FALLBACK_FROM] = list(self.errors)
        self._answer(identifier, getattr(response, "model", None))
        return response

    def _answer(self, identifier: str, model: str | None) -> None:
        if self._on_answer is not None:
            self._on_answer(identifier)
        if self.errors:
            observers.emit(
                "llm_core_after_response",
                {
                    "provider": identifier,
                    "operation": "fallback",
                    "fallback_from": list(self.errors),
                    "model": model,
                    "usage": None,
                    "latency_ms": 0.0,
                    "attempts": len(self.errors) + 1,
                    "call_id": 0,
                },
            )

    def passed(self, identifier: str, event: StreamEvent, delivered: bool) -> StreamEvent | None:
        """What the walk passes on of ``identifier``'s stream ``event`` (``delivered``: a token
        of it was passed already): ``None`` to move on (a failure before any token that may
        fall back), else the event (METADATA naming who answered and who failed before)."""
        if event.type is StreamEventType.ERROR and event.error is not None and not delivered:
            if self._can_fall_back(event.error):
                self.errors[identifier] = event.error
                return None
        elif event.type is StreamEventType.METADATA and event.metadata is not None:
            extra = {**event.metadata.extra, ANSWERED_BY: identifier, FALLBACK_FROM: list(self.errors)}
            self._answer(identifier, event.metadata.model)
            return StreamEvent.meta(event.metadata.model_copy(update={"extra": extra}))
        return event

    def exhausted(self) -> FallbackExhaustedError:
        return FallbackExhaustedError(self.errors)


def call_each(walk: Fallback, call: Callable[[Any], T]) -> T:
    """``call(provider)`` on each provider of ``walk`` until one answers."""
    for identifier, provider in walk:
        try:
            response = call(provider)
        except LLMError as exc:
            walk.failed(identifier, exc)
            continue
        return walk.answered(identifier, response)
    raise walk.exhausted()


async def acall_each(walk: Fallback, call: Callable[[Any], Awaitable[T]]) -> T:
    """The async twin of :func:`call_each`."""
    for identifier, provider in walk:
        try:
            response = await call(provider)
        except LLMError as exc:
            walk.failed(identifier, exc)
            continue
        return walk.answered(identifier, response)
    raise walk.exhausted()


def stream_each(walk: Fallback, open_stream: Callable[[Any], Iterator[StreamEvent]]) -> Iterator[StreamEvent]:
    """The events of ``open_stream(provider)`` for the first provider of ``walk`` that streams
    (see the module docstring); ERROR with :class:`FallbackExhaustedError`, END when none does."""
    for identifier, provider in walk:
        try:
            events = open_stream(provider)
        except LLMError as exc:
            walk.failed(identifier, exc)
            continue
        delivered = False
        try:
            for event in events:
                passed = walk.passed(identifier, event, delivered)
                if passed is None:
                    break
                delivered = delivered or passed.type is StreamEventType.TOKEN
                yield passed
            else:
                return
        finally:
            close_stream(events)
    yield StreamEvent.failure(walk.exhausted())
    yield StreamEvent.end()


async def astream_each(
    walk: Fallback, open_stream: Callable[[Any], AsyncIterator[StreamEvent]]
) -> AsyncIterator[StreamEvent]:
    """The async twin of :func:`stream_each`."""
    for identifier, provider in walk:
        try:
            events = open_stream(provider)
        except LLMError as exc:
            walk.failed(identifier, exc)
            continue
        delivered = False
        fell_back = False
        try:
            async for event in events:
                passed = walk.passed(identifier, event, delivered)
                if passed is None:
                    fell_back = True
                    break
                delivered = delivered or passed.type is StreamEventType.TOKEN
                yield passed
        finally:
            await aclose_stream(events)
        if not fell_back:
            return
    yield StreamEvent.failure(walk.exhausted())
    yield StreamEvent.end()
