"""Helpers shared by the batch tests (imported by name: tests/batch is on sys.path)."""

from __future__ import annotations

import json
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
