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

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("gemini", "openai")


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


def test_every_section_ran_for_both_providers_on_both_sides(quick_run: tuple[dict[str, Any], str]) -> None:
    data, _ = quick_run
    results = data["results"]
    counts = data["counts"]
    assert sorted(results["providers"]) == list(PROVIDERS)
    for provider in PROVIDERS:
        res = results["providers"][provider]
        for section in ("calls_sync", "calls_async", "concurrency"):
            for side in ("core", "bare"):
                assert res[section][side]["median"] > 0, (provider, section, side)
            assert res[section]["ratio"]["median"] > 0
        for section in ("streams_sync", "streams_async"):
            # every delta the server sent reached the caller on both sides
            assert res[section]["deltas"] == {"core": counts["deltas"], "bare": counts["deltas"]}
            assert res[section]["per_delta_us"]["core"]["median"] > 0
            assert res[section]["first_event_us"]["bare"]["median"] > 0
        assert set(res["own"]) == {"sync", "async", "build", "map", "parse"}
        assert all(value > 0 for value in res["own"].values())
        n = counts["call_rounds"] * counts["calls_per_round"]
        assert res["calls_sync"]["core"]["n"] == n and res["calls_async"]["bare"]["n"] == n
        for side in ("core", "bare"):
            memory = res["memory"][side]
            assert memory["calls"] == counts["memory_calls"]
            assert memory["peak_rss_mib"] >= memory["rss_start_mib"] > 0
            assert len(memory["checkpoints"]) == 11
        first = results["cold"]["first_call"][provider]
        assert first["core_ms"]["median"] > 0 and first["bare_ms"]["median"] > 0


def test_both_sides_sent_the_identical_request(quick_run: tuple[dict[str, Any], str]) -> None:
    data, _ = quick_run
    expected = {
        "gemini": {
            "chat": "/v1/models/gemini-2.5-flash:generateContent",
            "stream": "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        },
        "openai": {"chat": "/v1/responses", "stream": "/v1/responses"},
    }
    for provider in PROVIDERS:
        for kind, same in data["results"]["providers"][provider]["same_request"].items():
            assert same["target"] == expected[provider][kind]
            assert same["same_target"] and same["same_body"] and same["same_headers"], same
    openai_stream = data["results"]["providers"]["openai"]["same_request"]["stream"]["body"]
    assert openai_stream["stream"] is True and openai_stream["store"] is False


def test_cold_start_imports_no_sdk(quick_run: tuple[dict[str, Any], str]) -> None:
    select = quick_run[0]["results"]["cold"]["select"]
    assert select["sdk_modules"] == []
    assert select["selected"] in PROVIDERS
    assert set(PROVIDERS) <= set(select["providers"])
    assert "llm_core" in select["top_level_packages"]


def test_report_has_the_tables_and_the_target_checks(quick_run: tuple[dict[str, Any], str]) -> None:
    data, markdown = quick_run
    for heading in (
        "## Results",
        "### llm-core's own work per call",
        "### Cold start",
        "### Memory",
        "### Targets",
        "### Machine",
    ):
        assert heading in markdown
    for provider in PROVIDERS:
        assert f"| per call, sync (µs) | {provider} |" in markdown
        assert f"| stream per delta, async (µs) | {provider} |" in markdown
    names = [t["name"] for t in data["targets"]]
    assert "import + discovery + select (in-process wall)" in names
    assert "openai: per-call overhead (async)" in names and "gemini: async throughput ratio" in names
    assert all(t["met"] in (True, False) for t in data["targets"])
    per_call = next(t for t in data["targets"] if t["name"] == "openai: per-call overhead (sync)")
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

    status, _, body = _post(port, "/v1/chat/completions", {})
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
