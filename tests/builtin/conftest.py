"""Fixtures of the built-in tool tests: an isolated environment and a runner that makes each call
on a provider (sync) or on ``provider.aio`` (async), streams drained."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "LLM_CORE_CONFIG", "LLM_CORE_PREFER")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


class Runner:
    """Runs a call on a provider, or on its ``aio`` twin."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def __call__(self, provider: Any, call: Callable[[Any], Any]) -> Any:
        result = call(provider.aio if self.mode == "async" else provider)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, Iterator):
            return list(result)
        if isinstance(result, AsyncIterator):
            return [item async for item in result]
        return result


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest) -> Runner:
    return Runner(request.param)
