"""The error taxonomy. Every failure a user can see is one of these.

Provider failures keep the SDK exception as ``__cause__`` (``raise ... from``).
``retryable`` says whether the same request may succeed when sent again;
``fallback`` whether the router may try the next capable provider.

Errors pickle (e.g. across processes): type, message and attributes come back; the chained
``__cause__`` does not (as for any Python exception), and known keys are redacted first, in
the chain too (so that a reducer which pickles the chain, as tblib's does, finds none).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

from llm_core import redaction


class LLMError(Exception):
    """Base class of every error raised by llm-core and its plugins."""

    retryable: bool = False
    fallback: bool = False

    def __init__(self, message: str, *, provider: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider

    def __str__(self) -> str:
        return f"[{self.provider}] {self.message}" if self.provider else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt without calling __init__ (subclasses take other arguments), keys redacted.
        # The chain is redacted in place first: a reducer that also pickles __cause__ and
        # __context__ (tblib's, which importing dask.distributed installs for every exception
        # class and reinstalls per error on a worker) calls this method and pickles the chain
        # as it is then.
        redaction.redact_exception(self)
        state = redaction.redact_value(dict(vars(self)))
        return (_rebuild, (type(self), redaction.redact_value(self.args), state))


def _rebuild(cls: type[LLMError], args: tuple[Any, ...], state: dict[str, Any]) -> LLMError:
    """An unpickled error: ``cls`` with its ``args`` and attributes, as it was pickled."""
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(state)
    return error


# --- setup and registry -------------------------------------------------------------


class ConfigurationError(LLMError):
    """A setting is missing or invalid (e.g. no API key: names the variable to set)."""


class UnknownSettingError(ConfigurationError):
    """A setting the provider does not read (a typo such as ``tempreature``), passed to its
    constructor, ``configure`` or a router, or found in its config-file table; names the closest
    valid setting. A router raises it rather than trying the next provider: the mistake is the
    caller's, and skipping the provider would hide it."""


class UnknownFeatureError(LLMError, ValueError):
    """A feature name that is not part of :class:`~llm_core.Feature`."""

    def __init__(self, value: object, valid: Sequence[str]) -> None:
        self.value = value
        self.valid = tuple(valid)
        super().__init__(f"unknown feature {value!r}; valid features are: {', '.join(valid)}")


class PluginLoadError(LLMError):
    """A plugin distribution could not be loaded or registered an invalid spec."""

    def __init__(self, message: str, *, distribution: str | None = None) -> None:
        self.distribution = distribution
        prefix = f"plugin {distribution!r}: " if distribution else ""
        super().__init__(prefix + message)


class DuplicateProviderError(PluginLoadError):
    """Two plugins registered the same provider identifier."""


class UnknownProviderError(LLMError, KeyError):
    """No provider is registered under this identifier."""

    def __init__(self, identifier: str, known: Sequence[str]) -> None:
        self.identifier = identifier
        hint = ", ".join(known) if known else "none (install a plugin, e.g. core-gemini-plugin)"
        super().__init__(f"unknown provider {identifier!r}; registered providers: {hint}")

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return self.message


class UnsupportedFeatureError(LLMError):
    """The provider (or the chosen model) does not offer the requested feature."""


class NoMatchingProviderError(LLMError):
    """No registered provider offers all requested features."""

    def __init__(self, message: str, *, missing: Sequence[str] = ()) -> None:
        self.missing = tuple(missing)
        super().__init__(message)


class InvalidInputError(LLMError, ValueError):
    """The caller's input is invalid; raised before any request is sent."""


# --- provider failures ------------------------------------------------------------


class ProviderError(LLMError):
    """A provider call failed. ``status_code`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str | None = None, status_code: int | None = None) -> None:
        super().__init__(message, provider=provider)
        self.status_code = status_code


class AuthenticationError(ProviderError):
    """The API key was rejected or lacks permission."""


class PermissionDeniedError(AuthenticationError):
    """The key is valid but not allowed to use this resource or model."""


class NotFoundError(ProviderError):
    """The model or resource does not exist (or is not visible to this key)."""


class InvalidRequestError(ProviderError):
    """The provider rejected the request as malformed; retrying will not help."""


class ContextLengthExceededError(InvalidRequestError):
    """The input is longer than the model's context window."""


class ContentFilteredError(ProviderError):
    """The prompt or the response was blocked by the provider's safety system or refused."""


class InvalidResponseError(ProviderError):
    """The provider answered, but not with what was asked (bad JSON, schema mismatch, no image).

    ``raw`` holds the raw text that could not be used. Not retried on the same provider (the
    same request would most likely get the same answer), but the router may try the next one.
    """

    retryable = False
    fallback = True

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        raw: str | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status_code=status_code)
        self.raw = raw


