"""Gemini batch jobs above the inlined limits go as an uploaded JSONL file, through the real SDK
against the loopback server: the resumable upload, a create with the file as source, polls, the
output file downloaded and read by key, per-item failures typed; the runner resumes a file job
killed at each step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core_gemini_plugin import batch, batch_files
from llm_core.batch import BatchState, JsonResponse
from llm_core.errors import InvalidInputError, InvalidRequestError, ProviderError, ProviderTimeoutError
from llm_core.responses import CompletionResponse, EmbeddingResponse
from tests.batch.batchkit import GEMINI_KEY, chats, read_lines
from tests.batch.mock_server import BatchServer

ITEMS = 1500  # above the 1,000 requests an inlined job takes


def _only_job(server: BatchServer):
    (job,) = server.jobs.values()
    return job


def _input_lines(server: BatchServer) -> list[dict]:
    (name,) = [n for n in server.files if n.startswith("files/upload")]
    return [json.loads(line) for line in server.files[name].splitlines()]


def test_a_big_job_goes_as_a_file_and_its_failures_stay_per_item(gemini, server) -> None:
    job = gemini.batch.submit([*chats(ITEMS), {"custom_id": "bad", "messages": "FAIL please"}])
    assert server.uploads == 1 and _only_job(server).source == "file"
    lines = _input_lines(server)
    assert [line["key"] for line in lines] == [*(f"q{n}" for n in range(ITEMS)), "bad"]
    assert lines[0]["request"] == {"contents": [{"role": "user", "parts": [{"text": "q number 0"}]}]}
    assert job.status().state in (BatchState.QUEUED, BatchState.RUNNING)
    assert job.wait(poll_interval=0.01, timeout=10).state is BatchState.COMPLETED
    results = dict(job.results())
    assert sorted(results) == sorted([*(f"q{n}" for n in range(ITEMS)), "bad"])  # each once
    for n in (0, 999, ITEMS - 1):
        answer = results[f"q{n}"]
        assert isinstance(answer, CompletionResponse)
        assert answer.content == f"echo: q number {n}"
        assert answer.usage.total_tokens == 15
    assert isinstance(results["bad"], InvalidRequestError)  # the line's google.rpc code 3
    assert results["bad"].status_code == 400
    assert server.downloads == [_only_job(server).output_file_id]  # downloaded once


def test_a_small_job_stays_inlined(gemini, server) -> None:
    job = gemini.batch.submit(chats(3))
    job.wait(poll_interval=0.01, timeout=10)
    assert [answer.content for _, answer in job.results()] == [f"echo: q number {n}" for n in range(3)]
    assert server.uploads == 0 and _only_job(server).source == "inlined" and server.downloads == []


def test_a_job_over_the_inlined_size_goes_as_a_file(gemini, server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "INLINE_MAX_BYTES", 200)  # the 20 MB limit, scaled down
    schema = {"type": "object", "properties": {"echo": {"type": "string"}}, "required": ["echo"]}
    job = gemini.batch.submit(
        [
            {"custom_id": "j", "kind": "json", "prompt": "json please", "schema": schema},
            {
                "custom_id": "c",
                "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
                "options": {"temperature": 0.5, "max_tokens": 20},
            },
        ]
    )
    assert server.uploads == 1
    requests = {line["key"]: line["request"] for line in _input_lines(server)}
    json_config = {"response_mime_type": "application/json", "response_json_schema": schema}
    assert requests["j"]["generation_config"] == json_config
    assert requests["c"]["system_instruction"] == {"parts": [{"text": "Be brief."}]}
    assert requests["c"]["generation_config"] == {"temperature": 0.5, "max_output_tokens": 20}
    job.wait(poll_interval=0.01, timeout=10)
    results = dict(job.results())
    assert isinstance(results["j"], JsonResponse) and results["j"].data == {"echo": "json please"}
    assert results["c"].content == "echo: hi"


def test_embeddings_go_as_a_file_one_line_per_input(gemini, server) -> None:
    items = [{"custom_id": f"e{n}", "kind": "embedding", "input": ["a", "bbb"]} for n in range(600)]
    items.append({"custom_id": "bad", "kind": "embedding", "input": ["fine", "FAIL"]})
    job = gemini.batch.submit(items)
    assert server.uploads == 1 and _only_job(server).kind == "embeddings"
    assert _input_lines(server)[:2] == [
        {"key": "e0#0", "request": {"content": {"parts": [{"text": "a"}]}}},
        {"key": "e0#1", "request": {"content": {"parts": [{"text": "bbb"}]}}},
    ]
    job.wait(poll_interval=0.01, timeout=10)
    results = dict(job.results())
    assert len(results) == 601
    assert isinstance(results["e7"], EmbeddingResponse)
    assert results["e7"].vectors == [[1.0, 1.0, 0.5], [3.0, 1.0, 0.5]]
    assert isinstance(results["bad"], InvalidRequestError)  # one input failed: the item's error


@pytest.mark.parametrize("outcome", ["expired", "cancelled"])
def test_a_file_job_that_ended_early_gives_every_item(outcome: str, gemini, server) -> None:
    server.outcome = outcome
    job = gemini.batch.submit(chats(ITEMS))
    assert job.wait(poll_interval=0.01, timeout=10).state.value == outcome
    results = dict(job.results())
    assert len(results) == ITEMS
    assert results["q0"].content == "echo: q number 0"  # the first half ran
    late = ProviderTimeoutError if outcome == "expired" else ProviderError
    assert isinstance(results[f"q{ITEMS - 1}"], late)


async def test_async_twins_through_a_file(gemini, server) -> None:
    job = await gemini.batch.asubmit([*chats(ITEMS), {"custom_id": "bad", "messages": "FAIL"}])
    assert server.uploads == 1
    assert (await job.aio.wait(poll_interval=0.01, timeout=10)).state is BatchState.COMPLETED
    results = {cid: answer async for cid, answer in job.aio.results()}
    assert len(results) == ITEMS + 1
    assert results["q1200"].content == "echo: q number 1200"
    assert isinstance(results["bad"], InvalidRequestError)


def test_a_job_too_big_for_one_file_is_refused_before_any_upload(
    gemini, server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_files, "MAX_FILE_BYTES", 1000)  # the Files API's 2 GB, scaled down
    with pytest.raises(InvalidInputError, match="chunk_size"):
        gemini.batch.submit(chats(ITEMS))
    assert server.uploads == 0 and server.creates == 0


# -- the runner, killed (SIGKILL) at each step of a file job and run again ----------------------

RUNNER = """
import sys
from core_gemini_plugin.provider import GeminiProvider
from llm_core.batch import run

