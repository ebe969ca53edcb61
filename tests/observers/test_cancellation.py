"""A call (or turn, tool run, batch) that is cancelled still ends for observers, exactly once: an
``llm_core_on_error`` with a ``CancelledCallError`` and ``will_retry`` false (a scope's end event
carries it as its ``error``), while the caller gets the cancellation itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from llm_core import hookimpl
from llm_core.errors import CancelledCallError, RateLimitError, ServerError
from llm_core.observe.scopes import open_scope
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEventType
from llm_core.testing import FakeProvider, FakeReply

from .conftest import Recorder


class Hanging(FakeProvider):
    """Answers nothing until cancelled: a call's send, a stream's opening ("open"), or a stream
    after its first chunk ("mid")."""

    def __init__(self, **config: Any) -> None:
        super().__init__(retry=RetryPolicy.none(), **config)
        self.entered = asyncio.Event()

    async def _hang(self) -> None:
        self.entered.set()
        await asyncio.Event().wait()

    async def _asend_chat(self, payload: dict[str, Any]) -> Any:
        await self._hang()

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[Any]:
        if payload["last_user"] == "open":
            await self._hang()

        async def chunks() -> AsyncIterator[Any]:
            yield ("first", False)
            await self._hang()

        return chunks()


class Scopes:
    """Records the end events of scopes."""

    def __init__(self) -> None:
        self.ends: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def llm_core_turn_end(self, event: dict[str, Any]) -> None:
        self.ends.append(("turn", event))

    @hookimpl
    def llm_core_tool_end(self, event: dict[str, Any]) -> None:
        self.ends.append(("tool", event))

    @hookimpl
    def llm_core_batch_end(self, event: dict[str, Any]) -> None:
        self.ends.append(("batch", event))


@pytest.fixture
def scopes(registry: Registry) -> Scopes:
    found = Scopes()
    registry.add_observer(found)
    return found


async def cancelled(work: Any, entered: asyncio.Event) -> None:
    """Run ``work`` in a task, cancel it once it is inside the provider, expect the cancellation."""
    task = asyncio.ensure_future(work)
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def assert_cancelled_once(recorder: Recorder, *, attempts: int = 1) -> dict[str, Any]:
    errors = recorder.of("error")
    assert [type(e["error"]) for e in errors][-1] is CancelledCallError
    final = [e for e in errors if not e["will_retry"]]
    assert len(final) == 1
    (event,) = final
    assert event["attempt"] == attempts
    assert isinstance(event["error"].__cause__, asyncio.CancelledError | KeyboardInterrupt)
    assert not event["error"].retryable and not event["error"].fallback
    assert recorder.of("after") == []
    return event


async def test_a_call_cancelled_by_wait_for_is_reported_once(recorder: Recorder) -> None:
    provider = Hanging()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(provider.aio.chat_completion("hi"), 0.05)
    event = assert_cancelled_once(recorder)
    assert event["operation"] == "chat"
    assert event["call_id"] == recorder.of("before")[0]["call_id"]


async def test_a_call_cancelled_while_waiting_to_retry_is_reported_once(recorder: Recorder) -> None:
    waiting = asyncio.Event()

    async def slow_sleep(_: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    policy = RetryPolicy(max_attempts=3, jitter=0, async_sleep=slow_sleep)
    provider = FakeProvider(replies=[FakeReply(error=ServerError("down", provider="fake"))], retry=policy)
    await cancelled(provider.aio.chat_completion("hi"), waiting)
    assert [(type(e["error"]), e["will_retry"]) for e in recorder.of("error")] == [
        (ServerError, True),
        (CancelledCallError, False),
    ]


@pytest.mark.parametrize("moment", ["open", "mid"])
async def test_a_stream_cancelled_while_opening_or_reading_is_reported_once(recorder: Recorder, moment: str) -> None:
    provider = Hanging()
    seen: list[Any] = []

    async def read() -> None:
        async for event in provider.aio.stream_chat_completion(moment):
            seen.append(event.type)

    await cancelled(read(), provider.entered)
    assert_cancelled_once(recorder)
    assert seen == ([] if moment == "open" else [StreamEventType.TOKEN])


async def test_a_router_call_cancelled_is_reported_once(registry: Registry, recorder: Recorder) -> None:
    provider = Hanging()
    with registry.override(provider):
        await cancelled(registry.router("chat").aio.chat_completion("hi"), provider.entered)
    assert_cancelled_once(recorder)


async def test_a_conversation_turn_cancelled_mid_call_ends_with_the_cancellation(
    recorder: Recorder, scopes: Scopes
) -> None:
    provider = Hanging()
    await cancelled(provider.aio.conversation().send("hi"), provider.entered)
    call = assert_cancelled_once(recorder)
    ((kind, turn),) = scopes.ends
    assert kind == "turn"
    assert isinstance(turn["error"], CancelledCallError)
    assert call["error"] is not turn["error"]  # each end has its own error, both cancellations


async def test_a_streamed_turn_cancelled_mid_call_ends_with_the_cancellation(
    recorder: Recorder, scopes: Scopes
) -> None:
    provider = Hanging()

    async def read() -> None:
        async for _ in provider.aio.conversation().stream("mid"):
            pass

    await cancelled(read(), provider.entered)
    assert_cancelled_once(recorder)
    ((kind, turn),) = scopes.ends
    assert (kind, type(turn["error"]), turn["abandoned"]) == ("turn", CancelledCallError, False)


async def test_a_turn_cancelled_in_a_tool_ends_the_tool_and_the_turn(recorder: Recorder, scopes: Scopes) -> None:
    running = asyncio.Event()

    async def wait() -> str:
        "Wait for ever."
        running.set()
        await asyncio.Event().wait()
        return "never"

    provider = FakeProvider(replies=[FakeReply.calling(("wait", {}))])
    await cancelled(provider.aio.conversation(tools=[wait]).send("hi"), running)
    assert [kind for kind, _ in scopes.ends] == ["tool", "turn"]
    assert all(isinstance(event["error"], CancelledCallError) for _, event in scopes.ends)
    assert len(recorder.of("after")) == 1  # the model call that asked for the tool had ended


def test_a_sync_call_interrupted_is_reported_once(recorder: Recorder) -> None:
    class Interrupted(FakeProvider):
        def _send_chat(self, payload: dict[str, Any]) -> Any:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Interrupted().chat_completion("hi")
    assert_cancelled_once(recorder)


def test_a_sync_stream_interrupted_mid_stream_is_reported_once(recorder: Recorder) -> None:
    class Interrupted(FakeProvider):
        def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
            yield ("first", False)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(Interrupted().stream_chat_completion("hi"))
    assert_cancelled_once(recorder)


def test_a_stream_closed_by_its_reader_is_abandoned_not_cancelled(recorder: Recorder) -> None:
    events = FakeProvider(replies=[FakeReply("one two three")]).stream_chat_completion("hi")
    next(events)
    events.close()
    assert recorder.of("error") == []
    assert [e["abandoned"] for e in recorder.of("after")] == [True]


def test_a_retry_stopped_by_its_deadline_still_ends_the_call(recorder: Recorder) -> None:
    """The attempt was reported as retried, but the wait the rate limit asked for would cross
    the deadline, so the policy gave up: observers hear the end, with ``will_retry`` false."""
    policy = RetryPolicy(max_attempts=3, deadline=1.0, sleep=lambda _: None)
    limited = RateLimitError("slow down", provider="fake", retry_after=30.0)
    provider = FakeProvider(replies=[FakeReply(error=limited)], retry=policy)
    with pytest.raises(RateLimitError):
        provider.chat_completion("hi")
    assert [(e["attempt"], e["will_retry"]) for e in recorder.of("error")] == [(1, True), (1, False)]


def test_a_scope_ends_once_and_reports_a_cancellation_as_such(scopes: Scopes) -> None:
    scope = open_scope("llm_core_batch_start", "llm_core_batch_end", operation="run")
    assert scope is not None
    scope.close(error=KeyboardInterrupt())
    scope.close(error=None)
    ((kind, event),) = scopes.ends
    assert kind == "batch"
    assert isinstance(event["error"], CancelledCallError)
