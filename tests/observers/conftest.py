"""Observer hook tests: a fresh registry per test with a recording observer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from llm_core import hookimpl, observers
from llm_core.registry import Registry, reset_registry


@dataclass
class Recorder:
    """Records every observer event as ``(hook, event)``."""

    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self.events.append(("before", event))

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.events.append(("after", event))

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        self.events.append(("error", event))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for k, event in self.events if k == kind]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_PLUGINS", "LLM_CORE_STRICT_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    reset_registry()
    observers.install(None)
    yield
    observers.install(None)
    reset_registry()


@pytest.fixture
def registry() -> Registry:
    return Registry()


@pytest.fixture
def recorder(registry: Registry) -> Recorder:
    rec = Recorder()
    registry.add_observer(rec)
    return rec
