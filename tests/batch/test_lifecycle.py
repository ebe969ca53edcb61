"""Both plugins' batch jobs through the real SDKs against the loopback server: every lifecycle
the services have, per-item failures as typed errors, sync and async."""

from __future__ import annotations

import pytest

from llm_core.batch import BatchState, JsonResponse
from llm_core.decisions import DecisionResponse
from llm_core.errors import InvalidInputError, InvalidRequestError, ProviderError, ProviderTimeoutError
from llm_core.responses import CompletionResponse, EmbeddingResponse
from tests.batch.batchkit import chats

PROVIDERS = ["openai", "gemini"]


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest):
    return request.getfixturevalue(request.param)


def _items() -> list[dict]:
    return [*chats(3), {"custom_id": "bad", "messages": "FAIL please"}]


def test_completed_job_with_a_partial_failure(provider, server) -> None:
    job = provider.batch.submit(_items())
    assert job.status().state in (BatchState.QUEUED, BatchState.RUNNING)
    final = job.wait(poll_interval=0.01, timeout=10)
    assert final.state is BatchState.COMPLETED
    results = dict(job.results())
    assert list(results) == ["q0", "q1", "q2", "bad"]
    for n in range(3):
        answer = results[f"q{n}"]
        assert isinstance(answer, CompletionResponse)
        assert answer.content == f"echo: q number {n}"
        assert answer.usage.total_tokens == 15
    assert isinstance(results["bad"], InvalidRequestError)  # that item's error, not the job's
    assert results["bad"].status_code == 400
    assert server.creates == 1


@pytest.mark.parametrize("outcome", ["expired", "cancelled"])
def test_job_that_ended_early_gives_every_item(outcome, provider, server) -> None:
    server.outcome = outcome
    job = provider.batch.submit(chats(4))
    assert job.wait(poll_interval=0.01, timeout=10).state.value == outcome
    results = dict(job.results())
    assert sorted(results) == ["q0", "q1", "q2", "q3"]
    assert [results[f"q{n}"].content for n in (0, 1)] == ["echo: q number 0", "echo: q number 1"]
    late = ProviderTimeoutError if outcome == "expired" else ProviderError
    assert all(isinstance(results[f"q{n}"], late) for n in (2, 3))


def test_failed_job_gives_each_item_the_job_error(provider, server) -> None:
    server.outcome = "failed"
    job = provider.batch.submit(chats(2))
    final = job.wait(poll_interval=0.01, timeout=10)
    assert final.state is BatchState.FAILED
    results = dict(job.results())
    assert sorted(results) == ["q0", "q1"]
    assert all(isinstance(e, ProviderError) and "failed" in str(e) for e in results.values())


def test_cancel(provider, server) -> None:
    job = provider.batch.submit(chats(2))
    job.cancel()
    assert job.wait(poll_interval=0.01, timeout=10).state is BatchState.CANCELLED
    assert next(iter(server.jobs.values())).state == "cancelled"


def test_results_before_the_job_is_done_is_refused(provider) -> None:
    job = provider.batch.submit(chats(1))
    with pytest.raises(InvalidInputError, match="wait"):
        job.results()


def test_json_embedding_and_decision_items(provider, server) -> None:
    schema = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}
    job = provider.batch.submit([{"custom_id": "j", "kind": "json", "prompt": "json please", "schema": schema}])
    job.wait(poll_interval=0.01, timeout=10)
    ((_, answer),) = job.results()
    assert isinstance(answer, JsonResponse)
    assert answer.data == {"echo": "json please"}
    assert answer.usage.total_tokens == 15
    embed = provider.batch.submit(
        [
            {"custom_id": "e1", "kind": "embedding", "input": ["a", "bbb"]},
            {"custom_id": "e2", "kind": "embedding", "input": "cc"},
        ]
    )
    embed.wait(poll_interval=0.01, timeout=10)
    vectors = dict(embed.results())
    assert isinstance(vectors["e1"], EmbeddingResponse)
    assert vectors["e1"].vectors == [[1.0, 1.0, 0.5], [3.0, 1.0, 0.5]]
    assert vectors["e2"].vectors == [[2.0, 1.0, 0.5]]


def test_decision_items_go_as_structured_output(provider, server) -> None:
    question = {"key": "ok", "kind": "yes_no", "instructions": "Is it fine?"}
    model = {"openai": "gpt-5.4-mini", "gemini": "gemini-2.5-flash"}[provider.identifier]
    item = {
        "custom_id": "d",
        "kind": "decision",
        "subject": "a task",
        "questions": [question],
        "options": {"model": model},
    }
    job = provider.batch.submit([item])
    job.wait(poll_interval=0.01, timeout=10)
    ((_, answer),) = job.results()
    assert isinstance(answer, DecisionResponse)  # batch APIs have no decision endpoint: decide()'s fallback
    assert answer.answers["ok"].choice == "yes"
    assert answer.metadata == {"fallback": "structured_output"}


async def test_async_twins(provider, server) -> None:
    job = await provider.batch.asubmit(_items())
    final = await job.aio.wait(poll_interval=0.01, timeout=10)
    assert final.state is BatchState.COMPLETED
    results = {cid: answer async for cid, answer in job.aio.results()}
    assert results["q1"].content == "echo: q number 1"
    assert isinstance(results["bad"], InvalidRequestError)
    again = await provider.batch.asubmit(chats(1, "z"))
    await again.aio.cancel()
    assert (await again.aio.wait(poll_interval=0.01, timeout=10)).state is BatchState.CANCELLED


def test_a_job_found_again_by_its_tag(provider, server) -> None:
    job = provider.batch.submit(chats(1), tag="llm-core-fixed-tag")
    assert provider.batch.find("llm-core-fixed-tag") == job.id
    assert provider.batch.find("llm-core-other") is None
