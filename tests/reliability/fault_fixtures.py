"""Fixtures shared by the reliability, security and isolation tests (imported by their conftests)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from llm_core.hooks import hookimpl
from llm_core.observe import observers
from llm_core.registry import reset_registry
from llm_core.retry import RetryPolicy
from tests.reliability.fault_server import FaultServer

#: Environment variables a developer machine may set that would change what a test sees.
ENV_VARS = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "GOOGLE_GENAI_API_VERSION",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "LLM_CORE_CONFIG",
    "LLM_CORE_PREFER",
    "LLM_CORE_PLUGINS",
    "LLM_CORE_STRICT_PLUGINS",
    "LLM_CORE_RECORD",
    "LLM_CORE_REPLAY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's keys, config file, proxies, registry or observers."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    reset_registry()
    observers.install(None)
    yield
    reset_registry()
    observers.install(None)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A fresh loopback fault server (127.0.0.1, free port), closed after the test."""
    with FaultServer() as running:
        yield running


class Rig:
    """A long-lived fault server for one plugin, with its providers built once and reused.

    Building an SDK client costs tens of milliseconds (TLS contexts are made eagerly), so the
    matrix shares one provider per setting; each test swaps in its own retry policy (waits are
    recorded per test) and starts from an empty server (no script, no recorded requests).
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self.server = FaultServer().start()
        self._providers: dict[tuple[Any, ...], Any] = {}

    def reset(self) -> FaultServer:
        self.server.clear()
        self.server.fallback = None
        return self.server

    def provider(
        self, *, retry: RetryPolicy, timeout: float = 5.0, base_url: str | None = None, **options: Any
    ) -> Any:
        key = (timeout, base_url, tuple(sorted(options.items())))
        provider = self._providers.get(key)
        if provider is None:
            provider = self.target.build(base_url or self.server.url, timeout=timeout, **options)
            self._providers[key] = provider
        provider.retry_policy = retry
        return provider

    def close(self) -> None:
        self.server.close()


@pytest.fixture(scope="session")
def rigs() -> Iterator[dict[str, Rig]]:
    """One :class:`Rig` per installed plugin (``rigs["gemini"]``, ``rigs["openai"]``)."""
    from tests.reliability.fault_targets import HTTP_TARGETS

    made = {target.name: Rig(target) for target in HTTP_TARGETS if target.installed}
    yield made
    for rig in made.values():
        rig.close()


@dataclass
class Sleeps:
    """Records the waits a retry policy asked for instead of sleeping."""

    waits: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def policy(self, **changes: Any) -> RetryPolicy:
        """The matrix policy: 3 attempts, backoff 0.5 s x2, no jitter, deadline 30 s,
        Retry-After honoured up to 10 s."""
        values: dict[str, Any] = {
            "max_attempts": 3,
            "initial_delay": 0.5,
            "multiplier": 2.0,
            "max_delay": 20.0,
            "jitter": 0.0,
            "deadline": 30.0,
            "max_retry_after": 10.0,
        }
        values.update(changes)
        return RetryPolicy(sleep=self.sleep, async_sleep=self.async_sleep, **values)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


class AttemptCounter:
    """An observer plugin counting attempts and errors per provider (installed globally)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.before: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.done: list[dict[str, Any]] = []

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.before.append(dict(event))

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.errors.append(dict(event))

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.done.append(dict(event))

    def attempts(self, provider: str | None = None) -> int:
        with self._lock:
            return sum(1 for e in self.before if provider is None or e["provider"] == provider)


@pytest.fixture
def attempts() -> AttemptCounter:
    """Count provider attempts through the observer hooks."""
    from llm_core.registry.discovery import new_plugin_manager

    counter = AttemptCounter()
    manager = new_plugin_manager()
    manager.register(counter)
    observers.install(manager.hook)
    return counter
