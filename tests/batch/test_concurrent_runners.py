"""Two runners on one output, each in a process of its own against the loopback server: one
writes it, the other refuses at once with ``BatchBusyError`` naming the holder; a holder that
dies (``kill -9``) leaves no lock that blocks the next run."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from llm_core.batch.errors import BatchBusyError
from llm_core.batch.lock import RunLock, lock_path
from llm_core.errors import InvalidInputError
from tests.batch.batchkit import chats, finish, read_lines, start_runner
from tests.batch.mock_server import BatchServer

ITEMS = 100
WAIT = 60.0  # every wait below is bounded by this


def _check_output(output: Path) -> None:
    lines = read_lines(output)
    assert sorted(line["custom_id"] for line in lines) == sorted(f"q{n}" for n in range(ITEMS))  # each once
    assert all(line["ok"] and line["response"]["content"].startswith("echo: ") for line in lines)


def _hold_at_the_30th_call(server: BatchServer) -> tuple[threading.Event, threading.Event]:
    """``(reached, go)``: the holder's 30th single call sets ``reached`` and waits (in the
    server) for ``go``, so the holder is surely mid-run while the test starts the other one."""
    reached, go = threading.Event(), threading.Event()

    def hold() -> None:
        reached.set()
        go.wait(WAIT)

    server.pause("single", hold)
    return reached, go


def test_a_second_runner_started_mid_run_is_refused_at_once(server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    reached, go = _hold_at_the_30th_call(server)
    first = start_runner(source, output, server.url, timeout=WAIT)
    try:
        assert reached.wait(WAIT), "the first runner never reached its 30th call"
        code, log, error = finish(start_runner(source, output, server.url))
    finally:
        go.set()
    assert code == 3, log
    assert error["error"] == "BatchBusyError", log
    assert (error["pid"], error["host"]) == (first.pid, socket.gethostname())
    assert f"pid {first.pid} on {socket.gethostname()}, started {error['started']}" in error["message"]
    assert error["seconds"] < 1.0, error  # at once: nothing read, nothing sent, no wait on the record
    print(f"\nrefused in {error['seconds'] * 1000:.1f} ms")
    code, log, summary = finish(first)
    assert code == 0, log
    assert (summary["done"], summary["total"]) == (ITEMS, ITEMS)
    assert server.single_calls == ITEMS  # every item called once, by the holder
    _check_output(output)
    assert not lock_path(output).exists()  # the holder removed its lock when it was done


def test_two_runners_started_together_one_runs_the_other_refuses(
    server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    reached, go = _hold_at_the_30th_call(server)
    runners = [start_runner(source, output, server.url, timeout=WAIT) for _ in range(2)]
    try:
        deadline = time.monotonic() + WAIT
        # the holder cannot finish before `go`: the first to end is the refused one
        while all(runner.poll() is None for runner in runners) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        go.set()
    results = [finish(runner) for runner in runners]
    codes = sorted(code for code, _log, _data in results)
    assert codes == [0, 3], [log for _code, log, _data in results]
    refused = next(data for code, _log, data in results if code == 3)
    holder = next(runner for runner, (code, _log, _data) in zip(runners, results, strict=True) if code == 0)
    assert refused["error"] == "BatchBusyError" and refused["pid"] == holder.pid, refused
    assert reached.is_set()
    assert server.single_calls == ITEMS
    _check_output(output)


def test_a_killed_holder_leaves_no_lock_that_blocks(server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    source, output = write_jsonl(chats(ITEMS)), tmp_path / "out.jsonl"
    first = start_runner(source, output, server.url)
    server.pause("single", first.kill)
    code, log, _ = finish(first)
    assert code == -9, log
    assert str(first.pid) in lock_path(output).read_text()  # left behind by the dead holder
    code, log, summary = finish(start_runner(source, output, server.url))
    assert code == 0, log  # the kernel released the lock when the holder died
    assert summary["done"] == ITEMS
    _check_output(output)
    assert not lock_path(output).exists()


def test_the_lock_in_one_process(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    with RunLock(output):
        with pytest.raises(BatchBusyError) as caught, RunLock(output):
            pass  # pragma: no cover - refused
        assert (caught.value.pid, caught.value.host) == (os.getpid(), socket.gethostname())
        assert caught.value.started is not None
    assert not lock_path(output).exists()
    with RunLock(output):  # free again
        assert lock_path(output).exists()
    with pytest.raises(InvalidInputError, match="cannot write beside"):
        RunLock(tmp_path / "missing" / "out.jsonl").acquire()
