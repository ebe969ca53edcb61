"""Fixtures of the OpenAI-compatible server tests: an isolated environment (with a canary
OpenAI key that must never reach another server), the emulated Chat Completions server on
loopback, and a config file of endpoints."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llm_core.registry import get_registry, reset_registry
from llm_core.registry.registry import Registry
from tests.compat.chat_upstream import chat_completions_server
from tests.reliability.fault_server import FaultServer

#: Set as OPENAI_API_KEY (and the org/project ids) in every test: no request to an endpoint may carry them.
CANARY_KEY = "sk-canary-openai-key-0123456789"
ENV = ("OPENAI_BASE_URL", "LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_STRICT_PLUGINS")

EndpointConfig = Callable[[str], Registry]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-canary")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_canary")
    monkeypatch.setenv("LLM_CORE_PLUGINS", "core-openai-plugin")
    reset_registry()
    yield
    reset_registry()


@pytest.fixture
def upstream() -> Iterator[FaultServer]:
    """A server implementing only the Chat Completions API, on 127.0.0.1."""
    with FaultServer(chat_completions_server, keep_alive=True) as server:
        yield server


@pytest.fixture
def endpoint_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EndpointConfig:
    """``endpoint_config(toml)``: that config file in force, and the process registry found anew."""

    def write(text: str) -> Registry:
        path = tmp_path / "config.toml"
        path.write_text(text)
        monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
        reset_registry()
        return get_registry()

    return write
