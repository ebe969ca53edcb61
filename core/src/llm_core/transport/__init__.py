"""Guarded HTTP clients for plugins: no redirects, whole-attempt timeouts, size limits, one
connection pool per event loop (see :mod:`.clients`, whose public names this package gives)."""

from llm_core.transport.clients import *  # noqa: F403
from llm_core.transport.clients import __all__ as __all__
