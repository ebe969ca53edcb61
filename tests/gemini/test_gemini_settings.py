"""Gemini's settings: an unknown constructor keyword, ``configure`` key or config-file key is an
``UnknownSettingError`` suggesting the closest name, before anything is sent; every call default
the provider accepts (the sampling fields and the ``GenerateContentConfig`` options) reaches the
request on the wire, and a call's own value wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from core_gemini_plugin import request_mapper
from core_gemini_plugin.provider import GeminiProvider
from llm_core.config import declared_settings
from llm_core.errors import ConfigurationError, InvalidInputError, UnknownSettingError
from llm_core.registry import Registry
from tests.gemini.gemini_inputs import KEY
from tests.gemini.gemini_support import Offline

ANSWER = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "gemini-2.5-flash",
}


def _answer(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "application/json"}, content=json.dumps(ANSWER).encode())


def _registry() -> Registry:
    from core_gemini_plugin.plugin import SPEC

    registry = Registry()
    registry.register(SPEC)
    return registry


@pytest.mark.parametrize(
    ("build", "suggestion"),
    [
        (lambda: _registry().get("gemini", api_key=KEY, tempreature=0.1), "temperature"),
        (lambda: GeminiProvider(api_key=KEY, top_kk=20), "top_k"),
        (lambda: GeminiProvider(api_key=KEY, api_verison="v1beta"), "api_version"),
        (lambda: GeminiProvider(api_key=KEY).configure({"max_token": 5}), "max_tokens"),
    ],
    ids=["registry.get", "constructor", "plugin setting", "configure"],
)
def test_an_unknown_setting_is_refused_naming_the_closest(build: Any, suggestion: str) -> None:
    with pytest.raises(UnknownSettingError) as caught:
        build()
    assert isinstance(caught.value, ConfigurationError) and caught.value.provider == "gemini"
    assert f"did you mean {suggestion!r}?" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)


def test_nothing_is_sent_when_configure_refuses(offline: Offline) -> None:
    provider, sent = offline(_answer, top_k=20)
    with pytest.raises(UnknownSettingError):
        provider.configure({"top_kk": 3})
    provider.chat_completion("Hi")
    assert json.loads(sent[0].content)["generationConfig"]["topK"] == 20  # the refused change took no effect


def test_the_config_file_reads_the_same_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[providers.gemini]\ntop_k = 20\ntemperature = 0.4\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
    provider = GeminiProvider(api_key=KEY)
    config = provider.map_chat_request(provider.builder.chat("Hi"))["config"]
    assert (config["top_k"], config["temperature"]) == (20, 0.4)
    path.write_text("[providers.gemini]\ntop_kk = 20\n")
    with pytest.raises(UnknownSettingError, match=r"in \[providers.gemini\].*did you mean 'top_k'\?"):
        GeminiProvider(api_key=KEY)


def test_every_call_default_is_a_declared_setting_the_mapper_takes() -> None:
    assert request_mapper.CHAT_OPTIONS <= GeminiProvider.call_defaults <= declared_settings(GeminiProvider)
    assert {"temperature", "top_p", "max_tokens", "stop"} <= GeminiProvider.call_defaults


#: setting → (its name in the body's ``generationConfig``, a provider default, a call's own value)
DEFAULTS: dict[str, tuple[str, Any, Any]] = {
    "temperature": ("temperature", 0.2, 0.9),
    "top_p": ("topP", 0.5, 0.1),
    "max_tokens": ("maxOutputTokens", 64, 8),
    "stop": ("stopSequences", ["END"], ["STOP"]),
    "top_k": ("topK", 20, 3),
    "seed": ("seed", 7, 1),
    "presence_penalty": ("presencePenalty", 0.5, 0.25),
    "frequency_penalty": ("frequencyPenalty", 0.25, 0.5),
    "media_resolution": ("mediaResolution", "MEDIA_RESOLUTION_LOW", "MEDIA_RESOLUTION_HIGH"),
}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_a_call_default_reaches_the_wire_and_the_call_wins(offline: Offline, name: str) -> None:
    wire_name, default, own = DEFAULTS[name]
    provider, sent = offline(_answer, **{name: default})
    provider.chat_completion("Hi")
    provider.chat_completion("Hi", **{name: own})
    first, second = (json.loads(request.content)["generationConfig"] for request in sent)
    assert (first[wire_name], second[wire_name]) == (default, own)


def test_every_default_the_provider_accepts_is_covered() -> None:
    assert set(DEFAULTS) | {"safety_settings", "cached_content"} == set(GeminiProvider.call_defaults)


def test_safety_settings_and_cached_content_defaults_reach_the_payload() -> None:
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    provider = GeminiProvider(api_key=KEY, safety_settings=safety, cached_content="cachedContents/abc")
    config = provider.map_chat_request(provider.builder.chat("Hi"))["config"]
    assert config["safety_settings"] == safety and config["cached_content"] == "cachedContents/abc"
    override = provider.map_chat_request(provider.builder.chat("Hi", cached_content="cachedContents/xyz"))
    assert override["config"]["cached_content"] == "cachedContents/xyz"


def test_a_bad_default_value_fails_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="call default invalid temperature"):
        GeminiProvider(api_key=KEY, temperature=5)


def test_a_per_call_typo_is_an_input_error_with_the_same_suggestion(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match=r"unknown chat option 'top_kk' for Gemini; did you mean 'top_k'\?"):
        provider.chat_completion("Hi", top_kk=3)
    assert sent == []
