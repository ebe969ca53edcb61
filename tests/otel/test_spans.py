"""Spans and metrics checked against the OpenTelemetry GenAI semantic conventions (semconv v1.41
gen-ai-spans.md / gen-ai-metrics.md): names, attributes, errors, retries, fallbacks, nesting."""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from core_otel_plugin.observer import COST_ATTRIBUTE, DURATION_BUCKETS, TOKEN_BUCKETS
from llm_core.errors import InvalidRequestError, ServerError
from llm_core.pricing import Prices
from llm_core.registry import Registry
from llm_core.responses import Usage
from llm_core.retry import RetryPolicy
from llm_core.specs import ModelInfo
from llm_core.streaming import StreamEventType
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from llm_core.testing.fake import ALL_FEATURES
from llm_core.tools import ToolCall, ToolSpec

from .conftest import Telemetry

NO_WAIT = RetryPolicy(max_attempts=3, initial_delay=0, jitter=0, sleep=lambda _: None)
USAGE = Usage(prompt_tokens=12, completion_tokens=5, thinking_tokens=3)
SECRET_PROMPT = "the prompt text must not be recorded"


def fake(registry: Registry, *replies: FakeReply) -> FakeProvider:
    del registry  # the fixture installed the observer process-wide
    spec = fake_spec(models=[ModelInfo("fake-model", ALL_FEATURES, prices=Prices.of(input="1", output="2"))])
    return FakeProvider(spec=spec, replies=replies, retry=NO_WAIT)


def only(telemetry: Telemetry) -> Any:
    spans = telemetry.spans()
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


def test_chat_span_and_metrics_follow_the_conventions(registry: Registry, telemetry: Telemetry) -> None:
    fake(registry, FakeReply(content="hello", usage=USAGE)).chat_completion(
        SECRET_PROMPT, temperature=0.2, max_tokens=50
    )
    span = only(telemetry)
    assert span.name == "chat fake-model"
    assert span.kind is SpanKind.CLIENT
    attributes = dict(span.attributes)
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "fake",
        "gen_ai.request.model": "fake-model",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 50,
        "gen_ai.response.model": "fake-model",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 8,  # output plus reasoning: what is billed as output
        "gen_ai.usage.reasoning.output_tokens": 3,
        "llm_core.operation": "chat",
        COST_ATTRIBUTE: str(Decimal(12 + 2 * 8) / 1_000_000),
    }
    assert all(SECRET_PROMPT not in str(value) for value in attributes.values())  # no content by default
    tokens = telemetry.points("gen_ai.client.token.usage")
    assert sorted((p.attributes["gen_ai.token.type"], p.sum) for p in tokens) == [("input", 12), ("output", 8)]
    assert list(tokens[0].explicit_bounds) == TOKEN_BUCKETS
    assert tokens[0].attributes["gen_ai.operation.name"] == "chat"
    assert tokens[0].attributes["gen_ai.provider.name"] == "fake"
    assert tokens[0].attributes["gen_ai.request.model"] == "fake-model"
    (duration,) = telemetry.points("gen_ai.client.operation.duration")
    assert duration.count == 1 and list(duration.explicit_bounds) == DURATION_BUCKETS
    assert "error.type" not in duration.attributes


def test_known_providers_use_the_conventions_names_and_hosts(registry: Registry, telemetry: Telemetry) -> None:
    from core_otel_plugin.observer import OtelObserver

    observer = OtelObserver(telemetry.tracer_provider)
    observer.llm_core_before_request(
        {"provider": "gemini", "model": "gemini-2.5-flash", "operation": "chat", "call_id": 1, "attempt": 1}
    )
    observer.llm_core_after_response({"provider": "gemini", "operation": "chat", "call_id": 1, "usage": None})
    span = only(telemetry)
    assert span.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert span.attributes["server.address"] == "generativelanguage.googleapis.com"


def test_tools_and_embeddings(registry: Registry, telemetry: Telemetry) -> None:
    provider = fake(registry, FakeReply(tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "P"})]))
    tool = ToolSpec(name="get_weather", description="weather", parameters={"type": "object", "properties": {}})
    assert provider.chat_completion_with_tools("weather?", [tool]).has_tool_calls
    provider.embeddings(["a b", "c"])
    chat, embeddings = telemetry.spans()
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat.attributes["llm_core.operation"] == "chat_with_tools"
    assert embeddings.name == "embeddings fake-model"
    assert embeddings.attributes["gen_ai.operation.name"] == "embeddings"
    assert embeddings.attributes["gen_ai.usage.input_tokens"] == 3


def test_a_retried_call_is_one_span_with_a_retry_event(registry: Registry, telemetry: Telemetry) -> None:
    fake(registry, FakeReply(error=ServerError("busy")), FakeReply(content="ok")).chat_completion("hi")
    span = only(telemetry)
    assert span.status.status_code is StatusCode.UNSET
    assert [(e.name, dict(e.attributes)) for e in span.events] == [
        ("llm_core.retry", {"error.type": "ServerError", "llm_core.attempt": 1})
    ]
    assert span.attributes["llm_core.attempts"] == 2


def test_a_failed_call_has_error_type(registry: Registry, telemetry: Telemetry) -> None:
    with pytest.raises(InvalidRequestError):
        fake(registry, FakeReply(error=InvalidRequestError("bad"))).chat_completion("hi")
    span = only(telemetry)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "InvalidRequestError"
    (duration,) = telemetry.points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == "InvalidRequestError"


