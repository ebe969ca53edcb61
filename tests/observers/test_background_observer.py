"""BackgroundObserver: a slow observer's hooks run on a worker thread, so neither a synchronous
caller nor the event loop waits for them, and every event still arrives, in order."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from llm_core import hookimpl
from llm_core.observe.background import BackgroundObserver
from llm_core.registry import Registry
from llm_core.testing import FakeProvider, FakeReply

from .conftest import Recorder

SLOW_SECONDS = 0.2


class SlowRecorder(Recorder):
    """Takes SLOW_SECONDS per event, like an observer writing to a server far away."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.threads.add(threading.current_thread().name)
        time.sleep(SLOW_SECONDS)
        self.events.append(("after", event))


def provider() -> FakeProvider:
    return FakeProvider(default_reply=FakeReply(content="ok"))


def test_the_event_loop_keeps_ticking_while_a_slow_observer_works(registry: Registry, loop_gaps: Any) -> None:
    slow = SlowRecorder()
    background = BackgroundObserver(slow)
    registry.add_observer(background)
    fake = provider()

    async def calls() -> None:
        for _ in range(5):
            await fake.aio.chat_completion("hi")

    gaps = loop_gaps(calls())
    assert background.flush(timeout=10)
    # run on the loop, one slow event would leave a gap of SLOW_SECONDS; a loaded machine far less
    assert max(gaps) < SLOW_SECONDS / 2, max(gaps)
    assert len(slow.of("after")) == 5
    assert threading.current_thread().name not in slow.threads


def test_a_synchronous_caller_does_not_wait_and_events_arrive_in_order(registry: Registry) -> None:
    slow = SlowRecorder()
    background = BackgroundObserver(slow)
    registry.add_observer(background)
    fake = provider()
    started = time.perf_counter()
    for _ in range(3):
        fake.chat_completion("hi")
    assert time.perf_counter() - started < SLOW_SECONDS  # three slow events would take three times that
    assert background.flush(timeout=10)
    assert slow.kinds() == ["before", "after"] * 3
    call_ids = [event["call_id"] for _, event in slow.events]
    assert call_ids == sorted(call_ids)


def test_only_the_hooks_the_observer_implements_are_forwarded(registry: Registry) -> None:
    class ErrorsOnly:
        @hookimpl
        def llm_core_on_error(self, event: dict[str, Any]) -> None:
            raise AssertionError("not called in this test")

    background = BackgroundObserver(ErrorsOnly())
    registry.add_observer(background)
    hook = registry.plugin_manager.hook
    assert any(impl.plugin is background for impl in hook.llm_core_on_error.get_hookimpls())
    assert not hasattr(background, "llm_core_after_response")
    provider().chat_completion("hi")
    assert background.flush(timeout=10)
    assert background._worker is None  # nothing was queued, so no thread was started


def test_a_full_queue_drops_events_instead_of_blocking(registry: Registry, caplog: pytest.LogCaptureFixture) -> None:
    gate = threading.Event()

    class Blocked(Recorder):
        @hookimpl
        def llm_core_after_response(self, event: dict[str, Any]) -> None:
            gate.wait(10)
            self.events.append(("after", event))

    blocked = Blocked()
    background = BackgroundObserver(blocked, max_pending=2)
    registry.add_observer(background)
    fake = provider()
    with caplog.at_level(logging.WARNING, logger="llm_core.calls"):
        for _ in range(6):
            fake.chat_completion("hi")  # would hang here if a full queue blocked the caller
    assert background.dropped > 0
    assert sum("dropping events" in r.getMessage() for r in caplog.records) == 1
    gate.set()
    assert background.flush(timeout=10)
    assert len(blocked.events) == 6 * 2 - background.dropped  # a before and an after per call


def test_a_failing_observer_is_logged_and_the_worker_goes_on(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    class Flaky(Recorder):
        @hookimpl
        def llm_core_before_request(self, event: dict[str, Any]) -> None:
            raise RuntimeError("exporter down")

    flaky = Flaky()
    background = BackgroundObserver(flaky)
    registry.add_observer(background)
    with caplog.at_level(logging.ERROR, logger="llm_core.calls"):
        provider().chat_completion("hi")
        provider().chat_completion("again")
        assert background.flush(timeout=10)
    assert flaky.kinds() == ["after", "after"]
    assert sum(bool(r.exc_info) and "exporter down" in str(r.exc_info[1]) for r in caplog.records) == 2


def test_close_drains_the_queue_then_ignores_later_events(registry: Registry) -> None:
    slow = SlowRecorder()
    background = BackgroundObserver(slow)
    registry.add_observer(background)
    fake = provider()
    fake.chat_completion("hi")
    assert background.close(timeout=10)
    assert len(slow.of("after")) == 1
    fake.chat_completion("after close")
    assert len(slow.events) == 2  # the before and after of the first call only


def test_max_pending_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_pending"):
        BackgroundObserver(Recorder(), max_pending=0)
