"""What observers hear: before each attempt, after a success, on each failure — for every kind
of call, sync and async, with no secrets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from llm_core import ChatMessage, DocumentPart, ImagePart, TextPart
from llm_core.decisions import DecisionAnswer
from llm_core.errors import (
    AuthenticationError,
    InvalidDecisionResponse,
    InvalidResponseError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from llm_core.observe import observers
from llm_core.operations import OPERATIONS
from llm_core.registry import Registry
from llm_core.responses import Usage
from llm_core.retry import RetryPolicy
from llm_core.specs import ModelInfo
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from llm_core.testing.fake import ALL_FEATURES, PNG_1X1
from llm_core.testing.scenarios import PDF_DOCUMENT
from llm_core.tools import ToolSpec

KEY = "sk-observer-secret-0123456789"
NO_WAIT = RetryPolicy(max_attempts=3, initial_delay=0, jitter=0, sleep=lambda _: None)


class City(BaseModel):
    name: str


def fake(*replies: FakeReply, **config: Any) -> FakeProvider:
    return FakeProvider(replies=replies, api_key=KEY, retry=config.pop("retry", NO_WAIT), **config)


TOOL = ToolSpec(name="lookup", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
PDF_MESSAGE = ChatMessage.user([TextPart(text="Sum?"), DocumentPart(data=PDF_DOCUMENT, mime_type="application/pdf")])
IMAGE_MESSAGE = ChatMessage.user([TextPart(text="Colour?"), ImagePart(data=PNG_1X1, mime_type="image/png")])
QUESTIONS = [{"kind": "yes_no", "key": "ok", "instructions": "Is it fine?"}]

# The operation and feature names observers hear are spelled out, not read from llm_core: they
# are a stable interface (OTel spans and users' observers key on them). Every operation's name
# must appear here (test_every_operation_is_heard below).
CALLS: dict[str, tuple[Any, str, list[str]]] = {
    # name: (call, operation, features)
    "chat": (lambda p: p.chat_completion("hi"), "chat", ["chat"]),
    "complete": (lambda p: p.complete("hi"), "complete", ["completion"]),
    "thinking": (lambda p: p.chat_completion("hi", thinking=True), "chat", ["chat", "thinking"]),
    "tools": (lambda p: p.chat_completion_with_tools("hi", [TOOL]), "chat_with_tools", ["tools"]),
    "json": (lambda p: p.generate_json("hi"), "generate_json", ["json_mode"]),
    "vision": (lambda p: p.analyze_image(PNG_1X1, mime_type="image/png"), "analyze_image", ["vision"]),
    "image part": (lambda p: p.chat_completion([IMAGE_MESSAGE]), "chat", ["chat", "vision"]),
    "document": (lambda p: p.chat_completion([PDF_MESSAGE]), "chat", ["chat", "documents"]),
    "embeddings": (lambda p: p.embeddings(["a", "b"]), "embeddings", ["embeddings"]),
    "image": (lambda p: p.generate_image("a red square"), "generate_image", ["image"]),
    "native decision": (lambda p: p.decide("task", QUESTIONS), "decide", ["decision"]),
    "fallback decision": (
        lambda p: p.decide("task", QUESTIONS, model="fake-fallback"),
        "decide",
        ["decision", "json_mode"],
    ),
    "stream": (lambda p: list(p.stream_chat_completion("hi")), "stream", ["streaming"]),
    "list models": (lambda p: p.available_models(), "list_models", []),
    "count tokens": (lambda p: p.count_tokens("hi"), "count_tokens", ["token_counting"]),
}
REPLIES = {"json": FakeReply(content="{}"), "fallback decision": FakeReply(content='{"ok": "yes"}')}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_each_call_is_announced_then_reported(recorder: Any, name: str) -> None:
    call, operation, features = CALLS[name]
    provider = fake(*([REPLIES[name]] if name in REPLIES else []))
    call(provider)
    assert recorder.kinds() == ["before", "after"]
    before, after = recorder.of("before")[0], recorder.of("after")[0]
    assert before["provider"] == after["provider"] == "fake"
    assert before["operation"] == after["operation"] == operation
    assert before["features"] == features
    assert before["attempt"] == 1 and after["attempts"] == 1
    assert before["call_id"] == after["call_id"] > 0
    assert before["model"] == after["model"]
    assert after["latency_ms"] >= 0


def test_every_operation_is_heard() -> None:
    assert {op.observed_as for op in OPERATIONS} <= {operation for _, operation, _ in CALLS.values()}


def test_usage_is_the_parsed_usage_of_the_response(recorder: Any) -> None:
    usage = Usage(prompt_tokens=11, completion_tokens=7, thinking_tokens=3)
    fake(FakeReply(content="hello", usage=usage)).chat_completion("hi")
    assert (
        recorder.of("after")[0]["usage"]
        == usage.model_dump()
        == {
            "prompt_tokens": 11,
            "completion_tokens": 7,
            "total_tokens": 21,
            "thinking_tokens": 3,
            "cached_tokens": None,  # not reported
            "tool_uses": None,  # no built-in tool ran
            "cost": None,  # the fake model has no prices
        }
    )


def test_a_stream_reports_its_usage_when_it_ends(recorder: Any) -> None:
    usage = Usage(prompt_tokens=4, completion_tokens=2)
    events = fake(FakeReply(content="one two", usage=usage)).stream_chat_completion("count")
    first = next(events)
    assert recorder.kinds() == ["before"]  # nothing is reported while the stream is open
    assert first.text == "one "
    list(events)
    assert recorder.kinds() == ["before", "after"]
    assert recorder.of("after")[0]["usage"]["prompt_tokens"] == 4
    assert recorder.of("after")[0]["usage"]["completion_tokens"] == 2


def test_retries_are_observed_attempt_by_attempt(recorder: Any) -> None:
    provider = fake(FakeReply(error=RateLimitError("slow down")), FakeReply(error=ServerError("oops")), FakeReply("ok"))
    assert provider.chat_completion("hi").content == "ok"
    assert recorder.kinds() == ["before", "error", "before", "error", "before", "after"]
    assert [e["attempt"] for e in recorder.of("before")] == [1, 2, 3]
    errors = recorder.of("error")
    assert [type(e["error"]) for e in errors] == [RateLimitError, ServerError]
    assert [e["will_retry"] for e in errors] == [True, True]
    assert recorder.of("after")[0]["attempts"] == 3
    assert len({e["call_id"] for _, e in recorder.events}) == 1


def test_the_last_failed_attempt_says_no_retry(recorder: Any) -> None:
    provider = fake(*[FakeReply(error=ServerError("down"))] * 3)
    with pytest.raises(ServerError):
        provider.chat_completion("hi")
    assert [e["will_retry"] for e in recorder.of("error")] == [True, True, False]
    assert not recorder.of("after")


def test_a_failure_that_retries_cannot_cure_is_reported_once(recorder: Any) -> None:
    with pytest.raises(AuthenticationError):
        fake(FakeReply(error=AuthenticationError("bad key", status_code=401))).chat_completion("hi")
    assert recorder.kinds() == ["before", "error"]
    assert recorder.of("error")[0]["will_retry"] is False


def test_observers_see_the_mapped_error_not_the_sdk_exception(recorder: Any) -> None:
    raw = ConnectionResetError("peer reset")
    with pytest.raises(ProviderError) as raised:
        fake(FakeReply(error=raw), retry=RetryPolicy.none()).chat_completion("hi")  # type: ignore[arg-type]
    error = recorder.of("error")[0]["error"]
    assert error is raised.value
    assert isinstance(error, ProviderError) and error.__cause__ is raw


def test_a_response_that_cannot_be_parsed_is_an_error_not_a_success(recorder: Any) -> None:
    wrong = {"ok": DecisionAnswer(key="ok", kind="yes_no", value=1.5)}
    with pytest.raises(InvalidDecisionResponse):
        fake(FakeReply(answers=wrong)).decide("task", QUESTIONS)
    assert recorder.kinds() == ["before", "error"]
    assert isinstance(recorder.of("error")[0]["error"], InvalidDecisionResponse)
    assert recorder.of("error")[0]["will_retry"] is False


def test_json_that_fails_its_schema_is_reported_as_answered(recorder: Any) -> None:
    """The provider answered (and used tokens); the schema check is the caller's failure."""
    with pytest.raises(InvalidResponseError):
        fake(FakeReply(content="not json", usage=Usage(prompt_tokens=3))).generate_json("hi", City)
    assert recorder.kinds() == ["before", "after"]
    assert recorder.of("after")[0]["usage"]["prompt_tokens"] == 3