def test_router_fallback_is_an_event_on_the_application_span(registry: Registry, telemetry: Telemetry) -> None:
    registry.register(fake_spec("first"))
    registry.register(fake_spec("second"))
    first = registry.get("first")
    first.retry_policy = NO_WAIT
    first.script(*[FakeReply(error=ServerError("down"))] * 3)  # type: ignore[attr-defined]
    registry.get("second").script(FakeReply(content="from second"))  # type: ignore[attr-defined]
    tracer = telemetry.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("handle request"):
        assert registry.router("chat", prefer=["first", "second"]).chat_completion("hi").content == "from second"
    failed, answered, app = telemetry.spans()
    assert failed.attributes["gen_ai.provider.name"] == "first" and failed.attributes["error.type"] == "ServerError"
    assert [e.name for e in failed.events] == ["llm_core.retry", "llm_core.retry"]
    assert answered.attributes["gen_ai.provider.name"] == "second"
    assert [(e.name, dict(e.attributes)) for e in app.events] == [
        ("llm_core.fallback", {"llm_core.fallback_from": ("first",), "llm_core.answered_by": "second"})
    ]
    assert failed.parent.span_id == app.context.span_id == answered.parent.span_id


@pytest.mark.parametrize("how", ["completed", "failed", "abandoned"])
def test_stream_span_covers_the_whole_stream(registry: Registry, telemetry: Telemetry, how: str) -> None:
    reply = FakeReply(content="one two three", usage=USAGE)
    if how == "failed":
        reply = FakeReply(content="one two three", stream_error=ServerError("cut"), stream_error_after=1)
    events = fake(registry, reply).stream_chat_completion("hi")
    first = next(events)
    assert first.type is StreamEventType.TOKEN
    assert telemetry.spans() == ()  # still open while the stream runs
    if how == "abandoned":
        events.close()  # type: ignore[attr-defined]
    else:
        rest = list(events)
        assert rest[-1].type is StreamEventType.END
    span = only(telemetry)
    assert span.name == "chat fake-model" and span.attributes["llm_core.operation"] == "stream"
    if how == "completed":
        assert span.attributes["gen_ai.usage.output_tokens"] == 8
        assert span.status.status_code is StatusCode.UNSET
    elif how == "failed":
        assert span.attributes["error.type"] == "ServerError"
        assert span.status.status_code is StatusCode.ERROR
    else:
        assert span.attributes["llm_core.stream.abandoned"] is True
        assert "gen_ai.usage.output_tokens" not in span.attributes


def test_async_calls_nest_under_their_own_application_span(registry: Registry, telemetry: Telemetry) -> None:
    provider = fake(registry)
    tracer = telemetry.tracer_provider.get_tracer("app")

    async def handle(name: str) -> None:
        with tracer.start_as_current_span(name):
            await asyncio.sleep(0)
            await provider.aio.chat_completion(name)
            events = [e async for e in provider.aio.stream_chat_completion(name)]
            assert events[-1].type is StreamEventType.END

    async def main() -> None:
        await asyncio.gather(handle("request a"), handle("request b"))

    asyncio.run(main())
    spans = telemetry.spans()
    apps = {s.context.span_id: s for s in spans if s.name.startswith("request")}
    calls = [s for s in spans if s.name.startswith("chat")]
    assert len(calls) == 4
    for call in calls:
        assert call.parent is not None and call.parent.span_id in apps
        assert call.context.trace_id == apps[call.parent.span_id].context.trace_id
    per_app = sorted(apps[c.parent.span_id].name for c in calls if c.parent is not None)
    assert per_app == ["request a", "request a", "request b", "request b"]


def test_threaded_calls_nest_under_the_thread_span(registry: Registry, telemetry: Telemetry) -> None:
    provider = fake(registry)
    tracer = telemetry.tracer_provider.get_tracer("app")

    def work(name: str) -> None:
        with tracer.start_as_current_span(name):
            provider.chat_completion(name)

    threads = [threading.Thread(target=work, args=(f"thread {i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    spans = telemetry.spans()
    apps = {s.context.span_id: s for s in spans if s.name.startswith("thread")}
    calls = [s for s in spans if s.name.startswith("chat")]
    assert len(apps) == len(calls) == 4
    assert sorted(c.parent.span_id for c in calls) == sorted(apps)


CACHED = Usage(prompt_tokens=2048, completion_tokens=10, cached_tokens=1024)
CACHE_PRICES = Prices.of(input="1", cached_input="0.1", output="2")


@pytest.mark.parametrize("how", ["call", "acall", "stream", "astream"])
def test_response_id_cached_tokens_and_cost_are_span_attributes(
    registry: Registry, telemetry: Telemetry, how: str
) -> None:
    """``gen_ai.response.id`` and ``gen_ai.usage.cache_read.input_tokens`` (GenAI semconv v1.40+,
    included in ``gen_ai.usage.input_tokens``), the cost at the cached-input price."""
    del registry
    spec = fake_spec(models=[ModelInfo("fake-model", ALL_FEATURES, prices=CACHE_PRICES)])
    provider = FakeProvider(spec=spec, replies=[FakeReply(content="a b", usage=CACHED, response_id="resp_42")])

    async def astream() -> None:
        async for _ in provider.aio.stream_chat_completion("hi"):
            pass

    if how == "call":
        provider.chat_completion("hi")
    elif how == "acall":
        asyncio.run(provider.aio.chat_completion("hi"))
    elif how == "stream":
        list(provider.stream_chat_completion("hi"))
    else:
        asyncio.run(astream())
    attributes = only(telemetry).attributes
    assert attributes["gen_ai.response.id"] == "resp_42"
    assert attributes["gen_ai.usage.input_tokens"] == 2048
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 1024
    # 1024 uncached x 1 + 1024 cached x 0.1 + 10 x 2 USD per million
    assert attributes[COST_ATTRIBUTE] == str(Decimal("0.0011464"))
