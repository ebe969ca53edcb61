"""Connection pools per event loop, for the guarded async client (see :mod:`llm_core.transport.clients`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable

import httpx2


class LoopPools:
    """One set of inner transports per running event loop, closed when that loop shuts down.

    Connections belong to the loop that opened them. Each loop's pool is closed by an async
    generator started in that loop: ``asyncio.run`` (and every runner) closes a loop's open
    async generators before it closes the loop (``loop.shutdown_asyncgens``), and the
    generator's ``finally`` closes the pool and forgets the loop. A loop closed without that step
    is forgotten when the next loop opens its pool (its sockets then close with it)."""

    def __init__(self, make: Callable[[str | None], httpx2.AsyncBaseTransport]) -> None:
        self._make = make
        #: loop -> (its transports by route, the generator that closes them)
        self._open: dict[asyncio.AbstractEventLoop, tuple[Pool, AsyncGenerator[None, None]]] = {}
        self._lock = threading.Lock()

    async def get(self, route: str | None) -> httpx2.AsyncBaseTransport:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._open.get(loop)
            if entry is None:
                for closed in [other for other in self._open if other.is_closed()]:
                    del self._open[closed]
                pool: Pool = {}
                closer = self._close_at_shutdown(loop, pool)
                self._open[loop] = (pool, closer)
            else:
                pool, closer = entry
            transport = pool.get(route)
            if transport is None:
                transport = pool[route] = self._make(route)
        if entry is None:
            await closer.asend(None)  # first iterated here: this loop will close it
        return transport

    async def _close_at_shutdown(self, loop: asyncio.AbstractEventLoop, pool: Pool) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                self._open.pop(loop, None)
            await _close(pool)

    async def aclose(self) -> None:
        """Close the running loop's pool (the others close with their loops)."""
        with self._lock:
            entry = self._open.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()


Pool = dict[str | None, httpx2.AsyncBaseTransport]


async def _close(pool: Pool) -> None:
    transports = list(pool.values())
    pool.clear()
    for transport in transports:
        await transport.aclose()
