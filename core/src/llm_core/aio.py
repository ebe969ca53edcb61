"""``provider.aio``: the async twin of every provider call, same names and arguments.

:class:`AsyncProvider` is defined in :mod:`llm_core.provider.base`, next to the :class:`BaseProvider`
whose ``aio`` property builds it; this module keeps the import path plugins use.
"""

from __future__ import annotations

from llm_core.provider.base import AsyncProvider

__all__ = ["AsyncProvider"]
