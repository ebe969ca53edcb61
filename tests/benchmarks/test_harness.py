"""Smoke tests of the benchmark harness: it runs end to end with tiny counts and writes a report.

Nothing here asserts a timing: the numbers of a quick run are noise. What is checked is that
every section ran on both sides for both providers, through the real SDKs, against the loopback
server, that both sides sent the identical request, and that the server is bounded.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmarks.sides import PROMPT

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("gemini", "openai", "openai-chat")
#: The providers the plugins register (``openai-chat`` is a named endpoint the harness adds).
REGISTERED = ("gemini", "openai")


def _env() -> dict[str, str]:
    # the harness builds its own clean environment; only keep what a Python process needs
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("LLM_CORE_", "OPENAI_", "GEMINI_", "GOOGLE_"))}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out / "r.json"), "--markdown", str(out / "r.md")],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    data = json.loads((out / "r.json").read_text())
    markdown = (out / "r.md").read_text()
    assert markdown.strip() in done.stdout  # the report is also printed
    return data, markdown


def test_every_section_ran_for_both_providers_and_both_comparisons(quick_run: tuple[dict[str, Any], str]) -> None:
    data, _ = quick_run
    results = data["results"]
    counts = data["counts"]
    assert sorted(results["providers"]) == list(PROVIDERS)
    n = counts["call_rounds"] * counts["calls_per_round"]
    for provider in PROVIDERS:
        res = results["providers"][provider]
        for pair in ("user", "payload"):
            for section in ("calls_sync", "calls_async"):
                for side in ("core", "bare"):
                    assert res[pair][section][side]["median"] > 0, (provider, pair, section, side)
                    assert res[pair][section][side]["n"] == n
                assert res[pair][section]["ratio"]["median"] > 0
            for section in ("streams_sync", "streams_async"):
                # every delta the server sent reached the caller on both sides
                assert res[pair][section]["deltas"] == {"core": counts["deltas"], "sdk": counts["deltas"]}
                for measure in ("first_event_us", "total_us", "per_delta_us"):
                    assert res[pair][section][measure]["core"]["median"] > 0
                    assert res[pair][section][measure]["bare"]["median"] > 0
                total, first = res[pair][section]["total_us"], res[pair][section]["first_event_us"]
                assert total["core"]["median"] > first["core"]["median"]
        assert res["user"]["concurrency"]["ratio"]["median"] > 0
        for side in ("core", "sdk"):
            memory = res["memory"][side]
            assert memory["calls"] == counts["memory_calls"]
            assert memory["peak_rss_mib"] >= memory["rss_start_mib"] > 0
            assert len(memory["checkpoints"]) == 11
    ready = results["cold"]["ready"]
    assert ready["core"]["median"] > 0 and ready["bare"]["median"] > 0


def test_the_same_payload_pair_sent_the_identical_request(quick_run: tuple[dict[str, Any], str]) -> None:
    data, _ = quick_run
    expected = {
        "gemini": {
            "chat": "/v1/models/gemini-2.5-flash:generateContent",
            "stream": "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        },
        "openai": {"chat": "/v1/responses", "stream": "/v1/responses"},
        "openai-chat": {"chat": "/v1/chat/completions", "stream": "/v1/chat/completions"},
    }
    for provider in PROVIDERS:
        for kind, same in data["results"]["providers"][provider]["requests"]["payload"].items():
            assert same["target"] == expected[provider][kind]
            assert same["same_target"] and same["same_body"] and same["same_headers"], same
        for kind, user in data["results"]["providers"][provider]["requests"]["user"].items():
            assert user["target"] == user["sdk_target"] == expected[provider][kind]
    openai = data["results"]["providers"]["openai"]["requests"]
    assert openai["payload"]["stream"]["body"]["stream"] is True
    # the README form: the question as a plain string, nothing else but the model
    assert openai["user"]["chat"]["sdk_body"] == {"model": "gpt-4.1-mini", "input": PROMPT}
    chat = data["results"]["providers"]["openai-chat"]["requests"]
    assert chat["payload"]["stream"]["body"]["stream_options"] == {"include_usage": True}
    question = [{"role": "user", "content": PROMPT}]
    assert chat["user"]["chat"]["sdk_body"] == {"model": "gpt-4.1-mini", "messages": question}
    gemini_readme = data["results"]["providers"]["gemini"]["requests"]["user"]["chat"]["sdk_body"]
    assert gemini_readme["contents"] == [{"parts": [{"text": PROMPT}], "role": "user"}]


def test_start_up_is_measured_against_the_scan_and_imports_no_sdk(quick_run: tuple[dict[str, Any], str]) -> None:
    startup = quick_run[0]["results"]["cold"]["startup"]
    assert set(startup["wall_ms"]) == {"interpreter", "scan", "entry points", "llm-core", "llm-core, no cache"}
    assert startup["sdk_modules"] == []
    assert startup["selected"] in REGISTERED
    assert set(REGISTERED) <= set(startup["providers"])
    assert "llm_core" in startup["top_level_packages"]
    # the warm run read the discovery cache; the other one scanned
    assert startup["scanned"] == {"llm-core": False, "llm-core, no cache": True}
    assert startup["vs_scan"]["ratio"]["median"] > 0


def test_report_has_the_tables_and_the_target_checks(quick_run: tuple[dict[str, Any], str]) -> None:
    data, markdown = quick_run
    for heading in (
        "## Results",
        "### Summary",
        "### The user's view",
        "### The same payload",
        "### Start-up",
        "### Ready to call",
        "### Memory",
        "### Targets",
        "### What was sent",
        "### Machine",
    ):
        assert heading in markdown
    for provider in PROVIDERS:
        assert markdown.count(f"| per call, sync (µs) | {provider} |") == 2  # both comparisons
        assert f"| first delta, async (µs) | {provider} |" in markdown
    names = [t["name"] for t in data["targets"]]
    assert "start-up (import + discovery + select) over the entry-point scan alone" in names
    assert "ready to call, over the bare SDKs" in names
    for provider in PROVIDERS:
        for mode in ("sync", "async"):
            assert f"{provider}: per call ({mode})" in names and f"{provider}: first delta ({mode})" in names
            assert f"{provider}: {data['counts']['deltas']}-delta stream total ({mode})" in names
        assert f"{provider}: async throughput" in names
    assert all(t["met"] in (True, False) for t in data["targets"])
    per_call = next(t for t in data["targets"] if t["name"] == "openai: per call (sync)")
    low, high = per_call["interval"]
    assert low <= per_call["value"] <= high and per_call["clear"] in (True, False)
    assert "| target | value | 95 % interval | limit | met |" in markdown


# -- the loopback server on its own ------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen[str], int]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.server", "--port", "0", "--deltas", "7", "--max-seconds", "60"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    word, host, port = process.stdout.readline().split()
    assert (word, host) == ("LISTENING", "127.0.0.1")
    yield process, int(port)
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()


def _post(port: int, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return reply.status, {k.lower(): v for k, v in reply.getheaders()}, data


def test_server_speaks_both_wire_formats(server: tuple[subprocess.Popen[str], int]) -> None:
    _, port = server
    status, headers, body = _post(port, "/v1/models/gemini-2.5-flash:generateContent", {"contents": []})
    assert status == 200 and headers["content-type"].startswith("application/json")
    answer = json.loads(body)
    assert answer["candidates"][0]["finishReason"] == "STOP" and answer["modelVersion"] == "gemini-2.5-flash"

    status, headers, body = _post(port, "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {})
    assert status == 200 and headers["content-type"] == "text/event-stream"
    chunks = [json.loads(b[len(b"data: ") :]) for b in body.split(b"\r\n\r\n") if b]
    assert len(chunks) == 7 and chunks[-1]["candidates"][0]["finishReason"] == "STOP"

    status, _, body = _post(port, "/v1/responses", {"model": "gpt-4.1-mini", "input": "hi"})
    response = json.loads(body)
    assert status == 200 and response["object"] == "response" and response["model"] == "gpt-4.1-mini"

    status, headers, body = _post(port, "/v1/responses", {"model": "gpt-4.1-mini", "input": "hi", "stream": True})
    events = [json.loads(block.split(b"\ndata: ", 1)[1]) for block in body.split(b"\n\n") if block]
    types = [e["type"] for e in events]
    assert types.count("response.output_text.delta") == 7
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))

    status, _, body = _post(port, "/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": []})
    completion = json.loads(body)
    assert status == 200 and completion["object"] == "chat.completion" and completion["usage"]["prompt_tokens"] > 0

    chat = {"model": "gpt-4.1-mini", "messages": [], "stream": True}
    status, headers, body = _post(port, "/v1/chat/completions", chat)
    blocks = [block.removeprefix(b"data: ") for block in body.split(b"\n\n") if block]
    assert status == 200 and headers["content-type"].startswith("text/event-stream") and blocks[-1] == b"[DONE]"
    chunks = [json.loads(block) for block in blocks[:-1]]
    assert sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")) == 7
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 7

    status, _, body = _post(port, "/v1/completions", {})
    assert status == 404 and "no route" in json.loads(body)["error"]["message"]


def test_server_stops_by_itself() -> None:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.server", "--port", "0", "--max-seconds", "0.5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("LISTENING 127.0.0.1 ")
    assert time.monotonic() - start < 20
