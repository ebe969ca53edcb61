"""OpenAI's settings: an unknown constructor keyword, ``configure`` key or config-file key is an
``UnknownSettingError`` suggesting the closest name, before anything is sent; every call default
the provider accepts (the sampling fields and every per-call chat option) reaches the request on
the wire, and a call's own value wins."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from core_openai_plugin import request_mapper
from core_openai_plugin.provider import OpenAIProvider
from llm_core.config import declared_settings
from llm_core.errors import ConfigurationError, InvalidInputError, UnknownSettingError
from llm_core.messages import ChatMessage, ImagePart, TextPart
from llm_core.registry import Registry
from tests.openai.openai_scenarios import TEST_KEY, make_provider
from tests.openai.openai_wire import PNG, Answer, Msg, response_body, usage

MODEL = "gpt-4.1"  # takes temperature and top_p (a reasoning model refuses them before sending)


def _offline(**settings: Any) -> tuple[OpenAIProvider, list[httpx2.Request]]:
    """A provider whose HTTP goes to a mock answering every ``responses.create``, and what it sent."""
    sent: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        body = response_body(json.loads(request.content), Answer([Msg(["ok"])], usage(1, 1)))
        return httpx2.Response(200, json=body)

    provider: OpenAIProvider = make_provider(model=MODEL, client_args={"transport": httpx2.MockTransport(answer)},
                                             **settings)
    return provider, sent


def _registry() -> Registry:
    from core_openai_plugin.plugin import SPEC

    registry = Registry()
    registry.register(SPEC)
    return registry


@pytest.mark.parametrize(
    ("build", "suggestion"),
    [
        (lambda: _registry().get("openai", api_key=TEST_KEY, tempreature=0.1), "temperature"),
        (lambda: OpenAIProvider(api_key=TEST_KEY, servce_tier="flex"), "service_tier"),
        (lambda: OpenAIProvider(api_key=TEST_KEY, organisation="org-1"), "organization"),
        (lambda: OpenAIProvider(api_key=TEST_KEY).configure({"max_token": 5}), "max_tokens"),
    ],
    ids=["registry.get", "constructor", "plugin setting", "configure"],
)
def test_an_unknown_setting_is_refused_naming_the_closest(build: Callable[[], Any], suggestion: str) -> None:
    with pytest.raises(UnknownSettingError) as caught:
        build()
    assert isinstance(caught.value, ConfigurationError) and caught.value.provider == "openai"
    assert f"did you mean {suggestion!r}?" in str(caught.value)
    assert TEST_KEY not in str(caught.value) and TEST_KEY not in repr(caught.value)


def test_stop_is_no_default_here_the_responses_api_has_none() -> None:
    with pytest.raises(UnknownSettingError, match="unknown setting 'stop'"):
        OpenAIProvider(api_key=TEST_KEY, stop=["END"])


def test_nothing_is_sent_when_configure_refuses() -> None:
    provider, sent = _offline(service_tier="flex")
    with pytest.raises(UnknownSettingError):
        provider.configure({"servce_tier": "priority"})
    provider.chat_completion("Hi")
    assert len(sent) == 1 and json.loads(sent[0].content)["service_tier"] == "flex"


def test_the_config_file_reads_the_same_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[providers.openai]\nmodel = 'gpt-4.1'\ntemperature = 0.4\nservice_tier = 'flex'\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
    provider = OpenAIProvider(api_key=TEST_KEY)
    payload = provider.map_chat_request(provider.builder.chat("Hi"))
    assert (payload["temperature"], payload["service_tier"]) == (0.4, "flex")
    path.write_text("[providers.openai]\ntempreature = 0.4\n")
    with pytest.raises(UnknownSettingError, match=r"in \[providers.openai\].*did you mean 'temperature'\?"):
        OpenAIProvider(api_key=TEST_KEY)


def test_every_call_default_is_a_declared_setting_the_mapper_takes() -> None:
    assert request_mapper.CHAT_OPTIONS <= OpenAIProvider.call_defaults <= declared_settings(OpenAIProvider)
    assert {"temperature", "top_p", "max_tokens"} <= OpenAIProvider.call_defaults


def _body(request: httpx2.Request) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(request.content)
    return body


#: setting → (where it shows in the request sent, a provider default, a call's own value)
DEFAULTS: dict[str, tuple[Callable[[httpx2.Request], Any], Any, Any]] = {
    "temperature": (lambda r: _body(r)["temperature"], 0.2, 0.9),
    "top_p": (lambda r: _body(r)["top_p"], 0.5, 0.1),
    "max_tokens": (lambda r: _body(r)["max_output_tokens"], 64, 32),
    "parallel_tool_calls": (lambda r: _body(r)["parallel_tool_calls"], False, True),
    "service_tier": (lambda r: _body(r)["service_tier"], "flex", "priority"),
    "safety_identifier": (lambda r: _body(r)["safety_identifier"], "user-1", "user-2"),
    "prompt_cache_key": (lambda r: _body(r)["prompt_cache_key"], "cache-a", "cache-b"),
    "metadata": (lambda r: _body(r)["metadata"], {"team": "a"}, {"team": "b"}),
    "truncation": (lambda r: _body(r)["truncation"], "auto", "disabled"),
    "max_tool_calls": (lambda r: _body(r)["max_tool_calls"], 2, 5),
    "top_logprobs": (lambda r: _body(r)["top_logprobs"], 2, 4),
    "verbosity": (lambda r: _body(r)["text"]["verbosity"], "low", "high"),
    "image_detail": (lambda r: _body(r)["input"][0]["content"][1]["detail"], "low", "high"),
    "extra_body": (lambda r: {"x_flag": _body(r)["x_flag"]}, {"x_flag": 1}, {"x_flag": 2}),
    "extra_headers": (lambda r: {"x-team": r.headers["x-team"]}, {"x-team": "a"}, {"x-team": "b"}),
    "extra_query": (lambda r: {"tag": r.url.params["tag"]}, {"tag": "a"}, {"tag": "b"}),
}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_a_call_default_reaches_the_wire_and_the_call_wins(name: str) -> None:
    read, default, own = DEFAULTS[name]
    provider, sent = _offline(**{name: default})
    prompt = [ChatMessage.user([TextPart(text="What is this?"), ImagePart(data=PNG, mime_type="image/png")])]
    provider.chat_completion(prompt)
    provider.chat_completion(prompt, **{name: own})
    assert (read(sent[0]), read(sent[1])) == (default, own)


def test_every_default_the_provider_accepts_is_covered_above() -> None:
    assert set(DEFAULTS) == set(OpenAIProvider.call_defaults)


def test_a_bad_default_value_fails_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="call default invalid max_tokens"):
        OpenAIProvider(api_key=TEST_KEY, max_tokens=0)


def test_a_per_call_typo_is_an_input_error_with_the_same_suggestion() -> None:
    provider, sent = _offline()
    with pytest.raises(InvalidInputError, match="unknown chat option 'servce_tier' for OpenAI; did you mean"):
        provider.chat_completion("Hi", servce_tier="flex")
    assert sent == []
