"""Conversation turns as spans (semconv v1.41 gen-ai-agent-spans.md): a turn is an
``invoke_agent`` INTERNAL span, its model calls (``chat {model}``) and tool runs
(``execute_tool {name}``) are its children; sync, async, streamed, abandoned, failed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from core_otel_plugin.content import CAPTURE_ENV
from core_otel_plugin.observer import OtelObserver
from llm_core.conversation import MaxStepsError
from llm_core.observe import scopes as observer_scopes
from llm_core.registry import Registry
from llm_core.responses import Usage
from llm_core.specs import ProviderSpec
from llm_core.testing import FakeProvider, FakeReply, fake_spec

from .conftest import Telemetry
from .test_event_loop import EXPORT_SECONDS, SlowExporter

STEP = Usage(prompt_tokens=10, completion_tokens=2)


@pytest.fixture(autouse=True)
def _no_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)


def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


def tool_loop(*final: FakeReply) -> FakeProvider:
    """The model calls add(2, 3), then answers."""
    return FakeProvider(
        replies=[FakeReply.calling(("add", {"a": 2, "b": 3}), usage=STEP), *(final or [FakeReply("5", usage=STEP)])]
    )


def by_name(telemetry: Telemetry) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in telemetry.spans():
        found.setdefault(span.name, []).append(span)
    return found


def assert_turn_tree(telemetry: Telemetry, *, calls: int = 2, tools: int = 1) -> Any:
    """One turn span; every chat and execute_tool span its child, within its time."""
    spans = by_name(telemetry)
    (turn,) = spans["invoke_agent"]
    assert turn.kind is SpanKind.INTERNAL
    assert len(spans["chat fake-model"]) == calls
    assert len(spans["execute_tool add"]) == tools
    for child in [*spans["chat fake-model"], *spans["execute_tool add"]]:
        assert child.parent is not None and child.parent.span_id == turn.context.span_id
        assert child.context.trace_id == turn.context.trace_id
        assert turn.start_time <= child.start_time and child.end_time <= turn.end_time
    return turn


def test_a_tool_loop_turn_is_the_parent_of_its_calls_and_tool_runs(registry: Registry, telemetry: Telemetry) -> None:
    answer = tool_loop().conversation(tools=[add]).send("What is 2 + 3?")
    assert answer.content == "5"
    turn = assert_turn_tree(telemetry)
    assert dict(turn.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "fake",
        "llm_core.operation": "conversation.send",
        "gen_ai.response.model": "fake-model",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 20,  # both model calls
        "gen_ai.usage.output_tokens": 4,
        "llm_core.turn.steps": 2,
    }
    assert turn.status.status_code is StatusCode.UNSET
    (tool,) = by_name(telemetry)["execute_tool add"]
    assert tool.kind is SpanKind.INTERNAL
    assert dict(tool.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": answer.steps[0].tool_calls[0].id,
        "gen_ai.tool.description": "Add two numbers.",
    }


def test_turns_nest_under_the_application_span_in_async_code(registry: Registry, telemetry: Telemetry) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")

    async def slow_add(a: int, b: int) -> int:
        "Add two numbers."
        await asyncio.sleep(0.01)
        return a + b

    async def handle(name: str) -> None:
        fake = FakeProvider(
            replies=[
                FakeReply.calling(("slow_add", {"a": 1, "b": 2}), ("slow_add", {"a": 3, "b": 4})),
                FakeReply("done"),
            ]
        )
        with tracer.start_as_current_span(name):
            await fake.aio.conversation(tools=[slow_add]).send(name)

    async def main() -> None:
        await asyncio.gather(handle("request a"), handle("request b"))

    asyncio.run(main())
    spans = by_name(telemetry)
    for name in ("request a", "request b"):
        (app,) = spans[name]
        turns = [s for s in spans["invoke_agent"] if s.parent.span_id == app.context.span_id]
        assert len(turns) == 1
        children = [
            s for s in telemetry.spans() if s.parent is not None and s.parent.span_id == turns[0].context.span_id
        ]
        assert sorted(s.name for s in children) == ["chat fake-model"] * 2 + ["execute_tool slow_add"] * 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_streamed_turn_is_one_span_and_never_the_callers_current_span(
    registry: Registry, telemetry: Telemetry, mode: str
) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")
    seen: list[Any] = []
    with tracer.start_as_current_span("request") as app:
        if mode == "sync":
            for _event in tool_loop().conversation(tools=[add]).stream("What is 2 + 3?"):
                seen.append(trace.get_current_span())
        else:

            async def consume() -> None:
                async for _event in tool_loop().aio.conversation(tools=[add]).stream("What is 2 + 3?"):
                    seen.append(trace.get_current_span())

            asyncio.run(consume())
    assert seen and all(span is app for span in seen)  # between events the caller's span is current
    turn = assert_turn_tree(telemetry)
    assert turn.parent.span_id == app.get_span_context().span_id
    assert turn.attributes["llm_core.operation"] == "conversation.stream"
    assert turn.attributes["gen_ai.usage.input_tokens"] == 20


def test_an_abandoned_stream_ends_its_turn_without_error(registry: Registry, telemetry: Telemetry) -> None:
    events = tool_loop().conversation(tools=[add]).stream("What is 2 + 3?")
    next(events)
    events.close()
    (turn,) = by_name(telemetry)["invoke_agent"]
    assert turn.attributes["llm_core.stream.abandoned"] is True
    assert "error.type" not in turn.attributes
    assert observer_scopes.current() == 0  # nothing left behind in the caller's context


def register(registry: Registry, identifier: str, *replies: FakeReply) -> FakeProvider:
    """A fake registered under ``identifier`` whose factory returns this one instance."""
    spec = fake_spec(identifier)
    instance = FakeProvider(spec=spec, replies=replies)
    registry.register(
        ProviderSpec(spec.identifier, spec.name, spec.features, lambda **_: instance, spec.models, spec.default_model)
    )
    return instance


@pytest.mark.parametrize("backend", ["provider", "router"])
def test_an_abandoned_async_stream_is_closed_at_once(registry: Registry, telemetry: Telemetry, backend: str) -> None:
    """``aclose()`` on a conversation's stream closes the provider's stream then and there (not
    when the generator is collected): its call span (abandoned) and the turn's span have ended
    before the event loop is done."""
    steps = (FakeReply.calling(("add", {"a": 2, "b": 3})), FakeReply("a long answer"))
    if backend == "provider":
        api: Any = FakeProvider(replies=steps).aio
    else:
        register(registry, "alpha", *steps)
        api = registry.router("chat").aio

    async def main() -> list[str]:
        events = api.conversation(tools=[add]).stream("go")
        async for event in events:
            if event.type.value == "TOKEN":
                break
        await events.aclose()
        return [span.name for span in telemetry.spans()]

    ended = asyncio.run(main())
    model = "fake-model"
    assert ended.count(f"chat {model}") == 2 and "invoke_agent" in ended
    spans = by_name(telemetry)
    assert spans[f"chat {model}"][1].attributes["llm_core.stream.abandoned"] is True
    (turn,) = spans["invoke_agent"]
    assert turn.attributes["llm_core.stream.abandoned"] is True
    assert "error.type" not in turn.attributes
    # a router's turn names the provider that answered its last call
    assert turn.attributes["gen_ai.provider.name"] == ("fake" if backend == "provider" else "alpha")


def test_a_failing_tool_has_error_type_and_the_turn_goes_on(registry: Registry, telemetry: Telemetry) -> None:
    def divide(a: int, b: int) -> float:
        "Divide a by b."
        return a / b

    fake = FakeProvider(replies=[FakeReply.calling(("divide", {"a": 1, "b": 0})), FakeReply("cannot")])
    assert fake.conversation(tools=[divide]).send("1/0?").content == "cannot"
    spans = by_name(telemetry)
    (tool,) = spans["execute_tool divide"]
    assert tool.attributes["error.type"] == "ZeroDivisionError"
    assert tool.status.status_code is StatusCode.ERROR
    (turn,) = spans["invoke_agent"]
    assert "error.type" not in turn.attributes


def test_a_turn_that_fails_has_error_type(registry: Registry, telemetry: Telemetry) -> None:
    fake = FakeProvider(replies=[FakeReply.calling(("add", {"a": 1, "b": 1})) for _ in range(2)])
    with pytest.raises(MaxStepsError):
        fake.conversation(tools=[add], max_steps=2).send("loop")
    (turn,) = by_name(telemetry)["invoke_agent"]
    assert turn.attributes["error.type"] == "MaxStepsError"
    assert turn.status.status_code is StatusCode.ERROR
    assert turn.attributes["llm_core.turn.steps"] == 2


def test_what_a_tool_does_nests_under_its_span(registry: Registry, telemetry: Telemetry) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")
    inner = FakeProvider(default_reply=FakeReply("inner answer"))

    def ask(question: str) -> str:
        "Ask another model."
        with tracer.start_as_current_span("tool work"):
            return inner.chat_completion(question).content

    fake = FakeProvider(replies=[FakeReply.calling(("ask", {"question": "hi"})), FakeReply("ok")])
    fake.conversation(tools=[ask]).send("go")
    spans = by_name(telemetry)
    (tool,) = spans["execute_tool ask"]
    (work,) = spans["tool work"]
    assert work.parent.span_id == tool.context.span_id  # the tool's span is current while it runs
    inner_call = next(s for s in spans["chat fake-model"] if s.parent.span_id == work.context.span_id)
    assert inner_call.attributes["gen_ai.operation.name"] == "chat"


def test_without_observers_no_scope_is_opened() -> None:
    """No observer installed (the conftest uninstalls them): a turn builds nothing."""
    scopes: list[int] = []

    def where(a: int, b: int) -> int:
        "Note the scope."
        scopes.append(observer_scopes.current())
        return a + b

    fake = FakeProvider(replies=[FakeReply.calling(("where", {"a": 1, "b": 1})), FakeReply("2")])
    fake.conversation(tools=[where]).send("go")
    assert scopes == [0]


def test_turn_and_tool_spans_do_not_stall_the_event_loop(loop_gaps: Any) -> None:
    """The slow-exporter contract of test_event_loop.py, for turns and tool runs."""
    exporter = SlowExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1))
    Registry().add_observer(OtelObserver(tracer_provider))

    async def turns() -> None:
        for _ in range(5):
            await tool_loop().aio.conversation(tools=[add]).send("What is 2 + 3?")
            await asyncio.sleep(0.01)  # the exporter thread exports meanwhile

    gaps = loop_gaps(turns())
    during = set(exporter.threads)
    tracer_provider.shutdown()
    assert sorted({s.name for s in exporter.exported}) == ["chat fake-model", "execute_tool add", "invoke_agent"]
    assert len(exporter.exported) == 5 * 4
    assert during and threading.main_thread().name not in during
    assert max(gaps) < EXPORT_SECONDS / 2, max(gaps)
