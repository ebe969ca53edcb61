"""What a provider's HTTP traffic is allowed to do: one place for plugins whose SDK sits on httpx2.

Both bundled plugins hand their SDK an httpx2 client built here (a third-party plugin on an
httpx2-based SDK can do the same: build :class:`TransportSettings` from its options and call
:func:`sync_http_client` / :func:`async_http_client`). Those clients

- never follow redirects: every request carries the API key, and a 3xx would send it to whatever
  host the ``Location`` names; a 3xx becomes :class:`~llm_core.errors.InvalidResponseError`;
- bound each attempt as a whole: ``timeout`` covers connect, headers and the complete body, not
  each socket read (a server trickling one byte at a time cannot hold a call open);
- bound a stream (an ``text/event-stream`` answer) by the time to its first event, the longest
  silence between two events (SSE comments such as ``: keep-alive`` do not count as events) and,
  optionally, a total deadline: :class:`~llm_core.errors.ProviderTimeoutError`;
- bound the *decoded* body (``max_response_bytes``) and one SSE line or event
  (``max_event_bytes``): a gzip bomb raises :class:`~llm_core.errors.InvalidResponseError` after
  at most the limit was inflated;
- keep one connection pool per event loop (async), closed when that loop shuts down, so that
  ``asyncio.run`` in a loop leaks no socket.

Importing this module does not import httpx2 (the clients are built on first use).
:func:`check_endpoint` refuses to send a key over plain ``http://`` to a host other than this
machine unless ``allow_insecure_http`` is set.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_core.errors import ConfigurationError, LLMError

if TYPE_CHECKING:
    import httpx2

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


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_endpoint(base_url: str | None, *, has_key: bool, settings: TransportSettings, provider: str) -> None:
    """Refuse a key sent in clear: ``http://`` to a host other than this machine needs
    ``allow_insecure_http=True`` (anyone on the path could read the key and the prompts)."""
    if not base_url or not has_key or settings.allow_insecure_http:
        return
    parts = urlsplit(base_url)
    if parts.scheme.lower() != "http" or is_loopback(parts.hostname or ""):
        return
    raise ConfigurationError(
        f"base_url {parts.scheme}://{parts.hostname} is plain http: the API key would cross the network "
        "unencrypted; use https, or set allow_insecure_http=True if this network is trusted",
        provider=provider,
    )


def sync_http_client(limits: Limits, **client_args: Any) -> httpx2.Client:
    """An ``httpx2.Client`` enforcing ``limits`` (``client_args`` as httpx2 takes them: proxy,
    verify, limits, headers, a ``transport`` to wrap ...; redirects are never followed)."""
    from llm_core import _http_guard

    return _http_guard.sync_client(limits, client_args)


def async_http_client(limits: Limits, **client_args: Any) -> httpx2.AsyncClient:
    """The async twin of :func:`sync_http_client` (one connection pool per event loop)."""
    from llm_core import _http_guard

    return _http_guard.async_client(limits, client_args)


class TransportLimitError(Exception):
    """Raised inside the SDK by a guarded client when a response crosses a limit; ``llm_error``
    is what the user gets (:func:`transport_error` finds it however the SDK wrapped this)."""

    def __init__(self, llm_error: LLMError) -> None:
        super().__init__(llm_error.message)
        self.llm_error = llm_error


def transport_error(error: BaseException) -> LLMError | None:
    """The error for a limit a guarded client enforced, when ``error`` is (or chains) the
    exception it raised; the SDKs wrap what a transport raises, e.g. as a connection error.
    Plugins call it first in ``map_error``; the core then chains ``error`` as the cause."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = getattr(current, "llm_error", None)
        if isinstance(found, LLMError):
            return found
        current = current.__cause__ or current.__context__
    return None


__all__ = [
    "SETTING_NAMES",
    "Limits",
    "TransportLimitError",
    "TransportSettings",
    "async_http_client",
    "check_endpoint",
    "is_loopback",
    "sync_http_client",
    "transport_error",
]