def test_a_stream_failing_after_its_first_chunk_is_reported(recorder: Any) -> None:
    reply = FakeReply(content="a b c", stream_error=ProviderConnectionError("cut"), stream_error_after=2)
    events = list(fake(reply).stream_chat_completion("hi"))
    assert [e.type.value for e in events][-2:] == ["ERROR", "END"]
    assert recorder.kinds() == ["before", "error"]
    assert recorder.of("error")[0]["will_retry"] is False  # a started stream is never retried
    assert isinstance(recorder.of("error")[0]["error"], ProviderConnectionError)


def test_a_stream_failing_to_open_is_retried_and_reported_per_attempt(recorder: Any) -> None:
    broken = FakeReply(content="x", stream_error=ServerError("503"), stream_error_after=0)
    events = list(fake(broken, FakeReply(content="fine")).stream_chat_completion("hi"))
    assert "".join(e.text or "" for e in events) == "fine"
    assert recorder.kinds() == ["before", "error", "before", "after"]


def test_async_calls_are_observed_the_same_way(recorder: Any) -> None:
    provider = fake(FakeReply(error=ServerError("oops")), FakeReply(content="ok"), FakeReply(content="a b"))

    async def run() -> None:
        await provider.aio.chat_completion("hi", thinking=True)
        [event async for event in provider.aio.stream_chat_completion("hi")]

    asyncio.run(run())
    assert recorder.kinds() == ["before", "error", "before", "after", "before", "after"]
    assert recorder.of("before")[0]["features"] == ["chat", "thinking"]
    assert recorder.of("before")[2]["features"] == ["streaming"]
    assert recorder.of("after")[1]["operation"] == "stream"


