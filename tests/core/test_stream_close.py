"""The streaming driver closes the SDK's stream itself, at once, however a stream ends:
exhausted, or abandoned by the caller (``close()``/``aclose()``, ``break``, cancellation)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from llm_core import ProviderSpec, Registry
from llm_core.streaming import StreamEventType
from llm_core.testing.fake import FakeProvider, FakeReply


class SdkLikeStream:
    """Like the openai SDK's ``Stream``: ``__iter__`` is a generator over it, and only ``close``
    releases the connection (closing that generator alone would not)."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks
        self.closed = 0

    def __iter__(self) -> Iterator[Any]:
        yield from self.chunks

    def close(self) -> None:
        self.closed += 1


class AsyncSdkLikeStream(SdkLikeStream):
    """Like ``AsyncStream``: ``__aiter__`` is an async generator over it, ``aclose`` releases."""

    async def __aiter__(self) -> AsyncIterator[Any]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed += 1


def streaming_fake(stream_type: type[SdkLikeStream]) -> tuple[FakeProvider, list[SdkLikeStream]]:
    """A fake provider whose streams are ``stream_type`` objects, recorded in the list."""
    provider = FakeProvider(default_reply=FakeReply(content="one two three"), api_key="test-key")
    opened: list[SdkLikeStream] = []
    iterate = provider._iterate

    def send(payload: dict[str, Any]) -> Any:
        stream = stream_type(list(iterate(provider._next("stream", payload))))
        opened.append(stream)
        return stream

    async def asend(payload: dict[str, Any]) -> Any:
        return send(payload)

    provider._send_stream = send  # type: ignore[method-assign]
    provider._asend_stream = asend  # type: ignore[method-assign]
    return provider, opened


def test_the_stream_driver_closes_the_sdk_stream_itself_when_done_or_abandoned() -> None:
    provider, opened = streaming_fake(SdkLikeStream)
    events = list(provider.stream_chat_completion("hi"))
    assert "".join(e.text or "" for e in events) == "one two three"
    assert [e.type for e in events[-2:]] == [StreamEventType.METADATA, StreamEventType.END]
    stream = provider.stream_chat_completion("hi")
    assert next(iter(stream)).text == "one "
    stream.close()  # type: ignore[attr-defined]  # abandoned after the first token
    assert [s.closed for s in opened] == [1, 1]


async def test_the_async_stream_driver_closes_the_sdk_stream_itself_when_done_or_abandoned() -> None:
    provider, opened = streaming_fake(AsyncSdkLikeStream)
    events = [e async for e in provider.aio.stream_chat_completion("hi")]
    assert "".join(e.text or "" for e in events) == "one two three"
    stream = provider.aio.stream_chat_completion("hi")
    assert (await stream.__anext__()).text == "one "
    await stream.aclose()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1, 1]


def test_breaking_out_of_a_stream_closes_the_sdk_stream_at_once() -> None:
    provider, opened = streaming_fake(SdkLikeStream)
    for event in provider.stream_chat_completion("hi"):
        assert event.text == "one "
        break
    assert [s.closed for s in opened] == [1]  # the generator is finalised when the loop drops it


def test_closing_a_router_stream_closes_the_providers_sdk_stream(registry: Registry) -> None:
    provider, opened = streaming_fake(SdkLikeStream)
    _register(registry, provider)
    stream = registry.router("streaming").stream_chat_completion("hi")
    assert next(stream).text == "one "
    stream.close()
    assert [s.closed for s in opened] == [1]
    text = registry.router("streaming").stream_text("hi")
    assert next(text) == "one "
    text.close()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1, 1]


async def test_closing_a_router_async_stream_closes_the_providers_sdk_stream_at_once(registry: Registry) -> None:
    provider, opened = streaming_fake(AsyncSdkLikeStream)
    _register(registry, provider)
    stream = registry.router("streaming").aio.stream_chat_completion("hi")
    assert (await stream.__anext__()).text == "one "
    await stream.aclose()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1]  # already: no garbage collection, no loop turn
    text = registry.router("streaming").aio.stream_text("hi")
    assert await text.__anext__() == "one "
    await text.aclose()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1, 1]


async def test_breaking_out_of_an_async_stream_closes_the_sdk_stream_on_the_next_loop_turn() -> None:
    provider, opened = streaming_fake(AsyncSdkLikeStream)
    async for event in provider.aio.stream_chat_completion("hi"):
        assert event.text == "one "
        break
    # asyncio finalises an abandoned async generator by scheduling its aclose() at once
    for _ in range(3):
        if opened[0].closed:
            break
        await asyncio.sleep(0)
    assert [s.closed for s in opened] == [1]


class StalledSdkStream(AsyncSdkLikeStream):
    """An async SDK stream that sends one chunk, then waits (bounded) for more."""

    async def __aiter__(self) -> AsyncIterator[Any]:
        yield self.chunks[0]
        await asyncio.sleep(5)
        for chunk in self.chunks[1:]:
            yield chunk


@pytest.mark.parametrize("through_router", [False, True])
async def test_cancelling_the_task_reading_a_stream_closes_the_sdk_stream(
    registry: Registry, through_router: bool
) -> None:
    provider, opened = streaming_fake(StalledSdkStream)
    _register(registry, provider)
    events = (
        registry.router("streaming").aio.stream_chat_completion("hi")
        if through_router
        else provider.aio.stream_chat_completion("hi")
    )
    first = asyncio.Event()

    async def read() -> None:
        async for _ in events:
            first.set()

    task = asyncio.create_task(read())
    await asyncio.wait_for(first.wait(), timeout=2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [s.closed for s in opened] == [1]


def _register(registry: Registry, provider: FakeProvider) -> None:
    spec = provider.provider_spec
    registry.register(
        ProviderSpec(
            spec.identifier,
            spec.name,
            spec.features,
            lambda **config: provider,
            spec.models,
            spec.default_model,
            requires_credentials=False,
        )
    )
