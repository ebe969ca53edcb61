"""Observer hooks: before_request / after_response / on_error, registered via add_observer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from llm_core import (
    AuthenticationError,
    Registry,
    ServerError,
    StreamEventType,
    Usage,
    hookimpl,
)
from llm_core.observe import observers as observer_module
from llm_core.testing import FakeProvider, FakeReply, fake_spec

KEY = "sk-live-OBSERVED-SECRET-42"


class Recorder:
    """An observer plugin that keeps every event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self.events.append(("before", dict(event)))

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.events.append(("after", dict(event)))

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        self.events.append(("error", dict(event)))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


@pytest.fixture
def recorder(registry: Registry) -> Recorder:
    found = Recorder()
    registry.add_observer(found)
    return found


def keyed_fake(sleeps: Any, *replies: FakeReply) -> FakeProvider:
    spec = fake_spec("fake", requires_credentials=True, credential_env=("FAKE_API_KEY",))
    return FakeProvider(spec=spec, api_key=KEY, replies=replies, retry=sleeps.policy())


def test_events_of_a_retried_call(recorder: Recorder, sleeps: Any) -> None:
    usage = Usage(prompt_tokens=4, completion_tokens=2)
    fake = keyed_fake(sleeps, FakeReply(error=ServerError("down", provider="fake", status_code=503)),
                      FakeReply(content="ok", usage=usage))
    fake.chat_completion("hi", model="fake-fallback")
    assert recorder.kinds() == ["before", "error", "before", "after"]
    before1, error, before2, after = (event for _, event in recorder.events)
    for event in (before1, error, before2, after):
        assert event["provider"] == "fake"
        assert event["model"] == "fake-fallback"
        assert event["operation"] == "chat"
        assert event["call_id"] == before1["call_id"] != 0
    assert (before1["attempt"], error["attempt"], before2["attempt"]) == (1, 1, 2)
    assert isinstance(error["error"], ServerError) and error["will_retry"] is True
    assert after["attempts"] == 2
    assert after["usage"]["prompt_tokens"] == 4 and after["usage"]["total_tokens"] == 6
    assert after["latency_ms"] >= 0
    assert "chat" in before1["features"]


def test_a_permanent_error_is_reported_without_retry(recorder: Recorder, sleeps: Any) -> None:
    fake = keyed_fake(sleeps, FakeReply(error=AuthenticationError("key rejected", provider="fake", status_code=401)))
    with pytest.raises(AuthenticationError):
        fake.chat_completion("hi")
    assert recorder.kinds() == ["before", "error"]
    assert recorder.events[1][1]["will_retry"] is False


def test_the_last_attempt_is_reported_as_not_retried(recorder: Recorder, sleeps: Any) -> None:
    fake = keyed_fake(sleeps, *[FakeReply(error=ServerError("down", provider="fake"))] * 3)
    with pytest.raises(ServerError):
        fake.chat_completion("hi")
    errors = [event for kind, event in recorder.events if kind == "error"]
    assert [e["will_retry"] for e in errors] == [True, True, False]


def test_events_carry_no_secrets(recorder: Recorder, sleeps: Any) -> None:
    fake = keyed_fake(sleeps, FakeReply(error=AuthenticationError("key rejected", provider="fake")),
                      FakeReply(content="ok"))
    with pytest.raises(AuthenticationError):
        fake.chat_completion("hi")
    fake.chat_completion("again")
    list(fake.stream_chat_completion("stream"))
    fake.embeddings("e")
    assert len(recorder.events) >= 7
    for _, event in recorder.events:
        assert KEY not in repr(event)
        assert "OBSERVED-SECRET" not in str(event)
        assert not any(isinstance(v, str) and "SECRET" in v for v in event.values())


async def test_async_calls_and_streams_are_observed(recorder: Recorder, fake: FakeProvider) -> None:
    await fake.aio.chat_completion("hi")
    events = [e async for e in fake.aio.stream_chat_completion("stream")]
    assert events[-1].type is StreamEventType.END
    operations = [(kind, event["operation"]) for kind, event in recorder.events]
    assert operations[:2] == [("before", "chat"), ("after", "chat")]
    assert ("before", "stream") in operations and ("after", "stream") in operations


def test_every_operation_names_itself(recorder: Recorder, fake: FakeProvider) -> None:
    fake.embeddings("x")
    fake.generate_image_bytes("cat")
    fake.decide("task", [{"kind": "yes_no", "key": "a", "instructions": "?"}])
    fake.available_models()
    before = [event["operation"] for kind, event in recorder.events if kind == "before"]
    assert before == ["embeddings", "generate_image", "decide", "list_models"]


def test_a_failing_observer_never_breaks_a_call(registry: Registry, fake: FakeProvider,
                                                caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        @hookimpl
        def llm_core_before_request(self, event: dict[str, Any]) -> None:
            raise RuntimeError("observer bug")

    registry.add_observer(Broken())
    assert fake.generate_text("hi") == "echo: hi"
    assert "observer hook llm_core_before_request failed" in caplog.text


def test_without_observers_nothing_is_emitted(registry: Registry) -> None:
    assert not observer_module.active()
    Registry.discover(entry_points=[])  # only the built-in logging observer
    assert not observer_module.active()
    recorder = Recorder()
    registry.add_observer(recorder)
    assert observer_module.active()


def test_observers_on_a_discovered_registry_see_router_fallbacks(register_fake: Callable[..., FakeProvider]) -> None:
    registry = Registry.discover(entry_points=[])
    recorder = Recorder()
    registry.add_observer(recorder)
    a = register_fake(registry, "a")
    register_fake(registry, "b")
    a.script(FakeReply(error=ServerError("down", provider="a")))
    assert registry.router("chat").generate_text("hi") == "echo: hi"
    fallback = [event for kind, event in recorder.events if kind == "after" and event.get("fallback_from")]
    assert fallback and fallback[0]["provider"] == "b" and fallback[0]["fallback_from"] == ["a"]
    assert [event["provider"] for kind, event in recorder.events if kind == "before"] == ["a", "b"]
