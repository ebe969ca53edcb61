"""Fixtures of the conversation tests: fake providers (one, or several in a registry for the
router) that never sleep and never touch the network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.testing import FakeProvider, FakeReply, fake_spec


@pytest.fixture(autouse=True)
def _isolated(fresh_registry: None) -> None:
    """Every test here starts from a fresh registry with no observers (tests/conftest.py)."""


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
