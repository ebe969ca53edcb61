"""Kill the runner (SIGKILL, in a subprocess) at each step, run it again, and check that the
output holds every input id exactly once with the right answer, and that no job was created
twice nor a finished download fetched again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_core.batch.runner import load_summary
from tests.batch.batchkit import HERE, OPENAI_KEY, chats, read_lines
from tests.batch.mock_server import BatchServer

ITEMS = 100  # 3 jobs of at most 40


def _start(source: Path, output: Path, server: BatchServer, mode: str = "batch") -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": OPENAI_KEY}
    return subprocess.Popen(
        [sys.executable, str(HERE / "run_job.py"), str(source), str(output), server.url + "/v1", mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return process.returncode, out + err


def _settled_calls(server: BatchServer, quiet: float = 0.3, limit: float = 10.0) -> int:
    """The server's single-call count once it has stopped moving: requests a killed runner sent
    just before it died may still be in the server's handler threads, and must not be counted as
    the next run's."""
    deadline = time.monotonic() + limit
    count = server.single_calls
    while time.monotonic() < deadline:
        time.sleep(quiet)
        if server.single_calls == count:
            return count
        count = server.single_calls
    raise AssertionError(f"the server kept receiving calls for {limit} s after the runner stopped")


def _check_output(output: Path) -> None:
    lines = read_lines(output)
    ids = [line["custom_id"] for line in lines]
    assert sorted(ids) == sorted(f"q{n}" for n in range(ITEMS))  # each exactly once
    for line in lines:
        assert line["ok"], line
        assert line["response"]["content"] == f"echo: q number {line['custom_id'][1:]}"


@pytest.mark.parametrize("point", ["create", "poll", "download"])
def test_killed_runner_resumes_without_repeats(point: str, server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    server.polls = 2
    source = write_jsonl(chats(ITEMS))
    output = tmp_path / "out.jsonl"
    first = _start(source, output, server)
    server.pause(point, first.kill)
    code, log = _finish(first)
    assert code == -9, log  # killed where asked, not finished
    assert point not in server.hooks
    second = _start(source, output, server)
    code, log = _finish(second)
    assert code == 0, log
    _check_output(output)
    assert server.creates == 3  # one job per chunk: the job created as the runner died was found by its tag
    outputs = [job.output_file_id for job in server.jobs.values()]
    if point == "download":  # the interrupted file is fetched again; its lines already written are skipped
        assert len(server.downloads) == len(outputs) + 1
    else:
        assert sorted(server.downloads) == sorted(outputs)


@pytest.mark.parametrize("stop", ["kill", "ctrl-c"])
def test_interrupted_local_run_resumes(stop: str, server: BatchServer, write_jsonl, tmp_path: Path) -> None:
    source = write_jsonl(chats(ITEMS))
    output = tmp_path / "out.jsonl"
    first = _start(source, output, server, "local")
    server.pause("single", first.kill if stop == "kill" else lambda: first.send_signal(signal.SIGINT))
    code, log = _finish(first)
    assert code != 0, log
    done = output.read_bytes().count(b"\n") if output.exists() else 0  # whole lines reached the disk
    if stop == "ctrl-c":
        assert load_summary(output).done == done >= 1  # what had come back was written and recorded
    sent = _settled_calls(server)
    second = _start(source, output, server, "local")
    code, log = _finish(second)
    assert code == 0, log
    assert server.single_calls - sent == ITEMS - done  # only what was not written is sent again
    _check_output(output)