class InvalidDecisionResponse(InvalidResponseError):
    """A decision answer is missing or invalid; names the question key and the reason."""

    def __init__(self, reason: str, *, provider: str | None = None, key: str | None = None) -> None:
        self.key = key
        self.reason = reason
        where = f"question {key!r}: " if key else ""
        super().__init__(f"invalid decision response: {where}{reason}", provider=provider)


class TransientError(ProviderError):
    """A failure that may go away when the request is sent again."""

    retryable = True
    fallback = True


class RateLimitError(TransientError):
    """Rate limit or quota exhausted. ``retry_after`` (seconds) is the provider's hint."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = 429,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status_code=status_code)
        self.retry_after = retry_after


class ServerError(TransientError):
    """The provider failed on its side (HTTP 5xx)."""


class ProviderTimeoutError(TransientError):
    """The request took longer than the configured timeout."""


class ProviderConnectionError(TransientError):
    """The provider could not be reached (DNS, refused, reset)."""


class FallbackExhaustedError(LLMError):
    """Every capable provider failed; ``errors`` maps identifier → its error."""

    def __init__(self, errors: dict[str, LLMError]) -> None:
        self.errors = errors
        detail = "; ".join(f"{k}: {v}" for k, v in errors.items())
        super().__init__(f"all capable providers failed ({detail})")


class CancelledCallError(LLMError):
    """A call (or a conversation turn, a tool run, a batch reading) that ended because it was
    cancelled: its task was cancelled (``asyncio.wait_for``, ``task.cancel()``, a ``TaskGroup``
    failing) or an interrupt (``KeyboardInterrupt``) stopped it. This is what observers hear
    in place of the cancellation, so that every call and scope they saw start is seen to end;
    the caller still gets the cancellation itself. Never retried, never a reason to fall back.
    The cancellation is its ``__cause__``."""


def cancellation(exc: BaseException | None, *, provider: str | None = None) -> CancelledCallError | None:
    """The :class:`CancelledCallError` that reports ``exc`` when ``exc`` cancelled what it ended
    (anything raised that is not an ``Exception``, but ``GeneratorExit``: a caller that closes
    a stream early abandoned it, it was not cancelled); ``None`` otherwise."""
    if exc is None or isinstance(exc, Exception | GeneratorExit):
        return None
    error = CancelledCallError(f"cancelled ({type(exc).__name__})", provider=provider)
    error.__cause__ = exc
    return error


__all__ = [
    "AuthenticationError",
    "CancelledCallError",
    "ConfigurationError",
    "ContentFilteredError",
    "ContextLengthExceededError",
    "DuplicateProviderError",
    "FallbackExhaustedError",
    "InvalidDecisionResponse",
    "InvalidInputError",
    "InvalidRequestError",
    "InvalidResponseError",
    "LLMError",
    "NoMatchingProviderError",
    "NotFoundError",
    "PermissionDeniedError",
    "PluginLoadError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "TransientError",
    "UnknownFeatureError",
    "UnknownProviderError",
    "UnknownSettingError",
    "UnsupportedFeatureError",
]


P = ParamSpec("P")
R = TypeVar("R")

#: What a parser raises when an answer has a field of the wrong type (an object where a list is
#: expected, a list where an object is, a missing key or item).
WRONG_SHAPE: tuple[type[Exception], ...] = (TypeError, AttributeError, KeyError, IndexError)


def answer_guard(
    service: str, provider: str, wrong_shape: tuple[type[Exception], ...] = WRONG_SHAPE
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for a plugin's parsers: they read an answer only, so what fails in them is
    the answer's fault. ``wrong_shape`` exceptions and a ``RecursionError`` (data nested
    thousands deep) become :class:`InvalidResponseError` (a router falls back on it) with the
    original chained; an :class:`LLMError` passes as it is. ``service`` names the sender in the
    message (``"Gemini"``), ``provider`` is the provider identifier."""

    def guard(parse: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(parse)
        def reading(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return parse(*args, **kwargs)
            except RecursionError as exc:
                raise InvalidResponseError(
                    f"{service} sent an answer nested too deep to read", provider=provider
                ) from exc
            except wrong_shape as exc:
                if isinstance(exc, LLMError):  # already one of ours (InvalidInputError is a ValueError)
                    raise
                raise InvalidResponseError(
                    f"{service}'s answer could not be read ({type(exc).__name__}: {exc})", provider=provider
                ) from exc

        return reading

    return guard
