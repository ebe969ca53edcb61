"""``llm-core batch``: every command in its own process (as from another shell), against the
loopback batch server of tests/batch (OpenAI Batch API shapes, see its docstring)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import core_openai_plugin
import llm_core
from tests.batch.batchkit import OPENAI_KEY, chats, read_lines
from tests.batch.mock_server import BatchServer

#: The sources under test first (a worktree's, not the installed copy's).
SOURCES = [str(Path(llm_core.__file__).parents[1]), str(Path(core_openai_plugin.__file__).parents[1])]
ANSI = "\x1b["


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(polls=1) as running:
        yield running


@pytest.fixture
def env(server: BatchServer, plugin_path: Path, tmp_path: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": os.pathsep.join([*SOURCES, str(plugin_path)]),
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": server.url + "/v1",
        "LLM_CORE_BATCH_JOBS": str(tmp_path / "data" / "batch-jobs.db"),
    }


@pytest.fixture
def batch(run: Any, env: dict[str, str]) -> Any:
    def invoke(*args: str) -> subprocess.CompletedProcess[str]:
        return run("batch", *args, plugins="core-openai-plugin", env=env)

    return invoke


@pytest.fixture
def items(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in chats(6)))
    return path


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _check_every_id_once(path: Path, count: int = 6) -> list[dict[str, Any]]:
    lines = read_lines(path)
    assert sorted(line["custom_id"] for line in lines) == sorted(f"q{n}" for n in range(count))
    return lines


def test_submit_returns_and_other_processes_follow_the_job(
    batch: Any, items: Path, server: BatchServer, tmp_path: Path
) -> None:
    submitted = batch("submit", str(items), "--provider", "openai")
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.splitlines()[0].split() == [
        h.upper() for h in ("job", "provider", "mode", "items", "done", "failed", "pending", "tokens", "cost", "state")
    ]
    assert ANSI not in submitted.stdout + submitted.stderr  # piped: plain text, no progress bar
    assert server.creates == 1 and server.uploads == 1

    status = _json(batch("status", "1", "--json"))  # a new process: all it knows is on disk
    assert (status["job"], status["provider"], status["mode"], status["total"]) == (1, "openai", "batch", 6)
    assert status["state"] == "submitted" and [job["state"] for job in status["jobs"]] in (["running"], ["completed"])

    again = _json(batch("submit", str(items), "--provider", "openai", "--json"))  # resumes: nothing sent twice
    assert again["job"] == 1 and server.creates == 1 and server.uploads == 1

    collected = batch("results", "1", "-o", str(tmp_path / "all.jsonl"), "--poll-interval", "0.05")
    assert collected.returncode == 0, collected.stderr
    lines = _check_every_id_once(tmp_path / "all.jsonl")
    assert all(
        line["ok"] and line["response"]["content"] == f"echo: q number {line['custom_id'][1:]}" for line in lines
    )

    listed = _json(batch("status", "--json"))["jobs"]
    assert [(job["job"], job["state"], job["done"], job["tokens"]) for job in listed] == [(1, "finished", 6, 6 * 15)]
    assert listed[0]["cost"] == "0.000090000000"  # 6 items of 10 in, 5 out at half the list price
    assert "$0.00009 " in batch("status").stdout


def test_results_go_to_stdout_by_default(batch: Any, items: Path) -> None:
    assert batch("submit", str(items), "-p", "openai", "--wait", "--poll-interval", "0.05").returncode == 0
    printed = batch("results", str(items.with_name("items.results.jsonl")))  # named by its output path
    assert printed.returncode == 0, printed.stderr
    assert sorted(json.loads(line)["custom_id"] for line in printed.stdout.splitlines()) == sorted(
        f"q{n}" for n in range(6)
    )
    assert "DONE" in printed.stderr  # the summary keeps out of the JSONL


def test_local_run_sums_tokens_and_cost(batch: Any, items: Path, server: BatchServer, tmp_path: Path) -> None:
    output = tmp_path / "local.jsonl"
    summary = _json(batch("submit", str(items), "-p", "openai", "--local", "-o", str(output), "--json"))
    lines = _check_every_id_once(output)
    assert server.creates == 0 and server.single_calls == 6
    assert summary["finished"] and summary["done"] == 6 and summary["failed"] == 0
    costs = [Decimal(line["response"]["usage"]["cost"]) for line in lines]  # each call priced at list prices
    assert summary["tokens"] == sum(line["response"]["usage"]["total_tokens"] for line in lines)
    assert Decimal(summary["cost"]) == sum(costs) > 0 and summary["priced"] == 6
    table = batch("status", "1").stdout
    assert f"${sum(costs):f}".rstrip("0") in table


def test_a_model_without_prices_shows_an_unknown_cost(batch: Any, server: BatchServer, tmp_path: Path) -> None:
    unpriced = tmp_path / "unpriced.jsonl"  # gpt-6-astra is in the catalogue without list prices
    unpriced.write_text("".join(json.dumps({**i, "options": {"model": "gpt-6-astra"}}) + "\n" for i in chats(2)))
    summary = _json(batch("submit", str(unpriced), "-p", "openai", "--local", "--json"))
    assert summary["done"] == 2 and summary["tokens"] > 0
    assert summary["cost"] is None and summary["priced"] == 0  # unknown, never 0
    assert "unknown" in batch("status", "1").stdout


def test_cancel_then_results_give_every_item_once(batch: Any, items: Path, server: BatchServer, tmp_path: Path) -> None:
    server.polls = 1000  # the job keeps running until it is cancelled
    assert batch("submit", str(items), "-p", "openai").returncode == 0
    cancelled = _json(batch("cancel", "1", "--json"))
    assert cancelled["state"] == "cancelled" and [job["state"] for job in cancelled["jobs"]] == ["cancelled"]
    assert _json(batch("results", "1", "-o", str(tmp_path / "out.jsonl"), "--json"))["finished"]
    lines = _check_every_id_once(tmp_path / "out.jsonl")
    failed = [line for line in lines if not line["ok"]]
    assert failed and all(line["error"]["type"] == "ProviderError" for line in failed)
    assert all("cancelled" in line["error"]["message"] for line in failed)
    assert server.creates == 1


def test_local_runs_have_nothing_to_cancel(batch: Any, items: Path) -> None:
    assert batch("submit", str(items), "-p", "openai", "--local").returncode == 0
    refused = batch("cancel", "1")
    assert refused.returncode == 2 and "local run" in refused.stderr


def test_input_that_is_not_jsonl_is_refused_with_its_line(batch: Any, server: BatchServer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "a", "messages": "hi"}\n\n{"custom_id": "b", "messages": \n')
    refused = batch("submit", str(bad), "-p", "openai")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("error: ") and "line 3: not JSON" in refused.stderr
    assert server.uploads == 0 and server.creates == 0  # refused before anything was sent
    assert _json(batch("status", "--json"))["jobs"] == []  # and not remembered


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["status", "9"], 2, "no batch job 9"),
        (["results", "nowhere.jsonl"], 2, "neither a job number nor the output of a run"),
        (["submit", "missing.jsonl", "-p", "openai"], 2, "no input file"),
        (["submit", "items.jsonl"], 2, "--provider P, or --feature F"),
        (["submit", "items.jsonl", "-p", "nosuch"], 4, "nosuch"),
    ],
)
def test_mistakes_are_one_line_errors(batch: Any, items: Path, args: list[str], code: int, message: str) -> None:
    result = batch(*args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_another_input_into_the_same_output_is_refused(batch: Any, items: Path, tmp_path: Path) -> None:
    assert batch("submit", str(items), "-p", "openai", "--local", "-o", "out.jsonl").returncode == 0
    other = tmp_path / "other.jsonl"
    other.write_text(items.read_text())
    refused = batch("submit", str(other), "-p", "openai", "--local", "-o", "out.jsonl")
    assert refused.returncode == 2 and "holds the results of" in refused.stderr


# -- at a terminal ------------------------------------------------------------------------------


def _at_terminal(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``command`` with stdout and stderr on a pseudo-terminal; what it printed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdout=follower, stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(leader)
    code = process.wait(timeout=10)
    return code, b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("with_rich", [True, False])
def test_a_terminal_gets_a_bar_and_a_table(
    with_rich: bool, env: dict[str, str], entry_point: str, items: Path, tmp_path: Path
) -> None:
    paths = [*SOURCES, env["PYTHONPATH"]]
    if not with_rich:  # a rich that cannot be imported, ahead of the installed one
        blocked = tmp_path / "norich" / "rich"
        blocked.mkdir(parents=True)
        (blocked / "__init__.py").write_text("raise ImportError('rich is not installed here')\n")
        paths.insert(0, str(blocked.parent))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LLM_CORE_") and not k.endswith("_API_KEY")}
    environment.update(env, PYTHONPATH=os.pathsep.join(paths), LLM_CORE_PLUGINS="core-openai-plugin", TERM="xterm")
    environment["LLM_CORE_CONFIG"] = ""
    code, screen = _at_terminal(
        [entry_point, "batch", "submit", str(items), "-p", "openai", "--local"], environment, tmp_path
    )
    assert code == 0, screen
    assert ("local openai" in screen) and ("DONE" in screen)
    if with_rich:
        assert ANSI in screen  # rich's bar and table
    else:
        assert ANSI not in screen
        assert "local openai: 6/6" in screen  # the plain counter


def test_results_run_again_what_a_changed_output_lost(
    batch: Any, items: Path, server: BatchServer, tmp_path: Path
) -> None:
    output = tmp_path / "local.jsonl"
    assert batch("submit", str(items), "-p", "openai", "--local", "-o", str(output)).returncode == 0
    output.write_text("".join(output.read_text().splitlines(keepends=True)[:2]))  # 4 of 6 lines lost
    status = _json(batch("status", "1", "--json"))
    assert status["state"] == "output changed" and not status["finished"]
    printed = batch("results", "1")
    assert printed.returncode == 0, printed.stderr
    assert sorted(json.loads(line)["custom_id"] for line in printed.stdout.splitlines()) == [f"q{n}" for n in range(6)]
    assert server.single_calls == 6 + 4  # only the lost ones ran again
    assert _json(batch("status", "1", "--json"))["state"] == "finished"


def test_a_damaged_record_is_named(batch: Any, items: Path, tmp_path: Path) -> None:
    output = tmp_path / "local.jsonl"
    assert batch("submit", str(items), "-p", "openai", "--local", "-o", str(output)).returncode == 0
    record = output.with_name(output.name + ".job.sqlite")
    for suffix in ("-wal", "-shm"):
        Path(str(record) + suffix).unlink(missing_ok=True)
    record.write_bytes(b"garbage" * 1000)
    shown = batch("status", "1")
    assert shown.returncode == 3 and f"the job record {record} cannot be read" in shown.stderr
    assert "Traceback" not in shown.stderr
    assert "record damaged" in batch("status").stdout


def test_a_damaged_jobs_index_is_named(batch: Any, env: dict[str, str]) -> None:
    index = Path(env["LLM_CORE_BATCH_JOBS"])
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(b"not an index" * 500)
    shown = batch("status")
    assert shown.returncode == 3, shown.stderr
    assert f"the batch jobs index {index} cannot be read" in shown.stderr and "Traceback" not in shown.stderr
