"""The one retry policy: exponential backoff with jitter, Retry-After, attempt cap, deadline."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC
from email.utils import parsedate_to_datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from llm_core.errors import ConfigurationError, LLMError, RateLimitError

if TYPE_CHECKING:
    import tenacity

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider call is retried.

    Only errors that may succeed when sent again are retried: by default those whose class says
    so (:attr:`LLMError.retryable <llm_core.errors.LLMError.retryable>`: rate limits, server
    errors, timeouts, connection failures), so the taxonomy is the one list; ``retry_on`` (a
    tuple of error classes) replaces that rule for one policy. A rate limit's ``retry_after`` is
    honoured (up to ``max_retry_after``) instead of the backoff. No wait runs past ``deadline``
    seconds from the first attempt: the last error is raised instead.
    """

    max_attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 20.0
    multiplier: float = 2.0
    jitter: float = 0.25
    deadline: float | None = 60.0
    respect_retry_after: bool = True
    max_retry_after: float = 60.0
    retry_on: tuple[type[LLMError], ...] | None = None
    sleep: Callable[[float], None] | None = field(default=None, compare=False)
    async_sleep: Callable[[float], Awaitable[None]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        """Refuse, when the policy is made, every value that would break at the first retry."""
        if not isinstance(self.max_attempts, int) or isinstance(self.max_attempts, bool) or self.max_attempts < 1:
            raise ConfigurationError(
                f"retry max_attempts must be at least 1 (a whole number), got {self.max_attempts!r}"
            )
        for name in ("initial_delay", "max_delay", "multiplier", "jitter", "max_retry_after"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                raise ConfigurationError(
                    f"retry {name} must be a finite number that is not negative (got {value!r}); "
                    "delays and jitter must not be negative"
                )
        if self.deadline is not None and (not _finite(self.deadline) or self.deadline <= 0):
            raise ConfigurationError(f"retry deadline must be positive (or None), got {self.deadline!r}")
        if not isinstance(self.respect_retry_after, bool):
            raise ConfigurationError(
                f"retry respect_retry_after must be True or False, got {self.respect_retry_after!r}"
            )
        if self.retry_on is not None and (
            not isinstance(self.retry_on, tuple)
            or not all(isinstance(kind, type) and issubclass(kind, LLMError) for kind in self.retry_on)
        ):
            raise ConfigurationError("retry retry_on must be a tuple of LLMError classes (or None)")
        for name in ("sleep", "async_sleep"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise ConfigurationError(f"retry {name} must be callable (or None)")

    @classmethod
    def none(cls) -> RetryPolicy:
        """A policy that tries once."""
        return cls(max_attempts=1)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RetryPolicy:
        """Build from a config table (``[providers.X.retry]``); unknown keys are an error."""
        known = {
            "max_attempts",
            "initial_delay",
            "max_delay",
            "multiplier",
            "jitter",
            "deadline",
            "respect_retry_after",
            "max_retry_after",
        }
        if not isinstance(values, Mapping):
            raise ConfigurationError(f"retry settings must be a table of {sorted(known)}, not {type(values).__name__}")
        unknown = set(values) - known
        if unknown:
            raise ConfigurationError(f"unknown retry settings {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(values))

    def with_(self, **changes: Any) -> RetryPolicy:
        return replace(self, **changes)

    def should_retry(self, error: BaseException) -> bool:
        """Whether ``error`` is worth another attempt: its ``retryable`` flag, or with
        ``retry_on`` set, whether it is one of those classes."""
        if self.retry_on is None:
            return isinstance(error, LLMError) and error.retryable
        return isinstance(error, self.retry_on)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number ``attempt`` (1-based), jitter included."""
        try:
            base = min(self.max_delay, self.initial_delay * self.multiplier ** (attempt - 1))
        except OverflowError:  # a large multiplier after many attempts: the cap applies
            base = self.max_delay
        jittered = base + random.uniform(0, self.jitter * base)  # noqa: S311 - jitter, not crypto
        return min(self.max_delay, jittered)

    def wait_for(self, attempt: int, error: BaseException | None) -> float:
        hint = error.retry_after if isinstance(error, RateLimitError) else None
        if self.respect_retry_after and hint is not None and not math.isnan(hint):  # NaN: no usable hint
            return min(max(hint, 0.0), self.max_retry_after)
        return self.backoff(attempt)

    # -- tenacity wiring (tenacity is imported on the first call, not with llm_core) -----------

    def call(self, attempt: Callable[..., T], *args: Any) -> T:
        """Run ``attempt(*args)`` under this policy (attempt cap, waits, deadline)."""
        return self._retrying(attempt, *args)

    async def acall(self, attempt: Callable[..., Awaitable[T]], *args: Any) -> T:
        """The async twin of :meth:`call`."""
        return await self._async_retrying(attempt, *args)

    @cached_property
    def _retrying(self) -> tenacity.Retrying:
        """This policy's ``Retrying``, built once and shared by every call: each call's attempts
        live in its own ``RetryCallState``, and tenacity keeps its bookkeeping per thread. Tasks
        of one event loop share that bookkeeping safely because ``stop``, ``wait`` and ``retry``
        here are plain functions: tenacity never awaits between setting it and using it."""
        import tenacity

        kwargs = self._tenacity_kwargs()
        if self.sleep is not None:
            kwargs["sleep"] = self.sleep
        return tenacity.Retrying(**kwargs)

    @cached_property
    def _async_retrying(self) -> tenacity.AsyncRetrying:
        import tenacity

        kwargs = self._tenacity_kwargs()
        if self.async_sleep is not None:
            kwargs["sleep"] = self.async_sleep
        return tenacity.AsyncRetrying(**kwargs)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the tenacity objects built from the fields (rebuilt on first use)."""
        return {name: value for name, value in self.__dict__.items() if name not in ("_retrying", "_async_retrying")}

    def _tenacity_kwargs(self) -> dict[str, Any]:
        import tenacity

        stop: tenacity.stop.stop_base = tenacity.stop_after_attempt(self.max_attempts)
        if self.deadline is not None:
            stop = stop | tenacity.stop_before_delay(self.deadline)

        def wait(state: tenacity.RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            return self.wait_for(state.attempt_number, error)

        return {
            "stop": stop,
            "wait": wait,
            "retry": tenacity.retry_if_exception(self.should_retry),
            "reraise": True,
        }


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def retry_after_from_headers(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The server's requested wait in seconds, for plugins mapping a 429/503.

    ``retry-after-ms`` is preferred, then ``retry-after`` as seconds or as an HTTP date (a date in
    the past gives 0; a date without time zone is read as UTC). ``None`` when absent or unreadable.
    Header names are matched case-insensitively.
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    timestamp = when.timestamp() if when.tzinfo is not None else when.replace(tzinfo=UTC).timestamp()
    return max(0.0, timestamp - (time.time() if now is None else now))
