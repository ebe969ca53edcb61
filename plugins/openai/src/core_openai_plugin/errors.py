"""OpenAI SDK exceptions and error payloads → the llm-core error taxonomy.

The SDK is only imported inside :func:`map_openai_error` (it is called when an exception from the
SDK is already in hand). Messages are scrubbed of API keys: OpenAI echoes a masked key in 401
answers, and nothing key-like may reach a log or an exception; the chained SDK exception is
scrubbed too (:func:`llm_core.redaction.redact_exception`: message, body, request, response).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from llm_core.errors import (
    AuthenticationError,
    ConfigurationError,
    ContentFilteredError,
    ContextLengthExceededError,
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
from llm_core.redaction import redact_exception
from llm_core.retry import retry_after_from_headers

PROVIDER = "openai"
_KEY_LIKE = re.compile(r"\b(sk|sess|org|proj)-[A-Za-z0-9_*\-]{6,}")

#: Error codes (HTTP error bodies, stream ``error`` events, ``response.error``) and their class.
CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
FILTER_CODES = frozenset(
    {
        "content_filter",
        "content_policy_violation",
        "moderation_blocked",
        "bio_policy",
        "image_content_policy_violation",
        "misalignment_policy_violation",
        "cyber_policy",
    }
)
RATE_CODES = frozenset({"rate_limit_exceeded", "insufficient_quota", "rate_limit_error"})
SERVER_CODES = frozenset({"server_error", "internal_error", "vector_store_timeout", "server_is_overloaded"})
#: The Responses API answers an unknown model with 400 (not 404) and this code.
NOT_FOUND_CODES = frozenset({"model_not_found"})


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with key-like tokens and the given secret values replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _KEY_LIKE.sub(lambda m: f"{m.group(1)}-***", text)


def error_from_code(
    code: str | None,
    message: str,
    *,
    provider: str,
    status: int | None = None,
    retry_after: float | None = None,
    service: str = "OpenAI",
) -> LLMError:
    """The error for an OpenAI error ``code`` (used for stream errors and failed responses)."""
    text = f"{service} error{f' {status}' if status else ''}{f' ({code})' if code else ''}: {message}"
    normalized = (code or "").lower()
    if normalized.isdigit():  # compatible servers (OpenRouter) put an HTTP status in a stream error's code
        status = status or int(normalized)
        normalized = {404: "model_not_found", 429: "rate_limit_exceeded"}.get(status, "")
        normalized = normalized or ("server_error" if status >= 500 else normalized)
    if normalized in NOT_FOUND_CODES:
        return NotFoundError(text, provider=provider, status_code=status)
    if normalized in CONTEXT_CODES:
        return ContextLengthExceededError(text, provider=provider, status_code=status or 400)
    if normalized in FILTER_CODES:
        return ContentFilteredError(text, provider=provider, status_code=status)
    if normalized in RATE_CODES:
        return RateLimitError(text, provider=provider, status_code=status or 429, retry_after=retry_after)
    if normalized in SERVER_CODES:
        return ServerError(text, provider=provider, status_code=status)
    return InvalidRequestError(text, provider=provider, status_code=status)


#: Kept for callers of the plugin's earlier name; the parsing lives in the core.
retry_after_seconds = retry_after_from_headers


def _body_fields(body: object) -> tuple[str | None, str | None]:
    """``(code, message)`` of an SDK error body (already the inner ``error`` object)."""
    if isinstance(body, Mapping):
        code = body.get("code") or body.get("type")
        message = body.get("message")
        return (str(code) if code else None), (str(message) if message else None)
    return None, None


class Wording:
    """How errors name the server: ``service`` (``"OpenAI"``, ``"Ollama at http://…/v1"``), what
    to check on a 401, and what a 404 that is not an unknown model may mean (a server without
    the API the endpoint speaks)."""

    __slots__ = ("key_hint", "not_found_hint", "service")

    def __init__(
        self, service: str = "OpenAI", key_hint: str = "check OPENAI_API_KEY", not_found_hint: str = ""
    ) -> None:
        self.service = service
        self.key_hint = key_hint
        self.not_found_hint = not_found_hint


OPENAI = Wording()


def map_openai_error(
    error: BaseException, *, provider: str, secrets: Iterable[str] = (), wording: Wording = OPENAI
) -> LLMError:
    """Map an exception raised by the ``openai`` SDK (or while parsing its result)."""
    kept = tuple(secrets)
    mapped = _mapped(error, provider, lambda text: redact(text, kept), wording)
    # the SDK exception stays chained: its message, body, request and response lose every key
    redact_exception(error, *kept, pattern=_KEY_LIKE)
    return mapped


def _mapped(error: BaseException, provider: str, clean: Callable[[str], str], wording: Wording) -> LLMError:
    import pydantic

    import openai

    if isinstance(error, openai.APITimeoutError):
        return ProviderTimeoutError(f"{wording.service}: the request timed out", provider=provider)
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        detail = f": {clean(str(cause))}" if cause else ""
        return ProviderConnectionError(f"cannot reach {wording.service}{detail}", provider=provider)
    if isinstance(error, openai.APIResponseValidationError):
        return InvalidResponseError(
            f"{wording.service} returned data the SDK cannot read: {clean(error.message)}",
            provider=provider,
            status_code=error.status_code,
        )
    if isinstance(error, openai.APIStatusError):
        return _from_status(error, provider, clean, wording)
    if isinstance(error, openai.APIError):  # e.g. an error event inside a stream
        code, message = _body_fields(error.body)
        return error_from_code(code, clean(message or error.message), provider=provider, service=wording.service)
    if isinstance(error, json.JSONDecodeError):  # a 200 whose body (or a stream event) is not JSON
        return InvalidResponseError(
            f"{wording.service} sent a body that is not valid JSON: {clean(str(error))}",
            provider=provider,
            raw=clean(error.doc[:2000]),
        )
    if isinstance(error, RecursionError):  # the SDK's json.loads of a 200 body nested thousands deep
        return InvalidResponseError(f"{wording.service} sent an answer nested too deep to read", provider=provider)
    if isinstance(error, pydantic.ValidationError):
        return InvalidResponseError(
            f"{wording.service}'s answer does not match the expected schema: {clean(str(error))}", provider=provider
        )
    if isinstance(error, openai.OpenAIError):
        return ConfigurationError(f"{wording.service} client error: {clean(str(error))}", provider=provider)
    return ProviderError(f"{type(error).__name__}: {clean(str(error))}", provider=provider)


def _from_status(error: Any, provider: str, clean: Any, wording: Wording) -> LLMError:
    status: int = error.status_code
    code, message = _body_fields(error.body)
    text = clean(message or error.message)
    label = f"{wording.service} returned {status}{f' ({code})' if code else ''}: {text}"
    normalized = (code or "").lower()
    if status == 401:
        return AuthenticationError(f"{label} ({wording.key_hint})", provider=provider, status_code=status)
    if status == 403:
        return PermissionDeniedError(label, provider=provider, status_code=status)
    if status == 404 and normalized not in NOT_FOUND_CODES and wording.not_found_hint:
        return NotFoundError(f"{label}: {wording.not_found_hint}", provider=provider, status_code=status)
    if status == 404 or normalized in NOT_FOUND_CODES:
        return NotFoundError(label, provider=provider, status_code=status)
    if status == 429:
        return RateLimitError(
            label, provider=provider, status_code=status, retry_after=retry_after_seconds(error.response.headers)
        )
    if status == 408:
        return ProviderTimeoutError(label, provider=provider, status_code=status)
    if status >= 500:
        return ServerError(label, provider=provider, status_code=status)
    if normalized in CONTEXT_CODES or "context length" in text.lower() or "context window" in text.lower():
        return ContextLengthExceededError(label, provider=provider, status_code=status)
    if normalized in FILTER_CODES:
        return ContentFilteredError(label, provider=provider, status_code=status)
    return InvalidRequestError(label, provider=provider, status_code=status)


#: The guard of every parser: the SDK builds an answer without validating it (``construct``),
#: so a field of the wrong type reaches the parser as sent. Raised on the request side (the SDK
#: refusing arguments) the same exceptions are not guarded: the error mapper keeps them.
reads_answer = answer_guard("OpenAI", PROVIDER)


def describe(value: object) -> str:
    """What a body that is not an SDK object is, for error messages (never the whole body)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"text {value[:80]!r}" if value.strip() else "an empty body"
    if isinstance(value, bool | int | float):
        return f"the bare value {value!r}"
    if isinstance(value, list):
        return "a JSON array"
    return f"a {type(value).__name__}"
