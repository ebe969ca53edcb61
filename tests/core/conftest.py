"""Shared fixtures of the core tests: an isolated environment, fast retry policies, fake
providers, and a builder of fake plugin distributions on disk."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from llm_core.observe import observers
from llm_core.registry import Registry, reset_registry
from llm_core.retry import RetryPolicy
from llm_core.testing import FakeProvider, FakeReply, fake_spec

settings.register_profile(
    "core", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("core")

ENV_VARS = (
    "LLM_CORE_CONFIG",
    "LLM_CORE_PREFER",
    "LLM_CORE_PLUGINS",
    "LLM_CORE_STRICT_PLUGINS",
    "FAKE_API_KEY",
    "FAKE_A_KEY",
    "FAKE_B_KEY",
    "FAKE_BASE_URL",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's config file, env settings, registry or observers."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    reset_registry()
    observers.install(None)
    yield
    reset_registry()
    observers.install(None)


@dataclass
class Sleeps:
    """Records the waits a retry policy asked for instead of sleeping."""

    waits: list[float]

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def policy(self, **changes: Any) -> RetryPolicy:
        values: dict[str, Any] = {"max_attempts": 3, "jitter": 0.0, "deadline": None}
        values.update(changes)
        return RetryPolicy(sleep=self.sleep, async_sleep=self.async_sleep, **values)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps([])


@pytest.fixture
def fake(sleeps: Sleeps) -> FakeProvider:
    """A fake provider with every capability and a retry policy that never really sleeps."""
    return FakeProvider(retry=sleeps.policy())


@pytest.fixture
def registry() -> Registry:
    """An empty registry (nothing discovered), not strict."""
    return Registry(strict=False)


def _register_fake(registry: Registry, identifier: str, *replies: FakeReply, retry: RetryPolicy | None = None,
                   **spec_options: Any) -> FakeProvider:
    """Register a fake provider under ``identifier`` whose factory returns one shared instance."""
    spec = fake_spec(identifier, **spec_options)
    holder: dict[str, FakeProvider] = {}

    def factory(**config: Any) -> FakeProvider:
        if "instance" not in holder:
            holder["instance"] = FakeProvider(replies=replies, retry=retry or RetryPolicy.none(), **config)
        return holder["instance"]

    from llm_core.specs import ProviderSpec

    registry.register(ProviderSpec(
        spec.identifier, spec.name, spec.features, factory, spec.models, spec.default_model,
        spec.credential_env, spec.requires_credentials,
    ))
    return factory(spec=registry.spec(identifier))


# -- fake plugin distributions on disk ----------------------------------------------------------


@dataclass
class PluginDir:
    """A directory on ``sys.path`` holding fake plugin distributions (``*.dist-info``)."""

    root: Path
    modules: list[str]

    def add(self, distribution: str, body: str, *, entry_name: str | None = None,
            extra_modules: dict[str, str] | None = None) -> str:
        """Create a distribution whose ``llm_core`` entry point is a fresh module with ``body``.

        Returns the module name. ``extra_modules`` are more modules (name → source) to write.
        """
        module = f"plug_{distribution.replace('-', '_').lower()}_{uuid.uuid4().hex[:8]}"
        (self.root / f"{module}.py").write_text(textwrap.dedent(body))
        for name, source in (extra_modules or {}).items():
            (self.root / f"{name}.py").write_text(textwrap.dedent(source))
            self.modules.append(name)
        self.modules.append(module)
        info = self.root / f"{distribution.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[llm_core]\n{entry_name or 'main'} = {module}\n")
        importlib.invalidate_caches()
        return module

    def entry_points(self) -> list[importlib.metadata.EntryPoint]:
        """The ``llm_core`` entry points of the distributions in this directory only."""
        return [
            ep
            for dist in importlib.metadata.distributions(path=[str(self.root)])
            for ep in dist.entry_points
            if ep.group == "llm_core"
        ]

    def discover(self, **kwargs: Any) -> Registry:
        return Registry.discover(entry_points=self.entry_points(), **kwargs)


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginDir]:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    found = PluginDir(root, [])
    yield found
    for name in found.modules:
        sys.modules.pop(name, None)


SPEC_PLUGIN = """
from llm_core import hookimpl, ProviderSpec, ModelInfo

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier={identifier!r}, name={name!r}, features=["chat", "streaming"],
                          factory="llm_core.testing.fake:FakeProvider", requires_credentials=False,
                          models=[ModelInfo("m1", ["chat", "streaming"])], default_model="m1"))
"""


@pytest.fixture
def spec_plugin() -> Callable[..., str]:
    """``spec_plugin(identifier)``: source of a plugin module registering one fake-backed provider."""

    def source(identifier: str, name: str = "") -> str:
        return SPEC_PLUGIN.format(identifier=identifier, name=name or identifier)

    return source


@pytest.fixture
def register_fake() -> Callable[..., FakeProvider]:
    """``register_fake(registry, identifier, *replies, retry=None, **spec_options)``: register a
    fake provider whose factory always returns the one instance given back (so tests can script
    it and read its ``requests``)."""
    return _register_fake
