"""Batches as spans: reading a provider job's results is an ``llm_core.batch.results`` span with
one inference-shaped child span per item (response attributes or ``error.type``); a whole
``llm_core.batch.run`` is an ``llm_core.batch.run`` span over its submissions, polls, readings
and (local mode) calls. The provider jobs run through the real SDKs against the loopback batch
server of tests/batch (mock_server.py says where each shape comes from)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from llm_core.batch import run
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.testing import FakeProvider
from tests.batch.mock_server import BatchServer

from .conftest import Telemetry

FAST_RETRY = RetryPolicy(max_attempts=2, initial_delay=0.0, max_delay=0.0, jitter=0.0)
ITEMS = [
    *({"custom_id": f"q{n}", "messages": f"q number {n}"} for n in range(3)),
    {"custom_id": "bad", "messages": "FAIL"},
]


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(polls=1) as running:
        yield running


@pytest.fixture(params=["openai", "gemini"])
def provider(request: pytest.FixtureRequest, server: BatchServer) -> Any:
    if request.param == "openai":
        from core_openai_plugin.provider import OpenAIProvider

        return OpenAIProvider(
            api_key="sk-test-otel-0123456789", base_url=server.url + "/v1", retry=FAST_RETRY, timeout=10
        )
    from core_gemini_plugin.provider import GeminiProvider

    return GeminiProvider(api_key="AIzaSy-test-otel-0123456789", base_url=server.url, retry=FAST_RETRY, timeout=10)


def children(telemetry: Telemetry, parent: Any) -> list[Any]:
    return [s for s in telemetry.spans() if s.parent is not None and s.parent.span_id == parent.context.span_id]


def check_results_span(telemetry: Telemetry, provider: Any, job_id: str) -> None:
    (reading,) = [s for s in telemetry.spans() if s.name == "llm_core.batch.results"]
    assert reading.kind is SpanKind.INTERNAL
    assert reading.attributes["llm_core.batch.id"] == job_id
    assert reading.attributes["llm_core.batch.items"] == 4
    assert reading.attributes["llm_core.batch.read"] == 4
    assert reading.attributes["llm_core.batch.failed"] == 1
    items = {s.attributes["llm_core.batch.custom_id"]: s for s in children(telemetry, reading)}
    assert sorted(items) == ["bad", "q0", "q1", "q2"]
    answer = items["q1"]
    assert answer.kind is SpanKind.CLIENT
    assert answer.name == f"chat {answer.attributes['gen_ai.request.model']}"
    assert answer.attributes["gen_ai.operation.name"] == "chat"
    assert (
        answer.attributes["gen_ai.provider.name"] == {"openai": "openai", "gemini": "gcp.gemini"}[provider.identifier]
    )
    assert answer.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert answer.attributes["gen_ai.response.id"]  # both services name each answer (mock_server.py)
    # the loopback server reports 15 tokens in all for every item (mock_server.py)
    assert answer.attributes["gen_ai.usage.input_tokens"] + answer.attributes["gen_ai.usage.output_tokens"] == 15
    assert answer.status.status_code is StatusCode.UNSET
    failed = items["bad"]
    assert failed.attributes["error.type"] == "InvalidRequestError"
    assert failed.status.status_code is StatusCode.ERROR


def test_a_job_s_results_are_a_span_with_one_span_per_item(
    registry: Registry, telemetry: Telemetry, provider: Any
) -> None:
    job = provider.batch.submit(ITEMS)
    job.wait(poll_interval=0.01, timeout=10)
    assert len(dict(job.results())) == 4
    check_results_span(telemetry, provider, job.id)
    names = [s.name for s in telemetry.spans()]
    assert "batch_create" in names and "batch_status" in names  # the job's own calls, as call spans


def test_async_results_too(registry: Registry, telemetry: Telemetry, provider: Any) -> None:
    async def main() -> str:
        job = await provider.batch.asubmit(ITEMS)
        await job.aio.wait(poll_interval=0.01, timeout=10)
        assert len([pair async for pair in job.aio.results()]) == 4
        return str(job.id)

    check_results_span(telemetry, provider, asyncio.run(main()))


def test_a_reader_that_stops_early_ends_the_span_without_error(
    registry: Registry, telemetry: Telemetry, provider: Any
) -> None:
    job = provider.batch.submit(ITEMS)
    job.wait(poll_interval=0.01, timeout=10)
    results = job.results()
    next(results)
    results.close()  # type: ignore[attr-defined]
    (reading,) = [s for s in telemetry.spans() if s.name == "llm_core.batch.results"]
    assert reading.attributes["llm_core.batch.read"] == 1
    assert "error.type" not in reading.attributes


def test_a_batch_run_is_the_parent_of_its_job_calls_and_readings(
    registry: Registry, telemetry: Telemetry, provider: Any, tmp_path: Path
) -> None:
    tracer = telemetry.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("nightly job") as app:
        summary = run(ITEMS, output=tmp_path / "out.jsonl", provider=provider, poll_interval=0.01)
    assert summary.done == 4
    (whole,) = [s for s in telemetry.spans() if s.name == "llm_core.batch.run"]
    assert whole.parent.span_id == app.get_span_context().span_id
    assert whole.attributes["llm_core.batch.mode"] == "batch"
    assert whole.attributes["llm_core.batch.provider"] == provider.identifier
    assert (whole.attributes["llm_core.batch.read"], whole.attributes["llm_core.batch.failed"]) == (4, 1)
    under = {s.name for s in children(telemetry, whole)}
    assert {"batch_create", "batch_status", "llm_core.batch.results"} <= under


def test_local_mode_items_are_call_spans_under_the_run(
    registry: Registry, telemetry: Telemetry, tmp_path: Path
) -> None:
    summary = run(ITEMS[:3], output=tmp_path / "out.jsonl", provider=FakeProvider(), mode="local", concurrency=2)
    assert summary.done == 3
    (whole,) = [s for s in telemetry.spans() if s.name == "llm_core.batch.run"]
    assert whole.attributes["llm_core.batch.mode"] == "local"
    calls = children(telemetry, whole)
    assert [s.name for s in calls] == ["chat fake-model"] * 3
    assert all(s.kind is SpanKind.CLIENT for s in calls)
