"""The streaming driver: SDK chunks → typed events, TOKEN* then METADATA or ERROR, then END.

One driver (:func:`stream_events`, :func:`astream_events`) serves every stream of every
provider, sync and async, through the provider's :class:`~.execution.CallExecutor`: the SDK
stream is opened under the retry policy (up to its first chunk), a plugin's
:class:`StreamParser` turns chunks into events, and the SDK stream is closed in a ``finally``
whichever way the stream ends: exhausted, failed, or abandoned by the caller (``close()`` /
``aclose()``, ``break``, task cancellation). Observers hear it end once: METADATA, a final
error, ``abandoned`` (closed by its reader) or, when its task was cancelled while it opened or
read, a :class:`~llm_core.errors.CancelledCallError`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

from llm_core.operation import Operation
from llm_core.provider.execution import CallExecutor, CallTrace
from llm_core.requests import ChatRequest
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.wire import StreamParser


def stream_events(
    run: CallExecutor,
    op: Operation,
    request: ChatRequest,
    payload: dict[str, Any],
    open_stream: Callable[[dict[str, Any]], Iterator[Any]],
    parser: StreamParser,
) -> Iterator[StreamEvent]:
    """TOKEN* METADATA END, or TOKEN* ERROR END. Only opening (up to the first chunk) is
    retried; once a chunk arrived a failure ends the stream with ERROR. The caller maps the
    request (so that an input the plugin refuses raises at the call, before anything is sent)."""
    clock = _Clock()
    call = run.trace(op.observed_as, request.model, request, op.feature)
    opened: list[Any] = []  # the SDK stream and its iterator, closed in the finally below

    def open_and_peek() -> tuple[Iterator[Any], list[Any]]:
        stream = open_stream(payload)
        opened[:] = [stream]
        iterator = iter(stream)
        if iterator is not stream:
            opened.append(iterator)
        try:
            return iterator, [next(iterator)]
        except StopIteration:
            return iterator, []
        except BaseException:
            _close_all(opened)  # this attempt's stream: a retry opens another
            raise

    peeked = False
    try:
        chunks, head = run.execute(op.observed_as, request.model, open_and_peek, trace=call)
        peeked = True
        for chunk in head:
            yield from clock.timed(parser.feed(chunk))
        for chunk in chunks:
            yield from clock.timed(parser.feed(chunk))
        yield _finished(run, call, parser, request, clock)
    except GeneratorExit:  # the caller stopped early: observers hear the call is over
        if peeked and not call.done:
            run.emit_done(call, None, abandoned=True)
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes ERROR, then END
        yield _stream_failure(run, call, exc, reported=not peeked)
    except BaseException as exc:  # cancelled while opening or reading: observers hear it end
        run.ended(call, exc)
        raise
    finally:
        _close_all(opened)
    yield StreamEvent.end()


async def astream_events(
    run: CallExecutor,
    op: Operation,
    request: ChatRequest,
    payload: dict[str, Any],
    open_stream: Callable[[dict[str, Any]], Awaitable[AsyncIterator[Any]]],
    parser: StreamParser,
) -> AsyncIterator[StreamEvent]:
    """The async twin of :func:`stream_events`."""
    clock = _Clock()
    call = run.trace(op.observed_as, request.model, request, op.feature)
    opened: list[Any] = []

    async def open_and_peek() -> tuple[AsyncIterator[Any], list[Any]]:
        stream = await open_stream(payload)
        opened[:] = [stream]
        iterator = stream.__aiter__()
        if iterator is not stream:
            opened.append(iterator)
        try:
            return iterator, [await iterator.__anext__()]
        except StopAsyncIteration:
            return iterator, []
        except BaseException:
            await _aclose_all(opened)
            raise

    peeked = False
    try:
        chunks, head = await run.aexecute(op.observed_as, request.model, open_and_peek, trace=call)
        peeked = True
        for chunk in head:
            for event in clock.timed(parser.feed(chunk)):
                yield event
        async for chunk in chunks:
            for event in clock.timed(parser.feed(chunk)):
                yield event
        yield _finished(run, call, parser, request, clock)
    except GeneratorExit:  # the caller stopped early: observers hear the call is over
        if peeked and not call.done:
            run.emit_done(call, None, abandoned=True)
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes ERROR, then END
        yield _stream_failure(run, call, exc, reported=not peeked)
    except BaseException as exc:  # cancelled while opening or reading: observers hear it end
        run.ended(call, exc)
        raise
    finally:
        await _aclose_all(opened)
    yield StreamEvent.end()


def _finished(
    run: CallExecutor, call: CallTrace, parser: StreamParser, request: ChatRequest, clock: _Clock
) -> StreamEvent:
    """The METADATA event (usage, timings); observers hear of the success."""
    meta = parser.finish()
    usage = meta.usage
    priced = request.model or meta.model  # the requested model, as in _costed
    prices = run.prices(priced) if priced and usage.cost is None else None
    if prices is not None:
        usage = usage.model_copy(update={"cost": prices.cost(usage)})
    meta = meta.model_copy(
        update={
            "time_to_first_token_ms": clock.first_token_ms(),
            "total_time_ms": clock.elapsed_ms(),
            "model": meta.model or request.model,
            "provider": run.identifier,
            "cost": usage.cost,
        }
    )
    run.emit_done(call, usage, meta)
    return StreamEvent.meta(meta)


def _stream_failure(run: CallExecutor, call: CallTrace, exc: Exception, *, reported: bool) -> StreamEvent:
    """The ERROR event for ``exc``; failures while opening were already reported per attempt."""
    if reported:
        return StreamEvent.failure(run.mapped(exc))
    return StreamEvent.failure(run.failed(call, exc, will_retry=False))


class _Clock:
    """When a stream started and when its first response token came."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.first_token: float | None = None

    def timed(self, events: Sequence[StreamEvent]) -> Sequence[StreamEvent]:
        if self.first_token is None and any(e.type is StreamEventType.TOKEN for e in events):
            self.first_token = time.perf_counter()
        return events

    def first_token_ms(self) -> float | None:
        return None if self.first_token is None else (self.first_token - self.started) * 1000

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000


def _close_all(opened: list[Any]) -> None:
    """Close the SDK stream and its iterator (its close releases the connection), each once."""
    while opened:
        close = getattr(opened.pop(), "close", None)
        if close is not None:
            close()


async def _aclose_all(opened: list[Any]) -> None:
    while opened:
        closable = opened.pop()
        close = getattr(closable, "aclose", None) or getattr(closable, "close", None)
        if close is not None:
            result = close()
            if isinstance(result, Awaitable):
                await result
