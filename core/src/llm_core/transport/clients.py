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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from llm_core.errors import ConfigurationError, LLMError
from llm_core.transport.limits import (
    MIB,
    OPENED_BODIES,
    SETTING_NAMES,
    ClosingStream,
    Limits,
    TransportLimitError,
    TransportSettings,
)

if TYPE_CHECKING:
    import httpx2


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


def sync_http_client(limits: Limits, /, **client_args: Any) -> httpx2.Client:
    """An ``httpx2.Client`` enforcing ``limits`` (``client_args`` as httpx2 takes them: proxy,
    verify, limits, headers, a ``transport`` to wrap ...; redirects are never followed)."""
    from llm_core.transport import guard as _http_guard

    return _http_guard.sync_client(limits, client_args)


def async_http_client(limits: Limits, /, **client_args: Any) -> httpx2.AsyncClient:
    """The async twin of :func:`sync_http_client` (one connection pool per event loop)."""
    from llm_core.transport import guard as _http_guard

    return _http_guard.async_client(limits, client_args)


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
    "MIB",
    "OPENED_BODIES",
    "ClosingStream",
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
