"""Observer hook tests: a fresh registry per test with a recording observer."""

from __future__ import annotations

import pytest

from llm_core.registry import Registry
from tests.observers.recording import Recorder


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
