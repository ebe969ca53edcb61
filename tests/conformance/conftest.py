"""The conformance kit's own tests: it passes FakeProvider and fails broken providers."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from llm_core.observe import observers
from llm_core.registry import reset_registry

KIT_PROVIDERS = Path(__file__).with_name("kit_providers.py")


def _load_kit_providers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_kit_providers", KIT_PROVIDERS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def kit_providers() -> ModuleType:
    """``kit_providers.py``: FakeProvider scripted per scenario, and deliberately broken providers."""
    return _load_kit_providers()


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
