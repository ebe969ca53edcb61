"""The plugin as llm-core sees it: entry point, spec, catalogue, light discovery, settings and
secrets, the live model list and the connection test."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import httpx2
import pytest

from core_gemini_plugin.models import MODELS, PROVIDER_FEATURES
from core_gemini_plugin.plugin import SPEC
from core_gemini_plugin.provider import GeminiProvider
from llm_core.errors import AuthenticationError, ConfigurationError, ProviderConnectionError
from llm_core.features import Feature
from llm_core.registry import get_registry
from tests.gemini.gemini_inputs import KEY
from tests.gemini.gemini_support import Offline, Runner, cassette


def test_registered_through_the_llm_core_entry_point() -> None:
    [point] = [p for p in entry_points(group="llm_core") if p.name == "gemini"]
    assert point.value == "core_gemini_plugin.plugin"
    assert point.dist is not None and point.dist.name == "core-gemini-plugin"
    spec = next(s for s in get_registry().providers() if s.identifier == "gemini")
    assert spec.name == "Google Gemini" and spec.default_model == "gemini-2.5-flash"
    assert spec.credential_env == ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def test_discovery_and_capability_questions_do_not_import_the_sdk() -> None:
    code = (
        "import sys, json\n"
        "from llm_core import get_registry\n"
        "registry = get_registry()\n"
        "spec = next(s for s in registry.providers() if s.identifier == 'gemini')\n"
        "provider = registry.get('gemini', api_key='test-key')\n"
        "answers = [provider.supports_feature(f) for f in ('vision', 'streaming', 'decision')]\n"
        "print(json.dumps({'answers': answers, 'sdk': 'google.genai' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == {"answers": [True, True, True], "sdk": False}


def test_every_declared_feature_is_implemented() -> None:
    assert SPEC.features <= GeminiProvider.implemented_features()
    assert SPEC.features == PROVIDER_FEATURES == frozenset({
        Feature.CHAT, Feature.COMPLETION, Feature.STREAMING, Feature.TOOLS, Feature.VISION, Feature.DOCUMENTS,
        Feature.JSON_MODE, Feature.THINKING, Feature.EMBEDDINGS, Feature.IMAGE, Feature.DECISION, Feature.BATCH,
        Feature.TOKEN_COUNTING, Feature.WEB_SEARCH, Feature.CODE_EXECUTION, Feature.URL_CONTEXT, Feature.GOOGLE_MAPS,
        Feature.FILE_SEARCH})


@pytest.mark.parametrize(("model", "has", "lacks"), [
    ("gemini-2.5-flash", {"chat", "streaming", "tools", "vision", "documents", "json_mode", "thinking", "decision",
                          "batch", "token_counting"}, {"embeddings", "image"}),
    ("gemini-3-flash-preview", {"chat", "thinking", "tools", "token_counting", "web_search", "code_execution",
                                "url_context", "file_search"}, {"image", "google_maps", "custom_tools"}),
    ("gemini-2.5-flash-lite", {"web_search", "google_maps"}, {"file_search", "remote_mcp"}),
    ("gemini-2.5-flash-image", {"image", "chat", "vision", "token_counting"}, {"thinking", "tools", "embeddings",
                                                                               "batch"}),
    ("imagen-4.0-generate-001", {"image"}, {"chat", "vision", "token_counting"}),
    ("gemini-embedding-001", {"embeddings"}, {"chat", "image", "token_counting"}),
    ("decisions-prerelease", {"decision"}, {"chat", "json_mode", "token_counting"}),
])
def test_catalogue_features_per_model(model: str, has: set[str], lacks: set[str]) -> None:
    provider = GeminiProvider(api_key=KEY)
    assert all(provider.supports_feature(f, model=model) for f in has)
    assert not any(provider.supports_feature(f, model=model) for f in lacks)


def test_catalogue_defaults() -> None:
    provider = GeminiProvider(api_key=KEY)
    assert provider.default_model() == "gemini-2.5-flash"
    assert provider.builder.default_model_for(Feature.EMBEDDINGS) == "gemini-embedding-001"
    assert provider.builder.default_model_for(Feature.IMAGE) == "gemini-2.5-flash-image"
    assert len({m.id for m in MODELS}) == len(MODELS)


def test_missing_key_names_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        GeminiProvider()
    monkeypatch.setenv("GOOGLE_API_KEY", "env-test-key")
    provider = GeminiProvider()
    assert provider.api_key is not None and provider.api_key.reveal() == "env-test-key"
    assert "env-test-key" not in repr(provider) and "env-test-key" not in str(provider.api_key)


def test_settings_reach_the_sdk(offline: Offline, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        assert request.headers["x-goog-api-key"] == KEY
        return httpx2.Response(200, json={"models": []})

    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9/")
    provider, _ = offline(answer, api_version="v1beta")
    assert provider.available_models() == []
    provider.configure({"api_version": "v1"})  # clients are rebuilt
    provider.available_models()
    assert seen == ["http://127.0.0.1:9/v1beta/models", "http://127.0.0.1:9/v1/models"]


def test_available_models_strip_the_prefix(run: Runner) -> None:
    with cassette("list_models") as recorded:
        models = run("available_models")
    assert recorded.requests[0].method == "GET" and recorded.requests[0].uri.endswith("/v1/models")
    assert models == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-embedding-001"]


def test_connection_test(run: Runner) -> None:
    with cassette("list_models"):
        status = run("test_connection")
    assert status.success and status.provider == "gemini"
    assert status.models == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-embedding-001"]
    assert "3 models" in status.message


def test_failed_connection_test_raises(run: Runner) -> None:
    with cassette("list_models_invalid_key"), pytest.raises(ProviderConnectionError, match="API key") as caught:
        run("test_connection")
    assert isinstance(caught.value.__cause__, AuthenticationError)
