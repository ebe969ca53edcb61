"""Live model list, connection test, and OpenAI-compatible servers (base_url, unknown models)."""

from __future__ import annotations

import pytest

from llm_core.errors import AuthenticationError, ProviderConnectionError, UnsupportedFeatureError
from llm_core.responses import ConnectionStatus
from llm_core.streaming import StreamEventType, TokenType
from tests.openai.openai_scenarios import LISTED


async def test_available_models_lists_the_live_models(player):
    models = await player.play("models_list")
    assert models == sorted(LISTED)
    request = player.cassette.requests[0]
    assert (request.method, request.path) == ("GET", "/v1/models")


async def test_connection_test_reports_models(player):
    status = await player.play("models_list", call=lambda p: p.test_connection())
    assert isinstance(status, ConnectionStatus)
    assert status.success and status.provider == "openai" and status.models == sorted(LISTED)
    assert "5 models" in status.message and status.latency_ms is not None


async def test_a_failed_connection_test_raises(player):
    with pytest.raises(ProviderConnectionError, match="connection test failed") as caught:
        await player.play("models_unauthorized")
    assert isinstance(caught.value.__cause__, AuthenticationError)
    assert "test-key" not in str(caught.value)


async def test_a_compatible_server_through_base_url(player):
    response = await player.play("compatible_ollama")
    assert response.content == "Air scatters blue light more than red light."
    assert response.model == "llama3.2"
    assert response.usage.prompt_tokens == 31 and response.usage.thinking_tokens is None
    request = player.cassette.requests[0]
    assert request.uri == "http://localhost:11434/v1/responses"
    # the string form of one user text, as Ollama's own Responses examples send it
    assert player.sent() == {"model": "llama3.2", "store": False,
                             "input": "Why is the sky blue? Answer in one sentence."}


async def test_openai_base_url_from_the_environment(player, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    response = await player.play("compatible_ollama", base_url=None)
    assert response.content.startswith("Air scatters")
    assert player.provider.base_url == "http://localhost:11434/v1"


async def test_unknown_model_features_come_from_the_option(player, no_network):
    with pytest.raises(UnsupportedFeatureError, match=r"llama3\.2.*vision"):
        await player.invoke(lambda p: p.analyze_image(b"\x89PNG\r\n\x1a\n" + b"\0" * 8, model="llama3.2"),
                            base_url="http://localhost:11434/v1", unknown_model_features=["chat", "streaming"])
    assert no_network == []


async def test_raw_reasoning_text_of_open_models_streams_as_thinking(player):
    events = await player.play("compatible_vllm_stream")
    tokens = [(e.text, e.token_type) for e in events if e.type is StreamEventType.TOKEN]
    assert tokens == [("User greets. ", TokenType.LLM_THINKING), ("Reply briefly.", TokenType.LLM_THINKING),
                      ("Hello", TokenType.LLM_RESPONSE), (" there!", TokenType.LLM_RESPONSE)]
    meta = events[-2].metadata
    assert meta.thinking_tokens == 18 and meta.stop_reason == "stop"
    assert player.cassette.requests[0].uri == "http://127.0.0.1:8000/v1/responses"
    sent = player.sent()
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"}
    assert sent["include"] == ["reasoning.encrypted_content"]  # asked for reasoning on an unknown model
