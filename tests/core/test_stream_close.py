"""The streaming driver closes the SDK's stream itself, at once, however a stream ends:
exhausted, or abandoned by the caller (``close()``/``aclose()``, ``break``, cancellation)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

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
