"""SDK errors → the llm-core taxonomy; retries only by the core policy (the SDK's are off)."""

from __future__ import annotations

import httpx2
import pytest

import openai
from core_openai_plugin.errors import error_from_code, redact, retry_after_seconds
from llm_core.errors import (
    AuthenticationError,
    ContentFilteredError,
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from tests.openai.openai_scenarios import TEST_KEY, make_provider


async def test_401_is_an_authentication_error_without_any_key(player):
    with pytest.raises(AuthenticationError) as caught:
        await player.play("error_401")
    error = caught.value
    assert error.status_code == 401 and error.provider == "openai"
    assert "invalid_api_key" in str(error) and "OPENAI_API_KEY" in str(error)
    assert "abcd" not in str(error) and TEST_KEY not in str(error) and "sk-***" in str(error)
    assert isinstance(error.__cause__, openai.AuthenticationError)
    assert player.sleeps == []  # not retried


@pytest.mark.parametrize(("name", "kind", "code"), [
    ("error_403", PermissionDeniedError, 403),
    ("error_404", NotFoundError, 404),
    ("error_400", InvalidRequestError, 400),
    ("error_context_length", ContextLengthExceededError, 400),
])
async def test_status_errors_map_to_the_taxonomy(player, name, kind, code):
    with pytest.raises(kind) as caught:
        await player.play(name)
    assert type(caught.value) is kind
    assert caught.value.status_code == code
    assert len(player.cassette.requests) == 1 and player.sleeps == []


async def test_429_waits_retry_after_ms_then_succeeds(player):
    response = await player.play("error_429_retry_after_ms")
    assert response.content == "pong"
    assert player.sleeps == [0.25]
    assert player.cassette.play_count == 2


async def test_429_exhausted_carries_retry_after(player):
    with pytest.raises(RateLimitError) as caught:
        await player.play("error_429_exhausted")
    assert caught.value.retry_after == 2.0 and caught.value.status_code == 429
    assert player.sleeps == [2.0, 2.0]
    assert player.cassette.play_count == 3


async def test_server_error_is_retried_with_backoff(player):
    response = await player.play("error_500_then_ok")
    assert response.content == "pong"
    assert player.sleeps == [0.5]


async def test_server_errors_exhaust_the_attempts(player):
    with pytest.raises(ServerError) as caught:
        await player.play("error_503_exhausted")
    assert caught.value.status_code == 503
    assert player.sleeps == [0.5, 1.0]


@pytest.mark.parametrize(("raised", "kind"), [
    (httpx2.ReadTimeout("read timed out"), ProviderTimeoutError),
    (httpx2.ConnectError("[Errno 111] Connection refused"), ProviderConnectionError),
])
async def test_timeouts_and_connection_errors_are_retried_then_mapped(monkeypatch, player, raised, kind):
    attempts = []

    def fail(self, request):
        attempts.append(request)
        raise raised

    async def afail(self, request):
        return fail(self, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", fail)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", afail)
    with pytest.raises(kind) as caught:
        await player.invoke(lambda p: p.generate_text("hi", model="gpt-4.1"))
    assert len(attempts) == 3  # the core policy's attempts, one HTTP request each
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


async def test_sdk_clients_never_retry_by_themselves():
    provider = make_provider(timeout=12.5)
    assert provider.client.max_retries == 0
    assert provider.async_client.max_retries == 0
    assert provider.client.timeout == 12.5


@pytest.mark.parametrize(("code", "kind"), [
    ("context_length_exceeded", ContextLengthExceededError),
    ("rate_limit_exceeded", RateLimitError),
    ("server_error", ServerError),
    ("vector_store_timeout", ServerError),
    ("bio_policy", ContentFilteredError),
    ("image_content_policy_violation", ContentFilteredError),
    ("moderation_blocked", ContentFilteredError),
    ("invalid_prompt", InvalidRequestError),
    (None, InvalidRequestError),
])
def test_error_codes_of_streams_and_failed_responses(code, kind):
    error = error_from_code(code, "details", provider="openai")
    assert type(error) is kind and "details" in str(error)


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "0.5"}, 0.5),
    ({"retry-after": "Sun, 29 Nov 2026 12:00:04 GMT"}, 4.0),  # an HTTP date, 4 s after "now"
    ({"retry-after": "Sun, 29 Nov 2026 11:59:00 GMT"}, 0.0),  # a date in the past
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_retry_after_headers(headers, seconds):
    now = 1795953600.0  # Sun, 29 Nov 2026 12:00:00 GMT
    assert retry_after_seconds(httpx2.Headers(headers), now=now) == seconds


def test_redaction_removes_keys_and_known_secrets():
    text = "Incorrect API key provided: sk-proj-abc123*****wxyz for my-secret-value"
    cleaned = redact(text, ["my-secret-value"])
    assert "abc123" not in cleaned and "wxyz" not in cleaned and "my-secret-value" not in cleaned


async def test_a_200_that_is_not_json_is_an_invalid_response(monkeypatch, player):
    def truncated(self, request):
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=b'{"id": "resp_1", "out',
                               request=request)

    async def atruncated(self, request):
        return truncated(self, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", truncated)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", atruncated)
    with pytest.raises(InvalidResponseError, match="not valid JSON") as caught:
        await player.invoke(lambda p: p.generate_text("hi", model="gpt-4.1"))
    assert caught.value.raw == '{"id": "resp_1", "out'
    assert player.sleeps == []  # not retried


def test_the_chained_sdk_exception_is_scrubbed_of_the_key():
    key = "sk-live-canary-0123456789abcdef"
    provider = make_provider(api_key=key)
    request = httpx2.Request("POST", "https://api.openai.com/v1/responses")
    body = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error",
                      "code": "invalid_api_key", "param": None}}
    sdk_error = openai.AuthenticationError(f"Error code: 401 - {body}", response=httpx2.Response(
        401, json=body, request=request), body=body["error"])
    mapped = provider.map_error(sdk_error)
    assert isinstance(mapped, AuthenticationError)
    for text in (str(mapped), str(sdk_error), repr(sdk_error), repr(sdk_error.args), sdk_error.message,
                 repr(sdk_error.body)):
        assert key not in text and "0123456789abcdef" not in text


def _serve(monkeypatch, status, body, sent):
    """Every request of the SDK answered with ``status``/``body`` (JSON), counted in ``sent``."""
    def answer(self, request):
        sent.append(request)
        return httpx2.Response(status, json=body, request=request)

    async def aanswer(self, request):
        return answer(self, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", answer)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", aanswer)


#: The Responses API answers an unknown model with 400 and code ``model_not_found`` (real
#: traffic); the embeddings API answers an unknown model with the same code and a 404.
MODEL_NOT_FOUND = {"error": {"message": "The requested model 'gpt-nope' does not exist.",
                             "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}


@pytest.mark.parametrize("status", [400, 404])
async def test_model_not_found_is_a_not_found_error_whatever_the_status(monkeypatch, player, status):
    sent = []
    _serve(monkeypatch, status, MODEL_NOT_FOUND, sent)
    with pytest.raises(NotFoundError, match="model_not_found") as caught:
        await player.invoke(lambda p: p.generate_text("hi", model="gpt-nope"))
    assert caught.value.status_code == status and len(sent) == 1 and player.sleeps == []
    events = await player.invoke(lambda p: p.stream_chat_completion("hi", model="gpt-nope"))
    assert isinstance(events[0].error, NotFoundError) and len(sent) == 2


def test_model_not_found_inside_a_stream_or_failed_response_is_not_found():
    assert type(error_from_code("model_not_found", "no such model", provider="openai", status=400)) is NotFoundError
