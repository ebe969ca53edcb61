"""Every test runs with its own user config dir, so that the CLI's key store, aliases and prompt
log (and any config.toml) never touch the real ``~/.config/llm-core``, nor the OS keyring."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_core.observe import observers
from llm_core.registry import reset_registry

LoopGaps = Callable[[Coroutine[Any, Any, Any]], list[float]]


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("LLM_CORE_LOGS_DB", raising=False)
    monkeypatch.setenv("LLM_CORE_KEYRING", "0")  # keys go to the file; tests of the keyring set their own
    return home


@pytest.fixture
def loop_gaps() -> LoopGaps:
    """``loop_gaps(work)`` runs the coroutine ``work`` beside a ticker that sleeps 5 ms forty
    times, and returns the gaps between the ticks: a loop blocked for X seconds shows a gap of
    about X, so the largest gap says whether anything stalled the loop."""

    async def ticker(gaps: list[float]) -> None:
        last = time.perf_counter()
        for _ in range(40):
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    def run(work: Coroutine[Any, Any, Any]) -> list[float]:
        async def main() -> list[float]:
            gaps: list[float] = []
            await asyncio.gather(work, ticker(gaps))
            return gaps

        return asyncio.run(main())

    return run


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A new process-wide registry and no observers, before and after the test, with none of the
    developer's provider preference, plugin filter or config file. (Folders whose every test needs
    it use it from an autouse fixture of their conftest.)"""
    for name in ("LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_PLUGINS", "LLM_CORE_STRICT_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    reset_registry()
    observers.install(None)
    yield
    observers.install(None)
    reset_registry()
