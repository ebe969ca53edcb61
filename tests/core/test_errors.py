"""The error taxonomy: hierarchy, retry/fallback flags, and messages that say what to do."""

from __future__ import annotations

import pytest

from llm_core import (
    AuthenticationError,
    ConfigurationError,
    ContentFilteredError,
    ContextLengthExceededError,
    DuplicateProviderError,
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
    ServerError,
    TransientError,
    UnknownFeatureError,
    UnknownProviderError,
    UnsupportedFeatureError,
)

EVERY_ERROR = [
    ConfigurationError, UnknownFeatureError, PluginLoadError, DuplicateProviderError, UnknownProviderError,
    UnsupportedFeatureError, NoMatchingProviderError, InvalidInputError, ProviderError, AuthenticationError,
    PermissionDeniedError, NotFoundError, InvalidRequestError, ContextLengthExceededError, ContentFilteredError,
    InvalidResponseError, InvalidDecisionResponse, TransientError, RateLimitError, ServerError, ProviderTimeoutError,
    ProviderConnectionError,
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
def test_only_transient_errors_are_retried_or_fall_back(cls: type[LLMError]) -> None:
    transient = issubclass(cls, TransientError)
    assert cls.retryable is transient
    assert cls.fallback is transient


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
