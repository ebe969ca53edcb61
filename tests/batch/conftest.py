"""Fixtures of the batch tests: the loopback batch server and providers pointed at it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.batch.batchkit import FAST_RETRY, GEMINI_KEY, OPENAI_KEY
from tests.batch.mock_server import BatchServer


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "LLM_CORE_PREFER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_CORE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(polls=1) as running:
        yield running


@pytest.fixture
def openai(server: BatchServer) -> Any:
    from core_openai_plugin.provider import OpenAIProvider

    return OpenAIProvider(api_key=OPENAI_KEY, base_url=server.url + "/v1", retry=FAST_RETRY, timeout=10)


@pytest.fixture
def gemini(server: BatchServer) -> Any:
    from core_gemini_plugin.provider import GeminiProvider

    return GeminiProvider(api_key=GEMINI_KEY, base_url=server.url, retry=FAST_RETRY, timeout=10)


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[[list[dict[str, Any]]], Path]:
    def write(items: list[dict[str, Any]], name: str = "in.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(i) + "\n" for i in items))
        return path

    return write
