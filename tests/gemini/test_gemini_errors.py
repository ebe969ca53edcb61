"""SDK errors → the llm-core taxonomy; only the core's policy retries (the SDK's retries are off)."""

from __future__ import annotations

from typing import Any

import httpx2
import pydantic
import pytest
from google.genai import errors as genai_errors

from core_gemini_plugin.errors import error_for_status, map_error, retry_delay
from llm_core.errors import (
    AuthenticationError,
    ContextLengthExceededError,
    InvalidInputError,
    InvalidRequestError,
    InvalidResponseError,
    LLMError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from llm_core.streaming import StreamEventType
from tests.gemini.gemini_inputs import KEY
from tests.gemini.gemini_support import Delays, Offline, Runner, cassette, make_provider

# -- through the real SDK (cassettes) -----------------------------------------------------------


@pytest.mark.parametrize(("name", "model", "error", "status"), [
    ("error_invalid_key", None, AuthenticationError, 400),
    ("error_permission_denied", "gemini-2.5-pro", PermissionDeniedError, 403),
    ("error_model_not_found", "gemini-0-nope", NotFoundError, 404),
])
def test_client_errors_are_mapped_and_not_retried(run: Runner, delays: Delays, name: str, model: str | None,
                                                   error: type[LLMError], status: int) -> None:
    options = {"model": model} if model else {}
    with cassette(name) as recorded, pytest.raises(error) as caught:
        run("generate_text", "Hello", **options)
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert caught.value.provider == "gemini"
    assert isinstance(caught.value.__cause__, genai_errors.ClientError)
    assert KEY not in str(caught.value)
    assert recorded.play_count == 1 and delays == []


def test_rate_limit_waits_the_retry_info_delay_then_succeeds(run: Runner, delays: Delays) -> None:
    with cassette("error_rate_limited_then_ok") as recorded:
        assert run("generate_text", "Hello") == "Hi there!"
    assert delays == [7.0]
    assert recorded.all_played


def test_rate_limit_exhausted_raises_with_retry_after(run: Runner, delays: Delays) -> None:
    with cassette("error_rate_limited") as recorded, pytest.raises(RateLimitError) as caught:
        run("generate_text", "Hello")
    assert caught.value.retry_after == 41.0 and caught.value.status_code == 429
    assert "RESOURCE_EXHAUSTED" in str(caught.value)
    assert delays == [41.0, 41.0] and recorded.play_count == 3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_sdk_itself_does_not_retry(mode: str) -> None:
    """With the core policy at one attempt, a 429 is sent exactly once (the SDK would retry 429s)."""
    provider = make_provider(attempts=1)
    with cassette("error_rate_limited") as recorded, pytest.raises(RateLimitError):
        Runner(provider, mode)("generate_text", "Hello")
    assert recorded.play_count == 1


def test_server_error_retried_then_ok(run: Runner, delays: Delays) -> None:
    with cassette("error_server_then_ok") as recorded:
        assert run("generate_text", "Hello") == "Hi there!"
    assert len(delays) == 1 and recorded.all_played


def test_server_errors_exhaust_the_policy(run: Runner, delays: Delays) -> None:
    with cassette("error_server") as recorded, pytest.raises(ServerError) as caught:
        run("generate_text", "Hello")
    assert caught.value.status_code == 500 and isinstance(caught.value.__cause__, genai_errors.ServerError)
    assert recorded.play_count == 3 and len(delays) == 2


# -- transport failures (the real SDK over a failing transport) ----------------------------------


@pytest.mark.parametrize(("failure", "error"), [
    (httpx2.ConnectError("[Errno 111] Connection refused"), ProviderConnectionError),
    (httpx2.RemoteProtocolError("Server disconnected without sending a response."), ProviderConnectionError),
    (httpx2.ReadTimeout("The read operation timed out"), ProviderTimeoutError),
    (httpx2.ConnectTimeout("timed out"), ProviderTimeoutError),
])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_timeouts_and_connection_failures(offline: Offline, delays: Delays, mode: str, failure: Exception,
                                          error: type[LLMError]) -> None:
    def fail(_request: httpx2.Request) -> httpx2.Response:
        raise failure

    provider, sent = offline(fail)
    with pytest.raises(error) as caught:
        Runner(provider, mode)("generate_text", "Hello")
    assert caught.value.__cause__ is failure
    assert len(sent) == 3 and len(delays) == 2  # transient: retried by the core policy


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_that_cannot_connect_ends_with_error_then_end(offline: Offline, mode: str) -> None:
    def fail(_request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    provider, _ = offline(fail)
    events = Runner(provider, mode).stream("Hello")
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[0].error, ProviderConnectionError)


def test_the_timeout_setting_reaches_the_sdk_in_milliseconds(offline: Offline) -> None:
    provider, _ = offline(timeout=12.5)
    options = provider.http_options()
    assert options.timeout == 12500
    assert options.retry_options is not None and options.retry_options.attempts == 1


# -- the mapping table -------------------------------------------------------------------------


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "36s"}
KEY_INVALID = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}