def test_no_event_carries_the_api_key(recorder: Any) -> None:
    provider = fake(FakeReply(error=AuthenticationError(f"rejected key for {KEY[:3]}...")), FakeReply("ok"))
    with pytest.raises(AuthenticationError):
        provider.chat_completion("hi")
    provider.chat_completion("hi")
    assert recorder.events
    assert all(KEY not in repr(event) and KEY not in str(event) for _, event in recorder.events)


def test_fallback_says_which_provider_answered(registry: Registry, recorder: Any) -> None:
    registry.register(fake_spec("first"))
    registry.register(fake_spec("second"))
    router = registry.router("chat", prefer=["first", "second"])
    registry.get("first").script(*[FakeReply(error=ServerError("down"))] * 3)  # type: ignore[attr-defined]
    registry.get("first").retry_policy = NO_WAIT
    registry.get("second").script(FakeReply(content="from second"))  # type: ignore[attr-defined]
    assert router.chat_completion("hi").content == "from second"
    final = recorder.of("after")[-1]
    assert final["provider"] == "second"
    assert final["fallback_from"] == ["first"]
    assert [e["provider"] for e in recorder.of("error")] == ["first"] * 3


def test_an_observer_that_raises_never_breaks_a_call(
    registry: Registry, recorder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        from llm_core import hookimpl

        @hookimpl
        def llm_core_before_request(self, event: dict[str, Any]) -> None:
            raise RuntimeError("observer bug")

    registry.add_observer(Broken())
    with caplog.at_level("ERROR", logger="llm_core.calls"):
        assert fake(FakeReply(content="still fine")).chat_completion("hi").content == "still fine"
    assert "observer hook llm_core_before_request failed (observer Broken)" in caplog.text
    assert "RuntimeError: observer bug" in caplog.text
    assert recorder.kinds() == ["before", "after"]  # the other observers still hear everything


def test_nothing_is_emitted_without_observers() -> None:
    registry = Registry()
    assert registry.plugin_manager is None
    assert not observers.active()
    provider = fake(FakeReply(content="quiet"))
    assert provider.chat_completion("hi").content == "quiet"


def test_per_model_features_are_reported_for_the_model_used(recorder: Any) -> None:
    spec = fake_spec(models=[ModelInfo("fake-model", ALL_FEATURES), ModelInfo("small", ["chat", "completion"])])
    FakeProvider(spec=spec, replies=[FakeReply(content="x")]).chat_completion("hi", model="small")
    before = recorder.of("before")[0]
    assert before["model"] == "small" and before["features"] == ["chat"]
