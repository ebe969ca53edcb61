"""Faults of OpenAI-compatible servers, played by a loopback server to the real SDK: errors name
the endpoint and, for a 404 on the API path, the ``api`` setting to change; a health check
proves the chat path answers; a key goes only to the endpoint it was configured for."""

from __future__ import annotations

import asyncio
import json

import pytest

from llm_core.errors import NotFoundError, ProviderConnectionError, RateLimitError, ServerError
from llm_core.streaming import StreamEventType
from tests.compat.chat_upstream import NOT_FOUND, stream_events
from tests.compat.conftest import CANARY_KEY, EndpointConfig
from tests.compat.test_endpoints import local_table
from tests.reliability.fault_server import FaultServer, json_response, sse

#: OpenRouter's 429 body (reference recording 11: ``error.code``, ``message``, ``metadata``).
RATE_LIMITED = {"error": {"code": 429, "message": "Provider returned error",
                          "metadata": {"raw": "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream",
                                       "provider_name": "Google"}}}  # fmt: skip


def test_a_chat_completions_only_server_behind_the_responses_dialect_says_which_api_to_set(
    upstream: FaultServer, endpoint_config: EndpointConfig
) -> None:
    provider = endpoint_config(local_table(upstream, "old", api='"responses"', retry="{max_attempts = 1}")).get("old")
    with pytest.raises(NotFoundError) as caught:
        provider.chat_completion("Hi", model="llama3.2")
    message = str(caught.value)
    assert message.startswith(f"[old] old at {upstream.url}/v1 returned 404")
    assert 'set api = "chat_completions" in [providers.old]' in message and "OpenAI" not in message


def test_the_openai_provider_pointed_at_such_a_server_names_it_too(upstream: FaultServer) -> None:
    from core_openai_plugin.provider import OpenAIProvider

    provider = OpenAIProvider(api_key="sk-test-0123456789", base_url=f"{upstream.url}/v1", retry={"max_attempts": 1})
    with pytest.raises(NotFoundError, match=r"does not implement the Responses API \(POST /responses\)"):
        provider.chat_completion("Hi", model="llama3.2")
    with pytest.raises(ProviderConnectionError, match=r"connection test failed: .* returned 404"):
        provider.test_connection()  # /models answers, the chat path does not: not "connected"


def test_a_responses_only_server_behind_the_chat_completions_dialect(endpoint_config: EndpointConfig) -> None:
    with FaultServer() as server:
        server.always(NOT_FOUND)
        provider = endpoint_config(local_table(server, retry="{max_attempts = 1}")).get("local")
        hint = r'\(POST /chat/completions\).*set api = "responses" in \[providers.local\]'
        with pytest.raises(NotFoundError, match=hint):
            provider.chat_completion("Hi", model="llama3.2")


def test_the_health_check_proves_the_chat_path(upstream: FaultServer, endpoint_config: EndpointConfig) -> None:
    status = endpoint_config(local_table(upstream)).get("local").test_connection()
    assert status.success and status.models == ["llama3.2"]
    assert "llama3.2 answers (the Chat Completions API)" in status.message
    assert [r.path for r in upstream.requests] == ["/v1/models", "/v1/chat/completions"]


def test_rate_limits_and_server_errors_map_and_name_the_endpoint(
    upstream: FaultServer, endpoint_config: EndpointConfig
) -> None:
    provider = endpoint_config(local_table(upstream, retry="{max_attempts = 1}")).get("local")
    upstream.script(json_response(429, RATE_LIMITED, headers={"Retry-After": "7"}))
    with pytest.raises(RateLimitError) as limited:
        provider.chat_completion("Hi", model="llama3.2")
    assert limited.value.retry_after == 7 and str(limited.value).startswith("[local] local at")
    upstream.script(json_response(500, {"error": {"message": "boom", "type": "server_error"}}))
    with pytest.raises(ServerError, match=r"^\[local\]"):
        provider.chat_completion("Hi", model="llama3.2")


def test_a_retried_failure_then_an_answer(upstream: FaultServer, endpoint_config: EndpointConfig) -> None:
    provider = endpoint_config(local_table(upstream, retry="{max_attempts = 2, initial_delay = 0.01}")).get("local")
    upstream.script(json_response(503, {"error": {"message": "loading model", "type": "server_error"}}))
    assert provider.chat_completion("Hi", model="llama3.2").content == "echo: Hi"


@pytest.mark.parametrize(
    ("behaviour", "error"),
    [
        (lambda body: sse(stream_events(body, finish=False)), ProviderConnectionError),  # ends without finish_reason
        (lambda body: sse(stream_events(body)[:3], cut_after=2), ProviderConnectionError),  # connection cut
        (lambda body: sse(['data: {"error": {"message": "upstream failed", "code": 502}}\n\n']), ServerError),
    ],
    ids=["no-finish-reason", "cut", "error-event"],
)
def test_broken_streams_end_with_an_error(
    upstream: FaultServer, endpoint_config: EndpointConfig, behaviour, error
) -> None:
    provider = endpoint_config(local_table(upstream, retry="{max_attempts = 1}")).get("local")
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": "Count"}]}
    upstream.script(behaviour(body))
    events = list(provider.stream_chat_completion("Count", model="llama3.2"))
    assert [e.type for e in events][-2:] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[-2].error, error) and events[-2].error.provider == "local"


def test_a_configured_key_goes_to_its_endpoint_only(
    upstream: FaultServer, endpoint_config: EndpointConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_KEY", "lab-secret-0123456789")
    provider = endpoint_config(local_table(upstream, "lab", api_key_env='"LAB_KEY"')).get("lab")
    assert provider.chat_completion("Hi", model="llama3.2").content == "echo: Hi"
    (request,) = upstream.requests
    assert request.headers["authorization"] == "Bearer lab-secret-0123456789"
    assert CANARY_KEY not in json.dumps(request.headers)


def test_the_async_health_check_probes_the_chat_path_too(
    upstream: FaultServer, endpoint_config: EndpointConfig
) -> None:
    provider = endpoint_config(local_table(upstream, "old", api='"responses"', retry="{max_attempts = 1}")).get("old")
    with pytest.raises(ProviderConnectionError, match=r'set api = "chat_completions" in \[providers.old\]'):
        asyncio.run(provider.aio.test_connection())
    status = asyncio.run(endpoint_config(local_table(upstream)).get("local").aio.test_connection())
    assert "llama3.2 answers (the Chat Completions API)" in status.message
