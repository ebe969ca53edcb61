"""The error taxonomy: hierarchy, retry/fallback flags, and messages that say what to do."""

from __future__ import annotations

import asyncio
import pickle
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from llm_core import (
    AuthenticationError,
    CancelledCallError,
    ConfigurationError,
    ContentFilteredError,
    ContextLengthExceededError,
    DuplicateProviderError,
    FallbackExhaustedError,
    InvalidDecisionResponse,
    InvalidInputError,
    InvalidRequestError,
    InvalidResponseError,
    LLMError,
    NoMatchingProviderError,
    NotFoundError,
    PermissionDeniedError,
    PluginLoadError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    Registry,
    Secret,
    ServerError,
    TransientError,
    UnknownFeatureError,
    UnknownProviderError,
    UnknownSettingError,
    UnsupportedFeatureError,
    errors as errors_module,
)
from llm_core.testing import FakeProvider, FakeReply

# Every public error class of llm_core.errors, read from the module so that a new error is
# covered by the tests below without being listed here too.
EVERY_ERROR = [
    cls for name, cls in vars(errors_module).items()
    if not name.startswith("_") and isinstance(cls, type) and issubclass(cls, LLMError) and cls is not LLMError
]


@pytest.mark.parametrize("cls", EVERY_ERROR, ids=lambda c: c.__name__)
def test_every_error_is_an_llm_error(cls: type[Exception]) -> None:
    assert issubclass(cls, LLMError)


def test_the_hierarchy() -> None:
    assert issubclass(PermissionDeniedError, AuthenticationError)
    assert issubclass(ContextLengthExceededError, InvalidRequestError)
    assert issubclass(InvalidDecisionResponse, InvalidResponseError)
    assert issubclass(DuplicateProviderError, PluginLoadError)
    for cls in (RateLimitError, ServerError, ProviderTimeoutError, ProviderConnectionError):
        assert issubclass(cls, TransientError) and issubclass(cls, ProviderError)
    assert issubclass(UnknownFeatureError, ValueError)
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(UnknownProviderError, KeyError)


@pytest.mark.parametrize("cls", EVERY_ERROR, ids=lambda c: c.__name__)
def test_only_transient_errors_are_retried_and_malformed_answers_fall_back(cls: type[LLMError]) -> None:
    """Transient failures are retried, then fall back; a malformed answer is not retried on the
    same provider (it would most likely come back the same) but the router may try the next."""
    transient = issubclass(cls, TransientError)
    assert cls.retryable is transient
    assert cls.fallback is (transient or issubclass(cls, InvalidResponseError))


def _one_of_each(canary: str) -> list[LLMError]:
    """An instance of every error, each quoting ``canary`` wherever it keeps text."""
    return [
        ConfigurationError(f"bad {canary}", provider="p"),
        UnknownSettingError(f"unknown setting {canary}", provider="p"),
        UnknownFeatureError(canary, ["chat", "vision"]),
        PluginLoadError(f"broken {canary}", distribution="acme"),
        DuplicateProviderError("taken", distribution="acme"),
        UnknownProviderError(canary, ["gemini"]),
        UnsupportedFeatureError("no vision", provider="p"),
        NoMatchingProviderError(f"none {canary}", missing=["vision"]),
        InvalidInputError(f"bad input {canary}", provider="p"),
        ProviderError(f"boom {canary}", provider="p", status_code=418),
        AuthenticationError(f"rejected {canary}", provider="p", status_code=401),
        PermissionDeniedError("denied", provider="p", status_code=403),
        NotFoundError("no such model", provider="p", status_code=404),
        InvalidRequestError("bad request", provider="p", status_code=400),
        ContextLengthExceededError("too long", provider="p", status_code=400),
        ContentFilteredError("blocked", provider="p"),
        InvalidResponseError("not JSON", provider="p", raw=f'{{"key": "{canary}"', status_code=200),
        InvalidDecisionResponse(f"no answer {canary}", provider="p", key="relevant"),
        TransientError("flaky", provider="p"),
        RateLimitError("slow down", provider="p", retry_after=1.5),
        ServerError("down", provider="p", status_code=503),
        ProviderTimeoutError("slow", provider="p"),
        ProviderConnectionError("unreachable", provider="p"),
        FallbackExhaustedError({"a": ServerError(f"down {canary}", provider="a")}),
        CancelledCallError(f"cancelled {canary}", provider="p"),
    ]


