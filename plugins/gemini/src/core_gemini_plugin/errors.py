"""google-genai and httpx2 exceptions → the llm-core error taxonomy.

Covers ``google.genai.errors.APIError`` (``ClientError``/``ServerError``: generate, stream,
embed, list, Imagen), the status-code errors of the decisions surface
(``google.genai._interactions``), httpx2 timeouts and transport failures, and local SDK
validation errors. A 429 carries the delay of its ``google.rpc.RetryInfo`` detail (or a
``Retry-After`` header) as ``RateLimitError.retry_after``. The core chains the original.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from llm_core.errors import (
    WRONG_SHAPE,
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
    answer_guard,
)
from llm_core.retry import retry_after_from_headers

PROVIDER = "gemini"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_KEY_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"})


def error_details(body: Any) -> tuple[str | None, list[Mapping[str, Any]]]:
    """``(message, details)`` of a Google error body ``{"error": {"message", "details": […]}}``."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if not isinstance(body, Mapping):
        return (body if isinstance(body, str) and body else None), []
    inner = body.get("error", body)
    if not isinstance(inner, Mapping):
        return None, []
    details = inner.get("details")
    found = [d for d in details if isinstance(d, Mapping)] if isinstance(details, list) else []
    message = inner.get("message")
    return (message if isinstance(message, str) else None), found


def retry_delay(details: Sequence[Mapping[str, Any]], headers: Mapping[str, str] | None = None) -> float | None:
    """Seconds to wait: ``RetryInfo.retryDelay`` (``"36s"``, ``"1.5s"``), else ``Retry-After``."""
    for detail in details:
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return retry_after_from_headers(headers)


def error_for_status(
    code: int | None,
    status: str | None,
    message: str | None,
    details: Sequence[Mapping[str, Any]] = (),
    headers: Mapping[str, str] | None = None,
) -> LLMError:
    """The taxonomy error for a Gemini HTTP error (status code, RPC status, message, details)."""
    text = f"Gemini {status or 'error'} ({code}): {message or 'no message'}"
    reasons = {str(d.get("reason")) for d in details if d.get("reason")}
    lowered = (message or "").lower()
    if reasons & _KEY_REASONS or (code in (400, 401) and "api key" in lowered):
        return AuthenticationError(f"the API key was rejected: {text}", provider=PROVIDER, status_code=code)
    if code == 401:
        return AuthenticationError(text, provider=PROVIDER, status_code=code)
    if code == 403:
        return PermissionDeniedError(text, provider=PROVIDER, status_code=code)
    if code == 404 or status == "NOT_FOUND":
        return NotFoundError(text, provider=PROVIDER, status_code=code)
    if code == 429:
        return RateLimitError(text, provider=PROVIDER, status_code=code, retry_after=retry_delay(details, headers))
    if code in (408, 504) or status == "DEADLINE_EXCEEDED":
        return ProviderTimeoutError(text, provider=PROVIDER, status_code=code)
    if code is not None and 500 <= code < 600:
        return ServerError(text, provider=PROVIDER, status_code=code)
    if code == 400 and "token" in lowered and ("exceed" in lowered or "too long" in lowered):
        return ContextLengthExceededError(text, provider=PROVIDER, status_code=code)
    if code is not None and 400 <= code < 500:
        return InvalidRequestError(text, provider=PROVIDER, status_code=code)
    return ProviderError(text, provider=PROVIDER, status_code=code)


def _headers(response: Any) -> dict[str, str]:
    headers = getattr(response, "headers", None)
    if headers is None:
        return {}
    try:
        return {str(k).lower(): str(v) for k, v in headers.items()}
    except (AttributeError, TypeError):
        return {}


def map_error(error: BaseException) -> LLMError:
    """Map any exception raised while calling the SDK."""
    if isinstance(error, LLMError):
        return error
    from google.genai import errors as genai_errors

    if isinstance(error, genai_errors.APIError):
        _unwrap_response(error)
        message, details = error_details(error.details)
        return error_for_status(error.code, error.status, error.message or message, details, _headers(error.response))
    if isinstance(error, genai_errors.ContinuationInterruptedError) and error.__cause__ is not None:
        return map_error(error.__cause__)
    mapped = _map_decision_error(error) or _map_transport_error(error)
    if mapped is not None:
        return mapped
    if isinstance(error, RecursionError):  # the SDK's json.loads of a 200 body (or chunk) nested thousands deep
        return InvalidResponseError("Gemini sent an answer nested too deep to read", provider=PROVIDER)
    if isinstance(error, json.JSONDecodeError | UnicodeDecodeError | genai_errors.UnknownApiResponseError):
        return InvalidResponseError(f"Gemini sent a body that is not JSON: {error}", provider=PROVIDER)
    auth = _map_auth_error(error)
    if auth is not None:
        return auth
    return _map_local_error(error)


