"""Fixtures of the conversation tests: fake providers (one, or several in a registry for the
router) that never sleep and never touch the network."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from llm_core import observers
from llm_core.registry import Registry, reset_registry
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.testing import FakeProvider, FakeReply, fake_spec


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    reset_registry()
    observers.install(None)
    yield
    observers.install(None)
    reset_registry()


@pytest.fixture
def fake() -> FakeProvider:
    return FakeProvider(retry=RetryPolicy.none())


@pytest.fixture
def registry() -> Registry:
    return Registry(strict=False)


def _register(registry: Registry, identifier: str, *replies: FakeReply, **spec_options: Any) -> FakeProvider:
    """A fake registered under ``identifier`` whose factory returns this one instance."""
    spec = fake_spec(identifier, **spec_options)
    instance = FakeProvider(spec=spec, replies=replies, retry=RetryPolicy.none())
    registry.register(
        ProviderSpec(
            spec.identifier, spec.name, spec.features, lambda **_config: instance, spec.models, spec.default_model
        )
    )
    return instance


@pytest.fixture
def register_fake() -> Callable[..., FakeProvider]:
    return _register