def test_every_error_pickles_to_the_same_type_message_and_attributes_without_a_key() -> None:
    canary = Secret("canary-" + secrets.token_hex(12))
    errors = _one_of_each(canary.reveal())
    assert {type(e) for e in errors} == set(EVERY_ERROR)
    for error in errors:
        error.__cause__ = RuntimeError(f"sdk said {canary.reveal()}")  # the chain is not pickled
        error.add_note(f"note {canary.reveal()}")
        data = pickle.dumps(error)
        assert canary.reveal().encode() not in data, type(error).__name__
        loaded = pickle.loads(data)
        assert type(loaded) is type(error)
        assert str(loaded) == str(error).replace(canary.reveal(), "***")
        assert loaded.message == error.message.replace(canary.reveal(), "***")
        assert (loaded.provider, loaded.retryable, loaded.fallback) == (error.provider, error.retryable, error.fallback)
        assert loaded.__cause__ is None
        for name in ("status_code", "retry_after", "missing", "distribution", "key", "identifier", "valid"):
            expected = getattr(error, name, None)
            if isinstance(expected, str):
                expected = expected.replace(canary.reveal(), "***")
            assert getattr(loaded, name, None) == expected


def test_a_fallback_error_pickles_with_every_provider_error() -> None:
    error = FallbackExhaustedError({"a": ServerError("down", provider="a"), "b": RateLimitError("slow", provider="b")})
    loaded = pickle.loads(pickle.dumps(error))
    assert type(loaded) is FallbackExhaustedError and str(loaded) == str(error)
    assert {k: type(v) for k, v in loaded.errors.items()} == {"a": ServerError, "b": RateLimitError}


def test_messages_name_the_provider_and_keep_details() -> None:
    error = RateLimitError("quota exhausted: wait or raise your quota", provider="gemini", retry_after=12.5)
    assert str(error) == "[gemini] quota exhausted: wait or raise your quota"
    assert (error.status_code, error.retry_after, error.message) == (429, 12.5, "quota exhausted: wait or raise "
                                                                                "your quota")
    assert str(ServerError("boom")) == "boom"
    assert ServerError("boom", status_code=502).status_code == 502
    assert InvalidResponseError("bad", raw="{").raw == "{"
    assert str(PluginLoadError("broken", distribution="acme-plugin")) == "plugin 'acme-plugin': broken"
    assert NoMatchingProviderError("none", missing=["vision"]).missing == ("vision",)


def test_invalid_decision_response_names_key_and_reason() -> None:
    error = InvalidDecisionResponse("no answer", provider="openai", key="relevant")
    assert str(error) == "[openai] invalid decision response: question 'relevant': no answer"
    assert (error.key, error.reason, error.provider) == ("relevant", "no answer", "openai")


def test_unknown_provider_message_is_not_a_key_error_repr() -> None:
    error = UnknownProviderError("x", ["gemini", "openai"])
    assert str(error) == "unknown provider 'x'; registered providers: gemini, openai"
    assert "core-gemini-plugin" in str(UnknownProviderError("x", []))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_malformed_answer_is_not_retried_but_the_router_tries_the_next_provider(
    registry: Registry, register_fake: Callable[..., FakeProvider], sleeps: Any, mode: str
) -> None:
    a = register_fake(registry, "a", retry=sleeps.policy(max_attempts=3))
    b = register_fake(registry, "b")
    a.script(FakeReply(error=InvalidResponseError("not JSON", provider="a")))
    b.script(FakeReply(content="from b"))
    router = registry.router("chat")
    response = router.chat_completion("hi") if mode == "sync" else asyncio.run(router.aio.chat_completion("hi"))
    assert (response.content, response.metadata["fallback_from"]) == ("from b", ["a"])
    assert len(a.requests) == 1 and len(b.requests) == 1  # a was not retried