def _map_local_error(error: BaseException) -> LLMError:
    """An exception google-genai raised itself: while checking the call's arguments before
    anything is sent, or while reading the answer after the HTTP exchange.

    The SDK validates its arguments with pydantic models named ``_…Parameters…`` or ``…Config``
    and refuses parameters with ``ValueError``: the request was refused. It reads answers into
    its ``…Response`` models (``GenerateContentResponse``, ``EmbedContentResponse``,
    ``ListModelsResponse``), and its converters fail with ``TypeError``/``AttributeError``/
    ``KeyError``/``IndexError`` on shapes they do not expect: the answer could not be read. The
    core validated the input before the call, so the latter are answers, not inputs.
    """
    import pydantic

    if isinstance(error, pydantic.ValidationError) and error.title.endswith("Response"):
        return InvalidResponseError(
            f"Gemini's answer could not be read ({error.title} does not accept it): {error}", provider=PROVIDER
        )
    if isinstance(error, TypeError | AttributeError | KeyError | IndexError):
        return InvalidResponseError(
            f"Gemini's answer could not be read (google-genai failed on it: {type(error).__name__}: {error})",
            provider=PROVIDER,
        )
    if isinstance(error, pydantic.ValidationError | ValueError):
        return InvalidInputError(f"the google-genai SDK refused the request: {error}", provider=PROVIDER)
    return ProviderError(f"{type(error).__name__}: {error}", provider=PROVIDER)


def _unwrap_response(error: Any) -> None:
    """Errors raised inside a stream carry google-genai's own response wrapper (its headers, and
    the httpx2 response with the request and its key). Keep the httpx2 response instead (a type
    ``APIError.response`` is documented to hold), so that the core can replace it by a copy
    without keys; a wrapper without one becomes a bodiless response with the same headers."""
    import httpx2

    response = error.response
    if response is None or isinstance(response, httpx2.Response):
        return
    inner = getattr(response, "response_stream", None)
    if isinstance(inner, httpx2.Response):
        error.response = inner
        return
    headers = getattr(response, "headers", None)
    error.response = httpx2.Response(error.code or 500, headers=dict(headers) if isinstance(headers, Mapping) else None)


def _map_decision_error(error: BaseException) -> LLMError | None:
    """The status-code errors raised by ``client.decisions`` (``google.genai._interactions``)."""
    try:
        from google.genai import _interactions as decision_errors
    except ImportError:  # pragma: no cover - older SDKs have no decisions surface
        return None
    if isinstance(error, decision_errors.APITimeoutError):
        return ProviderTimeoutError(f"the Gemini decision request timed out: {error}", provider=PROVIDER)
    if isinstance(error, decision_errors.APIConnectionError):
        return ProviderConnectionError(f"cannot reach Gemini: {error}", provider=PROVIDER)
    if isinstance(error, decision_errors.APIResponseValidationError):  # e.g. a 200 that is not JSON
        return InvalidResponseError(
            f"Gemini's decision answer could not be read: {error.message}",
            provider=PROVIDER,
            status_code=error.status_code,
        )
    if isinstance(error, decision_errors.APIError):
        body = error.body
        if isinstance(body, str):
            with contextlib.suppress(ValueError):
                body = json.loads(body)
        message, details = error_details(body)
        inner = body.get("error") if isinstance(body, Mapping) else None
        status = inner.get("status") if isinstance(inner, Mapping) else None
        return error_for_status(
            error.status_code,
            status if isinstance(status, str) else None,
            message or error.message,
            details,
            _headers(getattr(error, "response", None)),
        )
    return None


def _map_transport_error(error: BaseException) -> LLMError | None:
    for module in ("httpx2", "httpx"):
        try:
            http = __import__(module)
        except ImportError:
            continue
        if isinstance(error, http.TimeoutException):
            return ProviderTimeoutError(f"the Gemini request timed out ({type(error).__name__})", provider=PROVIDER)
        if isinstance(error, http.TransportError):
            return ProviderConnectionError(f"cannot reach Gemini: {type(error).__name__}: {error}", provider=PROVIDER)
    return None


def _map_auth_error(error: BaseException) -> LLMError | None:
    try:
        from google.auth import exceptions as auth_exceptions
    except ImportError:  # pragma: no cover - google-auth comes with google-genai
        return None
    if isinstance(error, auth_exceptions.TransportError):
        return ProviderConnectionError(f"cannot reach Google's auth service: {error}", provider=PROVIDER)
    if isinstance(error, auth_exceptions.GoogleAuthError):
        return AuthenticationError(f"Google Cloud credentials are missing or invalid: {error}", provider=PROVIDER)
    return None


#: The guard of every parser: google-genai has validated the answer's shape by then, but not
#: what the parser needs of it. A value the library's own types refuse (a function call without
#: a name fails ``ToolCall``'s validation) is a ``ValueError`` here, which the error mapper would
#: otherwise read as the SDK refusing the request.
reads_answer = answer_guard("Gemini", PROVIDER, (ValueError, *WRONG_SHAPE))
