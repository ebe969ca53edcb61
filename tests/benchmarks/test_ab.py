"""The in-situ A/B tool (``python -m benchmarks.ab``): it runs both llm-core sides and the bare
SDK against the loopback server, applies a candidate patch to one side only, and reports per run.
No timing is asserted."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ab

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_patch_reaches_the_candidate_only(mode: str) -> None:
    patched: list[Any] = []
    parsed: list[str] = []

    def candidate(provider: Any) -> None:
        original = provider.parse_chat_response

        def counting(raw: Any, request: Any) -> Any:
            parsed.append(request.model)
            return original(raw, request)

        provider.parse_chat_response = counting
        patched.append(provider)

    before = dict(os.environ)
    results = ab.run("openai", mode, candidate, runs=2, iterations=4, warmup=1)
    assert len(patched) == 1 and len(results) == 2
    assert len(parsed) == 2 * (1 + 4)  # every candidate call, and no call of the other side
    assert all(math.isfinite(r.candidate) and math.isfinite(r.main) for r in results)
    assert results[0].saved == results[0].main - results[0].candidate
    assert dict(os.environ) == before  # the benchmark environment is undone


def test_the_command_line_runs_an_a_a_comparison() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.ab", "gemini", "sync", "--runs", "1", "--iterations", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "run 1: candidate" in done.stdout
    assert "A/A (no patch), gemini sync: saved per call, median" in done.stdout


def test_a_malformed_patch_is_refused() -> None:
    with pytest.raises(SystemExit, match="module:function"):
        ab.load_patch("no_colon_here")
    assert ab.load_patch(None) is None
    assert ab.load_patch("os.path:join") is os.path.join
