"""Cancelled async calls, streams and conversation turns end their spans: after 1,000 of them
nothing is left open (spans, the observer's own tables, llm-core's view of open calls and
scopes) and memory does not grow with their number."""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

from core_otel_plugin.observer import OtelObserver
from llm_core import hookimpl
from llm_core.errors import CancelledCallError
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.testing import FakeProvider, FakeReply, fake_spec

from .conftest import Telemetry


class Counting(SpanProcessor):
    """Counts spans started and ended."""

    def __init__(self) -> None:
        self.started = 0
        self.ended = 0

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.started += 1

    def on_end(self, span: ReadableSpan) -> None:
        self.ended += 1


class Ledger:
    """llm-core's events as open and ended calls and scopes; counts only, so it does not grow."""

    def __init__(self) -> None:
        self.open: set[int] = set()
        self.ended = 0
        self.cancelled = 0
        self.unmatched = 0  # an end without its start, or a second end

    def _start(self, key: int) -> None:
        self.open.add(key)

    def _end(self, key: int) -> None:
        if key in self.open:
            self.open.discard(key)
            self.ended += 1
        else:
            self.unmatched += 1

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        if event["attempt"] == 1:
            self._start(event["call_id"])

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        if event["call_id"]:
            self._end(event["call_id"])

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        if not event["will_retry"]:
            self.cancelled += isinstance(event["error"], CancelledCallError)
            self._end(event["call_id"])

    @hookimpl
    def llm_core_turn_start(self, event: dict[str, Any]) -> None:
        self._start(event["scope_id"])

    @hookimpl
    def llm_core_turn_end(self, event: dict[str, Any]) -> None:
        self._end(event["scope_id"])

    @hookimpl
    def llm_core_tool_start(self, event: dict[str, Any]) -> None:
        self._start(event["scope_id"])

    @hookimpl
    def llm_core_tool_end(self, event: dict[str, Any]) -> None:
        self._end(event["scope_id"])


class Hanging(FakeProvider):
    """Never answers until cancelled: a call's send; a stream's opening ("open") or its read
    after the first chunk ("mid"); other prompts answer with a call of the ``wait`` tool."""

    def __init__(self, **config: Any) -> None:
        super().__init__(retry=RetryPolicy.none(), **config)
        self.waiting = 0

    async def _hang(self) -> None:
        self.waiting += 1
        await asyncio.Event().wait()

    async def _asend_chat(self, payload: dict[str, Any]) -> Any:
        if payload["last_user"] == "tool":
            return TOOL_REPLY
        await self._hang()
        return None

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[Any]:
        if payload["last_user"] == "open":
            await self._hang()

        async def chunks() -> AsyncIterator[Any]:
            yield ("first", False)
            await self._hang()

        return chunks()


TOOL_REPLY = FakeReply.calling(("wait", {}))


async def read(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass


def scenarios(provider: Hanging, registry: Registry) -> list[Callable[[], Coroutine[Any, Any, Any]]]:
    """One cancellable piece of work of each kind (each hangs inside the provider or a tool)."""

    async def wait() -> str:
        "Wait for ever."
        await provider._hang()
        return "never"

    router = registry.router("chat")
    return [
        lambda: provider.aio.chat_completion("hi"),
        lambda: read(provider.aio.stream_chat_completion("open")),
        lambda: read(provider.aio.stream_chat_completion("mid")),
        lambda: router.aio.chat_completion("hi"),
        lambda: provider.aio.conversation().send("hi"),
        lambda: read(provider.aio.conversation().stream("mid")),
        lambda: provider.aio.conversation(tools=[wait]).send("tool"),
    ]


async def cancel_round(provider: Hanging, registry: Registry, count: int) -> None:
    """``count`` pieces of work (the kinds in turn), all cancelled once all of them hang."""
    kinds = scenarios(provider, registry)
    provider.waiting = 0
    tasks = [asyncio.ensure_future(kinds[i % len(kinds)]()) for i in range(count)]
    for _ in range(10_000):
        if provider.waiting == count:
            break
        await asyncio.sleep(0)
    assert provider.waiting == count
    for task in tasks:
        task.cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(outcome, asyncio.CancelledError) for outcome in outcomes)


