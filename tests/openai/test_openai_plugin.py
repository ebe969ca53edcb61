"""Registration, light discovery, the model catalogue and provider settings."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from importlib.metadata import entry_points
from typing import Any

import pytest

from core_openai_plugin.models import DECISION_MODEL, DEFAULT_MODEL
from core_openai_plugin.plugin import SPEC
from core_openai_plugin.provider import OpenAIProvider
from llm_core.errors import ConfigurationError
from llm_core.features import Feature
from llm_core.registry import Registry
from tests.openai.openai_scenarios import make_provider


def test_the_distribution_registers_through_the_llm_core_entry_point():
    [point] = [ep for ep in entry_points(group="llm_core") if ep.name == "openai"]
    assert point.value == "core_openai_plugin.plugin"
    assert point.dist is not None and point.dist.name == "core-openai-plugin"


def test_discovery_and_selection_do_not_import_the_sdk():
    code = """
import json, sys
from llm_core import get_registry
registry = get_registry()
chosen = registry.select("vision", "streaming", prefer=["openai"])
before = "openai" in sys.modules
provider = registry.get("openai", api_key="test-key")
built = "openai" in sys.modules
provider.supports_feature("decision", model="gpt-6-luna")
queried = "openai" in sys.modules
client = type(provider.client).__name__
print(json.dumps({"before": before, "built": built, "queried": queried, "client": client,
                  "after": "openai" in sys.modules}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    result = json.loads(out.stdout)
    assert result == {"before": False, "built": False, "queried": False, "client": "OpenAI", "after": True}


def test_spec_features_are_backed_by_the_capability_mixins():
    assert SPEC.features <= OpenAIProvider.implemented_features()
    assert SPEC.features == {
        Feature.CHAT,
        Feature.COMPLETION,
        Feature.STREAMING,
        Feature.TOOLS,
        Feature.JSON_MODE,
        Feature.VISION,
        Feature.DOCUMENTS,
        Feature.THINKING,
        Feature.EMBEDDINGS,
        Feature.IMAGE,
        Feature.DECISION,
        Feature.BATCH,
        Feature.TOKEN_COUNTING,
        Feature.WEB_SEARCH,
        Feature.CODE_EXECUTION,
        Feature.FILE_SEARCH,
        Feature.IMAGE_GENERATION,
        Feature.REMOTE_MCP,
        Feature.CUSTOM_TOOLS,
    }
    registry = Registry()
    registry.register(SPEC)
    assert registry.get("openai", api_key="k").identifier == "openai"


def test_catalogue_features_per_model():
    provider = make_provider()
    assert provider.default_model() == DEFAULT_MODEL == "gpt-5.4-mini"
    assert provider.supports_feature("thinking", model="gpt-5.4-mini")
    assert not provider.supports_feature("thinking", model="gpt-4.1")
    assert provider.supports_feature("tools", model="gpt-4.1")
    assert not provider.supports_feature("vision", model="text-embedding-3-small")
    assert provider.supports_feature("documents", model="gpt-4.1")
    assert not provider.supports_feature("chat", model="text-embedding-3-small")
    assert provider.supports_feature("embeddings", model="text-embedding-3-large")
    assert provider.supports_feature("image", model="gpt-image-2")
    assert provider.supports_feature("token_counting", model="gpt-4.1")
    assert provider.supports_feature("token_counting", model="gpt-5.4-mini")
    assert not provider.supports_feature("token_counting", model="text-embedding-3-small")
    assert not provider.supports_feature("token_counting", model="gpt-image-2")
    assert provider.builder.default_model_for(Feature.EMBEDDINGS) == "text-embedding-3-small"
    assert provider.builder.default_model_for(Feature.IMAGE) == "gpt-image-2"
    assert provider.builder.default_decision_model() == DECISION_MODEL == "gpt-6-luna"
    assert provider.native_decisions("gpt-6-luna") and not provider.native_decisions("gpt-5.4")


def test_unknown_models_take_the_configured_features():
    provider = make_provider(unknown_model_features=["chat", "completion", "streaming"])
    assert provider.supports_feature("streaming", model="llama3.2")
    assert not provider.supports_feature("vision", model="llama3.2")
    assert make_provider().supports_feature("vision", model="llama3.2")  # default: provider-level features


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIProvider()


def test_key_and_base_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    provider = OpenAIProvider()
    assert provider.api_key is not None and provider.api_key.reveal() == "env-key-123"
    assert provider.base_url == "http://127.0.0.1:8000/v1"
    assert str(provider.client.base_url) == "http://127.0.0.1:8000/v1/"
    assert "env-key-123" not in repr(provider)


def test_client_options_reach_the_sdk_client_and_configure_rebuilds_it():
    provider = make_provider(
        organization="org-abc",
        project="proj_def",
        default_headers={"x-gateway": "1"},
        base_url="https://gateway.example.com/openai/v1",
    )
    client = provider.client
    assert client.organization == "org-abc" and client.project == "proj_def"
    assert client.default_headers["x-gateway"] == "1"
    provider.configure({"base_url": "https://other.example.com/v1"})
    assert provider.client is not client
    assert str(provider.client.base_url) == "https://other.example.com/v1/"


async def test_one_async_client_per_event_loop():
    provider = make_provider()
    assert provider.async_client is provider.async_client


def test_one_async_client_serves_every_event_loop():
    # connection pools are per loop inside the client's transport (llm_core.transport), closed
    # when their loop shuts down: tests/transport/test_loop_lifecycle.py counts the descriptors
    provider = make_provider()

    async def client_of_this_loop() -> Any:
        return provider.async_client

    assert asyncio.run(client_of_this_loop()) is asyncio.run(client_of_this_loop())
    provider.configure({"base_url": "https://other.example.com/v1"})

    async def rebuilt() -> str:
        return str(provider.async_client.base_url)

    assert asyncio.run(rebuilt()) == "https://other.example.com/v1/"
