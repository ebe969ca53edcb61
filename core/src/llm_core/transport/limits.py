"""The transport settings and limits of :mod:`llm_core.transport.clients`, in a module of their own so
that the guarded clients (:mod:`llm_core.transport.guard`, :mod:`llm_core.transport.body_meter`) can use them
without importing the module that builds those clients."""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_core.errors import ConfigurationError, LLMError

MIB = 1024 * 1024


class TransportSettings(BaseModel):
    """The transport settings every httpx2-based provider accepts (constructor keywords or keys of
    the provider's section in the config file). Times are seconds; ``None`` means "the provider's
    ``timeout``" for the two stream limits and "no limit" for ``stream_deadline``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    #: Allow sending the key over plain ``http://`` to a host other than this machine.
    allow_insecure_http: bool = False
    #: Largest decoded response body (bytes), a call's or a whole stream's.
    max_response_bytes: int = Field(default=64 * MIB, gt=0)
    #: Largest single SSE line or event (bytes).
    max_event_bytes: int = Field(default=32 * MIB, gt=0)
    #: Longest wait from sending a stream request to its first event.
    stream_first_event_timeout: float | None = Field(default=None, gt=0)
    #: Longest silence between two events of a stream (comments do not end a silence).
    stream_idle_timeout: float | None = Field(default=None, gt=0)
    #: Longest a whole stream may last (none by default).
    stream_deadline: float | None = Field(default=None, gt=0)

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, provider: str | None = None) -> TransportSettings:
        """The settings among a provider's options; a bad value is a ``ConfigurationError``."""
        try:
            return cls.model_validate({name: options[name] for name in SETTING_NAMES if name in options})
        except ValidationError as exc:
            problem = exc.errors()[0]
            name = ".".join(str(part) for part in problem["loc"])
            raise ConfigurationError(
                f"{name}: {problem['msg']} (got {problem.get('input')!r})", provider=provider
            ) from None


#: The option names :class:`TransportSettings` declares.
SETTING_NAMES: tuple[str, ...] = tuple(TransportSettings.model_fields)


class Limits(BaseModel):
    """The resolved limits one client enforces (the provider's ``timeout`` folded in)."""

    model_config = ConfigDict(frozen=True)

    provider: str
    timeout: float
    first_event_timeout: float
    idle_timeout: float
    stream_deadline: float | None
    max_response_bytes: int
    max_event_bytes: int

    @classmethod
    def resolve(cls, settings: TransportSettings, *, timeout: float, provider: str) -> Limits:
        return cls(
            provider=provider,
            timeout=timeout,
            first_event_timeout=settings.stream_first_event_timeout or timeout,
            idle_timeout=settings.stream_idle_timeout or timeout,
            stream_deadline=settings.stream_deadline,
            max_response_bytes=settings.max_response_bytes,
            max_event_bytes=settings.max_event_bytes,
        )


class TransportLimitError(Exception):
    """Raised inside the SDK by a guarded client when a response crosses a limit; ``llm_error``
    is what the user gets (:func:`transport_error` finds it however the SDK wrapped this)."""

    def __init__(self, llm_error: LLMError) -> None:
        super().__init__(llm_error.message)
        self.llm_error = llm_error


class _Closable(Protocol):
    async def aclose(self) -> None: ...


#: ``(host, port)`` of the request a guarded client is sending, while its transport opens the
#: connection (the pytest plugin's network guard reads it to refuse only model traffic).
SENDING: contextvars.ContextVar[tuple[str, int | None] | None] = contextvars.ContextVar(
    "llm_core_sending", default=None
)

#: While a :class:`ClosingStream` reads, the response bodies the guarded async client opens.
OPENED_BODIES: contextvars.ContextVar[list[_Closable] | None] = contextvars.ContextVar(
    "llm_core_opened_bodies", default=None
)


class ClosingStream:
    """An SDK's async stream whose ``aclose()`` releases the HTTP response first, at once.

    Some SDKs (google-genai) nest async generators without closing the inner ones: closing the
    outer one leaves the response open until the loop finalizes the rest, concurrently ("aclose():
    asynchronous generator is already running"). The guarded client records every body it opens
    while this stream reads; ``aclose()`` closes those bodies, then the SDK stream, whose
    remaining generators then have nothing left to wait for."""

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self._stream = stream
        self._bodies: list[_Closable] = []

    def __aiter__(self) -> ClosingStream:
        return self

    async def __anext__(self) -> Any:
        token = OPENED_BODIES.set(self._bodies)
        try:
            return await self._stream.__anext__()
        finally:
            OPENED_BODIES.reset(token)

    async def aclose(self) -> None:
        bodies, self._bodies = self._bodies, []
        for body in bodies:
            await body.aclose()
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()
