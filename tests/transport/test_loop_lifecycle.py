"""No leak across event loops, and an early close releases the connection at once.

``asyncio.run(provider.aio.chat_completion(...))`` in a loop, against a loopback server that
keeps connections alive as the real services do: file descriptors, sockets and memory stay flat,
for both plugins. Closing a stream early (sync ``close()``, async ``aclose()``, ``break``,
cancellation) closes the HTTP connection at once: the server sees it gone. Concurrent early
closes of async streams log nothing ("asynchronous generator is already running").
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from llm_core.streaming import StreamEventType
from tests.reliability.fault_scenarios import PIECES
from tests.reliability.fault_server import FaultServer, paced
from tests.reliability.fault_targets import HTTP_TARGETS, Target
from tests.transport.helpers import wait_until

TARGETS = {t.name: t for t in HTTP_TARGETS}
LOOPS = 500
#: Of those, the first ones run with the garbage collector off.
NO_GC_LOOPS = 100
WARM_UP = 20
KEEP_ALIVE = b": keep-alive\n\n"


def descriptors() -> tuple[int, int]:
    """(open file descriptors, of which sockets) of this process."""
    fds = sockets = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the descriptor listdir itself used
            continue
        fds += 1
        sockets += target.startswith("socket:")
    return fds, sockets


def rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.fixture
def alive() -> Iterator[FaultServer]:
    with FaultServer(keep_alive=True) as running:
        yield running


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/fd")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_asyncio_run_in_a_loop_keeps_descriptors_sockets_and_memory_flat(target: str, alive: FaultServer) -> None:
    http = TARGETS[target]
    alive.fallback = http.upstream
    provider = http.build(alive.url)

    sent = 0

    def one_loop(i: int) -> None:
        nonlocal sent
        answer = asyncio.run(provider.aio.chat_completion(f"call {i}"))
        assert answer.content.endswith(f"call {i}")
        sent += alive.count
        alive.requests.clear()  # the server's record of each request is not the client's memory

    for i in range(WARM_UP):
        one_loop(i)
    gc.collect()
    fds_before, sockets_before = descriptors()
    gc.disable()  # descriptors must be released by each loop's end, not by the collector
    try:
        for i in range(NO_GC_LOOPS):
            one_loop(i)
        fds_after, sockets_after = descriptors()
    finally:
        gc.enable()
    gc.collect()
    rss_before = rss_kib()
    rss_samples = []
    for i in range(LOOPS - NO_GC_LOOPS):
        one_loop(i)
        if i % 100 == 99:
            rss_samples.append(rss_kib())
    fds_end, sockets_end = descriptors()

    print(
        f"\n{target}: {LOOPS} x asyncio.run: fds {fds_before} -> {fds_after} (gc off) -> {fds_end}, sockets "
        f"{sockets_before} -> {sockets_after} -> {sockets_end}, RSS {rss_before} KiB then every 100 loops {rss_samples}"
    )
    assert sent == WARM_UP + LOOPS, "one request per call"
    assert fds_after - fds_before <= 2 and fds_end - fds_before <= 2, (fds_before, fds_after, fds_end)
    assert sockets_after - sockets_before <= 1 and sockets_end - sockets_before <= 1
    # a leak of one client or pool per loop (its loop, connections) costs far more than 2 KiB a loop,
    # in every stretch of 100 loops; the allocator growing its heap once (a step of about 1 MiB in
    # one stretch, flat before and after) is no leak, so the typical stretch is what is held to it
    marks = [rss_before, *rss_samples]
    growths = sorted(after - before for before, after in itertools.pairwise(marks))
    assert growths[len(growths) // 2] < 2 * 100, (rss_before, rss_samples)


def _stream_that_waits(http: Target) -> Any:
    """The first text events at once, then a keep-alive every 20 ms until the client hangs up."""
    events = http.stream_events(PIECES)
    return paced([e.encode() for e in events[:-1]] + [KEEP_ALIVE] * 250, 0.02)


@pytest.mark.parametrize("how", ["close", "break", "cancel"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_an_early_close_releases_the_connection_at_once(target: str, mode: str, how: str, server: FaultServer) -> None:
    if mode == "sync" and how == "cancel":
        pytest.skip("cancellation is an async notion")  # not a requirement: sync has close and break
    http = TARGETS[target]
    server.script(_stream_that_waits(http))
    provider = http.build(server.url)
    closed_at = 0.0

    if mode == "sync":
        stream = provider.stream_chat_completion("Tell me a story.")  # type: ignore[attr-defined]
        for event in stream:
            assert event.type is StreamEventType.TOKEN
            break
        closed_at = time.monotonic()
        if how == "close":
            stream.close()
        else:
            del stream  # break, then the last reference goes: CPython finalizes at once
    else:

        async def consume() -> None:
            nonlocal closed_at
            stream = provider.aio.stream_chat_completion("Tell me a story.")
            if how == "cancel":
                first = asyncio.Event()

                async def read() -> None:
                    async for _event in stream:
                        first.set()

                task = asyncio.create_task(read())
                await first.wait()
                closed_at = time.monotonic()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await stream.aclose()
            else:
                async for event in stream:
                    assert event.type is StreamEventType.TOKEN
                    break
                closed_at = time.monotonic()
                await stream.aclose()  # what `async with aclosing(...)` does after a break
            for _ in range(200):  # the loop goes on running: the release must not wait for its end
                if server.disconnects:
                    break
                await asyncio.sleep(0.01)

        asyncio.run(consume())

    assert wait_until(lambda: bool(server.disconnects), 2.0), "the server never saw the connection close"
    delay = server.disconnects[0] - closed_at
    print(f"\n{target} {mode} {how}: connection gone {delay * 1000:.0f} ms after the close")
    assert delay < 0.5, f"the connection closed {delay:.2f} s after the stream was closed"
    assert server.count == 1


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_concurrent_early_closes_of_async_streams_log_nothing(
    target: str, server: FaultServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    http = TARGETS[target]
    server.fallback = lambda request: _stream_that_waits(http)
    provider = http.build(server.url)
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    loop_errors: list[dict[str, Any]] = []

    async def one(i: int) -> None:
        stream = provider.aio.stream_chat_completion(f"story {i}")
        async for _event in stream:
            break
        if i % 2:
            await stream.aclose()
        else:  # cancelled while waiting for the next event, then closed
            task = asyncio.ensure_future(stream.__anext__())
            await asyncio.sleep(0.01)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task  # (it may have had its event before the cancel)
            await stream.aclose()

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: loop_errors.append(context))
        await asyncio.gather(*(one(i) for i in range(20)))

    with caplog.at_level(logging.DEBUG):
        asyncio.run(main())
        gc.collect()

    messages = [r.getMessage() for r in caplog.records] + [str(c.get("message")) for c in loop_errors]
    assert not [m for m in messages if "already running" in m or "Task exception" in m], messages
    assert not unraisable, [str(u.exc_value) for u in unraisable]
    assert not loop_errors, loop_errors
    assert server.count == 20
    assert wait_until(lambda: len(server.disconnects) == 20, 2.0), len(server.disconnects)
