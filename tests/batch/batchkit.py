"""Helpers shared by the batch tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from llm_core.retry import RetryPolicy

HERE = Path(__file__).resolve().parent
OPENAI_KEY = "sk-test-batch-0123456789abcdef"
GEMINI_KEY = "AIzaSy-test-batch-0123456789abcdef"
FAST_RETRY = RetryPolicy(max_attempts=2, initial_delay=0.0, max_delay=0.0, jitter=0.0)


def chats(count: int, prefix: str = "q") -> list[dict[str, Any]]:
    return [{"custom_id": f"{prefix}{n}", "messages": f"{prefix} number {n}"} for n in range(count)]


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def start_runner(
    source: Path, output: Path, base_url: str, mode: str = "local", *, timeout: float = 10.0
) -> subprocess.Popen[str]:
    """``run_job.py`` in a process of its own (its key from its own environment)."""
    env = {**os.environ, "OPENAI_API_KEY": OPENAI_KEY, "RUN_JOB_TIMEOUT": str(timeout)}
    return subprocess.Popen(
        [sys.executable, str(HERE / "run_job.py"), str(source), str(output), base_url + "/v1", mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 60.0) -> tuple[int, str, dict[str, Any]]:
    """Exit code, output and the last JSON line printed (the summary, or the typed error)."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    last = out.strip().splitlines()[-1] if out.strip() else ""
    return process.returncode, out + err, json.loads(last) if last.startswith("{") else {}