@pytest.mark.parametrize(("code", "status", "message", "details", "expected"), [
    (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [KEY_INVALID], AuthenticationError),
    (400, "INVALID_ARGUMENT", "API key expired. Please renew the API key.", [], AuthenticationError),
    (401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", [], AuthenticationError),
    (403, "PERMISSION_DENIED", "The caller does not have permission", [], PermissionDeniedError),
    (404, "NOT_FOUND", "models/x is not found", [], NotFoundError),
    (429, "RESOURCE_EXHAUSTED", "Quota exceeded", [RETRY_INFO], RateLimitError),
    (400, "INVALID_ARGUMENT", "The input token count (1048577) exceeds the maximum number of tokens allowed "
                              "(1048576).", [], ContextLengthExceededError),
    (400, "INVALID_ARGUMENT", "Request contains an invalid argument.", [], InvalidRequestError),
    (400, "FAILED_PRECONDITION", "User location is not supported for the API use.", [], InvalidRequestError),
    (408, None, "Request Timeout", [], ProviderTimeoutError),
    (504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", [], ProviderTimeoutError),
    (500, "INTERNAL", "An internal error has occurred.", [], ServerError),
    (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", [], ServerError),
    (None, None, None, [], ProviderError),
])
def test_error_for_status(code: int | None, status: str | None, message: str | None, details: list[dict[str, Any]],
                          expected: type[LLMError]) -> None:
    error = error_for_status(code, status, message, details)
    assert type(error) is expected
    assert error.provider == "gemini"


@pytest.mark.parametrize(("details", "headers", "expected"), [
    ([RETRY_INFO], None, 36.0),
    ([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.250s"}], None, 1.25),
    ([], {"retry-after": "12"}, 12.0),
    ([], {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # an HTTP date in the past
    ([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}], None, None),
    ([], None, None),
])
def test_retry_delay(details: list[dict[str, Any]], headers: dict[str, str] | None, expected: float | None) -> None:
    assert retry_delay(details, headers) == expected


def test_genai_errors_of_streams_carry_the_same_mapping() -> None:
    body = {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED", "details": [RETRY_INFO]}}
    mapped = map_error(genai_errors.ClientError(429, body))
    assert isinstance(mapped, RateLimitError) and mapped.retry_after == 36.0


def test_decision_api_errors_are_mapped() -> None:
    from google.genai import _interactions

    request = httpx2.Request("POST", "https://generativelanguage.googleapis.com/v1/decisions")
    body = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
                      "details": [RETRY_INFO]}}
    response = httpx2.Response(429, json=body, request=request)
    mapped = map_error(_interactions.RateLimitError("429", response=response, body=body))
    assert isinstance(mapped, RateLimitError) and mapped.retry_after == 36.0
    assert isinstance(map_error(_interactions.APITimeoutError(request=request)), ProviderTimeoutError)
    assert isinstance(map_error(_interactions.APIConnectionError(request=request)), ProviderConnectionError)


def test_retry_after_as_a_future_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    delay = retry_delay([], {"retry-after": when})
    assert delay is not None and 25 <= delay <= 30


def test_a_body_that_is_not_json_is_an_invalid_response() -> None:
    error = genai_errors.UnknownApiResponseError("Failed to parse response as JSON. Raw response: {oops")
    assert isinstance(map_error(error), InvalidResponseError)


def test_local_sdk_validation_and_unknown_errors() -> None:
    assert isinstance(map_error(ValueError("output_mime_type parameter is only supported in Vertex")),
                      InvalidInputError)
    assert type(map_error(RuntimeError("boom"))) is ProviderError


# -- answers the SDK cannot read (an error, never a silent success), and unknown models ----------

#: 200 answers google-genai fails on after the exchange: parts that are not objects and a content
#: that is a list (pydantic rejects them in ``GenerateContentResponse``), ``candidates`` that is a
#: number and a bare number as the body (its converters raise ``TypeError``). Field names are
#: those of the real ``generateContent`` answer (see upstreams.gemini_content).
UNREADABLE = {
    "parts-not-objects": {"candidates": [{"content": {"parts": ["text", 3], "role": "model"}, "index": 0}]},
    "content-a-list": {"candidates": [{"content": [{"text": "hi"}], "index": 0}]},
    "candidates-a-number": {"candidates": 5},
    "a-bare-number": 5,
}


@pytest.mark.parametrize("body", list(UNREADABLE), ids=str)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_answer_the_sdk_cannot_read_is_an_invalid_response(offline: Offline, delays: Delays, mode: str,
                                                               body: str) -> None:
    provider, sent = offline(lambda request: httpx2.Response(200, json=UNREADABLE[body]))
    runner = Runner(provider, mode)
    with pytest.raises(InvalidResponseError, match="answer could not be read") as caught:
        runner("generate_text", "Hello")
    assert not isinstance(caught.value, InvalidInputError) and "refused" not in str(caught.value)
    assert caught.value.fallback and not caught.value.retryable
    assert len(sent) == 1 and delays == []  # not retried on the same provider
    events = runner.stream("Hello")
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[0].error, InvalidResponseError), events[0].error
    assert len(sent) == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_embeddings_and_models_the_sdk_cannot_read_are_invalid_responses(offline: Offline, mode: str) -> None:
    provider, sent = offline(lambda request: httpx2.Response(200, json={"embeddings": "x", "models": "x"}))
    runner = Runner(provider, mode)
    with pytest.raises(InvalidResponseError, match="EmbedContentResponse"):
        runner("embeddings", ["a"])
    with pytest.raises(InvalidResponseError, match="ListModelsResponse"):
        runner("available_models")
    assert len(sent) == 2


def test_the_sdk_refusing_a_request_before_sending_is_still_invalid_input(offline: Offline) -> None:
    """google-genai checks its arguments with ``…Config``/``_…Parameters`` models and refuses
    parameters with ``ValueError`` before anything is sent: those stay ``InvalidInputError``."""
    from google.genai import types

    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="refused the request"):
        provider.chat_completion("Hello", seed="not a number")  # passed to GenerateContentConfig as is
    assert sent == []
    with pytest.raises(pydantic.ValidationError) as refused:
        types.GenerateContentConfig(temperature="hot")  # type: ignore[arg-type]
    assert isinstance(map_error(refused.value), InvalidInputError)
    assert isinstance(map_error(ValueError("audio_timestamp parameter is only supported in Vertex")),
                      InvalidInputError)


@pytest.mark.parametrize("code", [400, 404])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_status_not_found_is_not_found_whatever_the_code(offline: Offline, mode: str, code: int) -> None:
    # the body the real API answers for an unknown model
    body = {"error": {"code": code, "status": "NOT_FOUND",
                      "message": "models/gemini-0-nope is not found for API version v1, or is not supported for "
                                 "generateContent. Call ListModels to see the list of available models and their "
                                 "supported methods."}}
    provider, sent = offline(lambda request: httpx2.Response(code, json=body))
    with pytest.raises(NotFoundError) as caught:
        Runner(provider, mode)("generate_text", "Hello", model="gemini-0-nope")
    assert caught.value.status_code == code and len(sent) == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_decision_answer_that_is_not_json_is_an_invalid_response(offline: Offline, mode: str) -> None:
    from google.genai import _interactions

    provider, sent = offline(lambda request: httpx2.Response(200, content=b'{"id": "dec_1", "out',
                                                             headers={"content-type": "application/json"}))
    with pytest.raises(InvalidResponseError, match="decision answer could not be read") as caught:
        Runner(provider, mode)("decide", {"task": "triage"}, [{"key": "urgent", "kind": "yes_no",
                                                              "instructions": "Is it urgent?"}])
    assert isinstance(caught.value.__cause__, _interactions.APIResponseValidationError)
    assert caught.value.status_code == 200 and len(sent) == 1
