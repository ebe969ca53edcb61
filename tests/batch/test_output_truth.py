"""On resume the output is the truth and the job record a cache of it: what the output holds is
done, anything else runs again (a local item is called again, a batch job's results are read
again from the provider, never a new job for them); a damaged output or record is a typed error
naming the file (and the line), never a raw exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llm_core.batch import BatchFileError, run
from llm_core.batch.control import resume
from llm_core.batch.record import record_path
from llm_core.batch.runner import load_summary
from llm_core.registry import get_registry
from tests.batch.batchkit import chats, read_lines
from tests.batch.mock_server import BatchServer

ITEMS = 40


def _ids(output: Path) -> list[str]:
    return sorted(line["custom_id"] for line in read_lines(output))


def _all_once(output: Path, count: int = ITEMS) -> None:
    assert _ids(output) == sorted(f"q{n}" for n in range(count))


def _keep_lines(output: Path, count: int) -> None:
    lines = output.read_bytes().splitlines(keepends=True)
    output.write_bytes(b"".join(lines[:count]))


def _delete_record(output: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(record_path(output)) + suffix).unlink(missing_ok=True)


@pytest.fixture
def done_run(openai: Any, server: BatchServer, write_jsonl, tmp_path: Path) -> tuple[Path, Path]:
    """``(input, output)`` of a finished local run of 40 items."""
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    assert run(source, output=output, provider=openai, mode="local").finished
    assert server.single_calls == ITEMS
    return source, output


def _again(source: Path, output: Path, openai: Any, mode: str = "local") -> Any:
    return run(source, output=output, provider=openai, mode=mode, poll_interval=0.01, chunk_size=16)


# -- local mode ----------------------------------------------------------------------------------


def test_lines_lost_from_the_output_run_again(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    _keep_lines(output, 25)
    assert load_summary(output).output_changed and not load_summary(output).finished  # `results` resumes it
    summary = _again(source, output, openai)
    assert (summary.done, summary.total) == (ITEMS, ITEMS) and not summary.output_changed
    assert server.single_calls == ITEMS + 15  # only the 15 lost items were called again
    _all_once(output)


def test_a_deleted_output_runs_every_item_again(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    output.unlink()
    assert _again(source, output, openai).done == ITEMS
    assert server.single_calls == 2 * ITEMS
    _all_once(output)


def test_an_output_cut_inside_a_line_keeps_the_whole_lines(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    data = output.read_bytes()
    cut = sum(len(line) for line in data.splitlines(keepends=True)[:10]) + 7  # 10 lines and 7 bytes
    output.write_bytes(data[:cut])
    assert _again(source, output, openai).done == ITEMS
    assert server.single_calls == ITEMS + 30
    _all_once(output)


def test_a_last_line_without_its_newline_is_kept(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    output.write_bytes(output.read_bytes().rstrip(b"\n"))  # as an editor might save it
    assert _again(source, output, openai).done == ITEMS
    assert server.single_calls == ITEMS  # nothing ran again
    assert output.read_bytes().endswith(b"\n")
    _all_once(output)


def test_a_deleted_record_is_rebuilt_from_the_output(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    _keep_lines(output, 30)
    _delete_record(output)
    summary = _again(source, output, openai)
    assert (summary.done, summary.total, summary.tokens) == (ITEMS, ITEMS, 15 * ITEMS)
    assert server.single_calls == ITEMS + 10  # never the 30 the output holds
    _all_once(output)


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (b"not json at all\n", "not JSON"),
        (b'{"custom_id": "q3", "ok": true, "response": {}, "kind": "chat"}\n', "custom_id 'q3' is there twice"),
        (b'{"custom_id": "stranger", "ok": true, "response": {}, "kind": "chat"}\n', "not in this run's input"),
        (b'{"custom_id": "q99"}\n', "not a result line"),
        (b'["q1"]\n', "not a result line"),
        (b'{"custom_id": "caf\xe9", "ok": true}\n', "not UTF-8"),
    ],
)
def test_a_damaged_output_line_is_named(done_run, openai: Any, server: BatchServer, damage: bytes, says: str) -> None:
    source, output = done_run
    lines = output.read_bytes().splitlines(keepends=True)
    output.write_bytes(b"".join([*lines[:6], damage, *lines[6:]]))
    before = output.read_bytes()
    with pytest.raises(BatchFileError, match=says) as caught:
        _again(source, output, openai)
    assert f"{output}: line 7: " in str(caught.value)
    assert (caught.value.path, caught.value.line) == (output, 7)
    assert server.single_calls == ITEMS  # nothing was sent
    assert output.read_bytes() == before  # nor written


def test_a_damaged_record_is_named(done_run, openai: Any, server: BatchServer) -> None:
    source, output = done_run
    _delete_record(output)
    record_path(output).write_bytes(b"this is not a job record" * 200)
    for attempt in (lambda: _again(source, output, openai), lambda: load_summary(output), lambda: resume(output)):
        with pytest.raises(BatchFileError, match="cannot be read") as caught:
            attempt()
        assert str(record_path(output)) in str(caught.value) and caught.value.path == record_path(output)
        assert isinstance(caught.value.__cause__, Exception)
    assert server.single_calls == ITEMS


# -- batch mode ----------------------------------------------------------------------------------


def test_lost_batch_results_are_read_again_from_their_jobs(
    openai: Any, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    assert _again(source, output, openai, "batch").finished
    assert (server.creates, len(server.downloads)) == (3, 3)  # 16 + 16 + 8
    lines = read_lines(output)
    output.write_text("".join(json.dumps(line) + "\n" for line in lines if line["custom_id"] not in {"q1", "q20"}))
    summary = _again(source, output, openai, "batch")
    assert summary.finished and summary.chunks == {"fetched": 3}
    assert server.creates == 3  # no new job: the two chunks' results were downloaded again
    assert len(server.downloads) == 5
    _all_once(output)


def test_a_batch_run_without_its_record_sends_only_what_the_output_lacks(
    openai: Any, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    assert _again(source, output, openai, "batch").finished
    _keep_lines(output, 30)
    _delete_record(output)
    summary = _again(source, output, openai, "batch")
    assert summary.finished and summary.done == ITEMS
    sent = sorted(r["custom_id"] for job in server.jobs.values() for r in job.requests)
    assert len(sent) == ITEMS + 10  # the 30 in the output were not sent again
    _all_once(output)


def test_items_kept_out_of_a_job_and_lost_again_get_a_new_job(
    openai: Any, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    assert _again(source, output, openai, "batch").finished
    _keep_lines(output, 30)
    _delete_record(output)
    assert _again(source, output, openai, "batch").finished  # the 30 in the output were sent in no job
    _keep_lines(output, 20)  # ten of those 30 lost now
    summary = _again(source, output, openai, "batch")
    assert summary.finished and summary.done == ITEMS
    _all_once(output)


def test_status_sees_a_changed_output(registered_openai: Any, done_run) -> None:
    _source, output = done_run
    assert not load_summary(output).output_changed
    with open(output, "a") as handle:
        handle.write("\n")
    assert load_summary(output).output_changed


@pytest.fixture
def registered_openai(openai: Any) -> Any:
    with get_registry().override(openai):
        yield openai


def test_the_batch_errors_pickle_with_their_attributes(tmp_path: Path) -> None:
    import pickle

    from llm_core.batch import BatchBusyError

    busy = BatchBusyError("busy", pid=42, host="h", started="2026-12-01T00:00:00+00:00")
    damaged = BatchFileError("damaged", path=tmp_path / "out.jsonl", line=7)
    for error, fields in ((busy, ("pid", "host", "started")), (damaged, ("path", "line"))):
        loaded = pickle.loads(pickle.dumps(error))
        assert type(loaded) is type(error) and str(loaded) == str(error)
        assert all(getattr(loaded, name) == getattr(error, name) for name in fields)


def test_a_record_whose_input_was_never_read_in_full_says_so(tmp_path: Path) -> None:
    from llm_core.batch.control import cancel, job_statuses
    from llm_core.batch.record import JobRecord
    from llm_core.errors import InvalidInputError

    output = tmp_path / "out.jsonl"
    JobRecord(record_path(output)).close()  # as a runner killed while it read its input leaves it
    for attempt in (resume, cancel, job_statuses):
        with pytest.raises(InvalidInputError, match="never finished reading its input: run it again with its input"):
            attempt(output)
