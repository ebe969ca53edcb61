"""Observer hook tests: a fresh registry per test with a recording observer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from llm_core import hookimpl
from llm_core.registry import Registry


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
def _isolated(fresh_registry: None) -> None:
    """Every test here starts from a fresh registry with no observers (tests/conftest.py)."""


@pytest.fixture
def registry() -> Registry:
    return Registry()


@pytest.fixture
def recorder(registry: Registry) -> Recorder:
    rec = Recorder()
    registry.add_observer(rec)
    return rec
