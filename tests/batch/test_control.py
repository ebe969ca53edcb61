"""An earlier run, by its output: resume, the provider's job states, cancel (also of jobs never
created), and the summed cost of a run kept across a crash and an older record."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from llm_core.batch import run
from llm_core.batch.control import cancel, job_statuses, resume
from llm_core.batch.record import record_path
from llm_core.batch.runner import load_summary
from llm_core.errors import InvalidInputError
from llm_core.registry import get_registry
from tests.batch.batchkit import chats, read_lines
from tests.batch.mock_server import BatchServer


@pytest.fixture
def registered(openai: Any) -> Iterator[Any]:
    """``openai`` (pointed at the loopback server) as the registry's ``openai``."""
    with get_registry().override(openai):
        yield openai


def _ids(output: Path) -> list[str]:
    return sorted(line["custom_id"] for line in read_lines(output))


def test_resume_collects_what_a_submit_left(registered: Any, server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    server.polls = 2
    output = tmp_path / "out.jsonl"
    first = run(write_jsonl(chats(10)), output=output, provider="openai", wait=False, chunk_size=4)
    assert first.chunks == {"submitted": 3} and first.done == 0  # one poll: all still running
    asked = job_statuses(output)
    assert [job.state.value for job in asked.jobs] == ["running"] * 3 and asked.done == 0  # asked, not fetched
    done = resume(output, poll_interval=0.01)
    assert done.finished and done.chunks == {"fetched": 3} and _ids(output) == sorted(f"q{n}" for n in range(10))
    assert server.creates == 3


def test_cancel_covers_jobs_never_created(
    registered: Any, server: BatchServer, write_jsonl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.polls = 1000  # running until cancelled
    created = registered.batch.submit

    def submit_once(items: Any, *, tag: str | None = None) -> Any:
        if server.creates:
            raise KeyboardInterrupt  # the run stops as the second job's create call starts
        return created(items, tag=tag)

    monkeypatch.setattr(registered.batch, "submit", submit_once)
    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run(write_jsonl(chats(12)), output=output, provider="openai", chunk_size=4, poll_interval=0.01)
    assert load_summary(output).chunks == {"open": 1, "submitted": 1, "submitting": 1}
    stopped = cancel(output)
    assert [job.state.value for job in stopped.jobs] == ["cancelled"] and stopped.cancelled
    finished = resume(output, poll_interval=0.01)
    assert finished.finished and server.creates == 1  # the jobs not created are not created now
    lines = read_lines(output)
    assert sorted(line["custom_id"] for line in lines) == sorted(f"q{n}" for n in range(12))
    unsent = [line for line in lines if "before this item was submitted" in str(line.get("error"))]
    assert len(unsent) == 8 and {line["error"]["type"] for line in unsent} == {"ProviderError"}


def test_cancel_leaves_a_finished_run_finished(
    registered: Any, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    server.polls = 1
    output = tmp_path / "out.jsonl"
    assert run(write_jsonl(chats(4)), output=output, provider="openai", poll_interval=0.01).finished
    after = cancel(output)
    assert after.finished and not after.cancelled and after.done == 4
    assert not load_summary(output).cancelled


def test_a_local_run_cannot_be_cancelled(registered: Any, write_jsonl, tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    run(write_jsonl(chats(3)), output=output, provider="openai", mode="local")
    with pytest.raises(InvalidInputError, match="local run"):
        cancel(output)


def test_cost_is_summed_and_survives_a_lost_record(registered: Any, write_jsonl, tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    summary = run(write_jsonl(chats(5)), output=output, provider="openai", mode="local")
    costs = [Decimal(line["response"]["usage"]["cost"]) for line in read_lines(output)]
    assert summary.cost == sum(costs) > 0 and summary.priced == 5 and summary.fully_priced
    # as after a crash between output and record, in a record written before costs were kept
    with sqlite3.connect(record_path(output)) as db:
        db.execute("ALTER TABLE items DROP COLUMN cost_picodollars")
        db.execute("UPDATE items SET done = 0, ok = NULL, tokens = NULL")
    again = resume(output)
    assert again.cost == summary.cost and again.tokens == summary.tokens and again.done == 5
    assert len(read_lines(output)) == 5  # nothing was run twice


def test_batch_items_are_priced_at_the_batch_share_of_the_list_price(
    registered: Any, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    output = tmp_path / "out.jsonl"
    summary = run(write_jsonl(chats(3)), output=output, provider="openai", poll_interval=0.01)
    assert summary.finished and summary.tokens == 45
    # gpt-5.4-mini lists $0.75 in / $4.50 out per million; the Batch API charges half of that
    each = (10 * Decimal("0.75") + 5 * Decimal("4.50")) / 1_000_000 / 2
    assert [Decimal(line["response"]["usage"]["cost"]) for line in read_lines(output)] == [each] * 3
    assert summary.cost == 3 * each and summary.priced == 3


def test_unknown_cost_stays_unknown(registered: Any, server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    unpriced = [{**chat, "options": {"model": "gpt-6-astra"}} for chat in chats(3)]  # no list price
    summary = run(write_jsonl(unpriced), output=output, provider="openai", poll_interval=0.01)
    assert summary.finished and summary.tokens == 45
    assert summary.cost is None and summary.priced == 0  # never shown as 0
