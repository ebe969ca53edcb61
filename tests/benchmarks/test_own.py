"""The own-work tool (``python -m benchmarks.own``): llm-core's side of a call with the send
stubbed, each timing after a bare SDK call against the loopback server. No timing is asserted."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import own

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("provider", ["gemini", "openai"])
def test_each_variant_runs_its_own_code_with_the_send_stubbed(provider: str) -> None:
    parsed: list[str] = []

    def candidate(p: Any) -> None:
        original = p.parse_chat_response

        def counting(raw: Any, request: Any) -> Any:
            parsed.append(request.model)
            return original(raw, request)

        p.parse_chat_response = counting

    before = dict(os.environ)
    medians = own.run(provider, {"main": None, "candidate": candidate}, blocks=2, per_block=3, warmup=1)
    assert set(medians) == {"main", "candidate"}
    for values in medians.values():
        assert set(values) == set(own.MEASURES) and all(math.isfinite(v) and v > 0 for v in values.values())
    # the candidate parsed in its chat_completion, its async twin and its parse step, 2 x (1 + 3) times
    assert len(parsed) == 3 * 2 * (1 + 3)
    assert dict(os.environ) == before  # the benchmark environment is undone


def test_a_call_that_suspends_is_refused() -> None:
    async def suspends() -> None:
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="not stubbed"):
        own._finish(suspends())


def test_the_command_line_runs_main_against_itself() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.own", "gemini", "--blocks", "1", "--per-block", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:2] == ["main", "sync"]
    assert lines[1].strip().startswith("main again") and "saved" in lines[1]


def test_a_malformed_patch_is_refused() -> None:
    with pytest.raises(SystemExit, match="module:function"):
        own.load_patch("no_colon_here")
    assert own.load_patch("os.path:join") is os.path.join