source, output, base_url = sys.argv[1:4]
provider = GeminiProvider(base_url=base_url, timeout=10)  # GEMINI_API_KEY from this process's environment
run(source, output=output, provider=provider, mode="batch", poll_interval=0.05, chunk_size=1200)
"""
RUN_ITEMS = 2500  # jobs of 1,200 (files), 1,200 (files) and 100 (inlined)


def _run(source: Path, output: Path, server: BatchServer) -> subprocess.Popen[str]:
    env = {**os.environ, "GEMINI_API_KEY": GEMINI_KEY}
    command = [sys.executable, "-c", RUNNER, str(source), str(output), server.url]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return process.returncode, out + err


@pytest.mark.parametrize("point", ["create", "download"])  # polls are the same as an inlined job's
def test_a_killed_runner_resumes_a_file_job_without_repeats(
    point: str, server: BatchServer, write_jsonl, tmp_path: Path
) -> None:
    server.polls = 2
    source = write_jsonl(chats(RUN_ITEMS))
    output = tmp_path / "out.jsonl"
    first = _run(source, output, server)
    server.pause(point, first.kill)
    code, log = _finish(first)
    assert code == -9, log  # killed where asked
    code, log = _finish(_run(source, output, server))
    assert code == 0, log
    lines = read_lines(output)
    assert sorted(line["custom_id"] for line in lines) == sorted(f"q{n}" for n in range(RUN_ITEMS))  # each once
    for line in lines:
        assert line["ok"] and line["response"]["content"] == f"echo: q number {line['custom_id'][1:]}"
    assert server.creates == 3  # the job created as the runner died was found by its tag
    assert server.uploads == 2  # and its file was not uploaded again
    outputs = [job.output_file_id for job in server.jobs.values() if job.source == "file"]
    if point == "download":  # the interrupted file is fetched again, nothing of it was written
        assert len(server.downloads) == len(outputs) + 1
    else:
        assert sorted(server.downloads) == sorted(outputs)
