"""Guarded HTTP clients for plugins: no redirects, whole-attempt timeouts, size limits, one
connection pool per event loop (see :mod:`.clients`)."""

from llm_core.transport.clients import (
    MIB,
    OPENED_BODIES,
    SETTING_NAMES,
    ClosingStream,
    Limits,
    TransportLimitError,
    TransportSettings,
    async_http_client,
    check_endpoint,
    is_loopback,
    sync_http_client,
    transport_error,
)

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