async def timed_out_round(provider: Hanging, count: int) -> None:
    """``count`` calls given up by ``asyncio.wait_for``, all at once."""
    outcomes = await asyncio.gather(
        *(asyncio.wait_for(provider.aio.chat_completion("hi"), 0.05) for _ in range(count)), return_exceptions=True
    )
    assert all(isinstance(outcome, TimeoutError) for outcome in outcomes)


@pytest.fixture
def setup(telemetry: Telemetry) -> tuple[Hanging, Registry, Counting, Ledger, OtelObserver]:
    counting = Counting()
    telemetry.tracer_provider.add_span_processor(counting)
    observer = OtelObserver(telemetry.tracer_provider, capture_content=True)
    ledger = Ledger()
    registry = Registry()
    registry.add_observer(observer)
    registry.add_observer(ledger)
    provider = Hanging()
    spec = fake_spec("hanging")
    registry.register(
        ProviderSpec(spec.identifier, spec.name, spec.features, lambda **_: provider, spec.models, spec.default_model)
    )
    return provider, registry, counting, ledger, observer


def assert_nothing_open(counting: Counting, ledger: Ledger, observer: OtelObserver) -> None:
    assert counting.started == counting.ended
    assert ledger.open == set()
    assert ledger.unmatched == 0
    tables = (observer._open, observer._scopes, observer._outer, observer._turns, observer._attached)
    assert [len(table) for table in (*tables, observer._call_turns)] == [0] * 6


async def settled_memory() -> int:
    """Memory traced now, once the loop ran the callbacks the cancellations scheduled (until
    then they hold the last round's tasks) and the collector freed what is unreachable."""
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_a_thousand_cancellations_leave_nothing_open_and_memory_flat(
    setup: tuple[Hanging, Registry, Counting, Ledger, OtelObserver], telemetry: Telemetry
) -> None:
    provider, registry, counting, ledger, observer = setup

    async def rounds(count: int) -> None:
        """``count`` x 200 cancellations: 140 calls, streams and turns cancelled, 60 calls timed out."""
        for _ in range(count):
            await cancel_round(provider, registry, 140)
            await timed_out_round(provider, 60)
            telemetry.spans_exporter.clear()  # the exporter keeps finished spans: not ours to count

    async def main() -> tuple[int, float]:
        tracemalloc.start()
        await rounds(2)  # warm-up, traced too: caches it fills count in ``before``
        before = await settled_memory()
        started = time.perf_counter()
        await rounds(5)
        elapsed = time.perf_counter() - started
        grown = await settled_memory() - before
        tracemalloc.stop()
        return grown, elapsed

    grown, elapsed = asyncio.run(main())
    assert_nothing_open(counting, ledger, observer)
    # each piece of work hangs in one model call, but the tool turns (1 in 7), whose model call
    # answered before their tool hung: 7 rounds x (120 + 60) model calls ended cancelled
    assert ledger.cancelled == 7 * 180
    assert counting.ended >= 1200
    # flat: a few KiB of allocator noise, the same after 200 cancellations as after 1,000; a leak
    # of 64 bytes per cancellation (an open span is kilobytes) would fail
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 1,000 cancellations"
    print(f"1,000 cancellations: {elapsed:.2f} s (traced), memory grown {grown} bytes")


def test_a_cancelled_call_ends_its_span_as_cancelled(
    setup: tuple[Hanging, Registry, Counting, Ledger, OtelObserver], telemetry: Telemetry
) -> None:
    provider, _, counting, ledger, observer = setup
    asyncio.run(timed_out_round(provider, 1))
    (span,) = telemetry.spans()
    assert span.name == "chat fake-model"
    assert span.attributes is not None and span.attributes["error.type"] == "CancelledCallError"
    assert span.status.status_code is StatusCode.ERROR
    assert_nothing_open(counting, ledger, observer)


def test_a_cancelled_turn_ends_its_span_and_its_calls(
    setup: tuple[Hanging, Registry, Counting, Ledger, OtelObserver], telemetry: Telemetry
) -> None:
    provider, registry, counting, ledger, observer = setup
    asyncio.run(cancel_round(provider, registry, 7))
    names = sorted(span.name for span in telemetry.spans())
    assert names.count("invoke_agent") == 3
    assert names.count("execute_tool wait") == 1
    assert_nothing_open(counting, ledger, observer)
