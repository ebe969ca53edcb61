"""The conformance kit's own tests: it passes FakeProvider and fails broken providers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_core.observe import observers
from llm_core.registry import reset_registry


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No developer config, keys or observers leak into the kit's runs."""
    for name in ("LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_PLUGINS", "LLM_CORE_RECORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    reset_registry()
    observers.install(None)
    yield
    reset_registry()
