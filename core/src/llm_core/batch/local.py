"""Local mode: the items as single calls, at most ``concurrency`` at a time, within client-side
limits on requests and tokens per minute. Each call goes through the provider's own path (the
core retry policy) or a router's (fallback across capable providers)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from llm_core.batch.calls import acall_item, usage_tokens
from llm_core.batch.types import ChatItem, DecisionItem, EmbeddingItem, JsonItem
from llm_core.errors import InvalidInputError

Item = ChatItem | JsonItem | EmbeddingItem | DecisionItem


class RateLimiter:
    """Token buckets for requests and tokens per minute (``None``: no limit). A request takes
    one request and its estimated tokens before it starts; :meth:`charge` takes what the
    response reported beyond the estimate, so later requests wait for it."""

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        for name, value in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if value is not None and not value > 0:
                raise InvalidInputError(f"{name} must be positive (or None for no limit), got {value!r}")
        self._rates = (requests_per_minute, tokens_per_minute)
        self._levels = [requests_per_minute or 0.0, tokens_per_minute or 0.0]
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = asyncio.Lock()

    @property
    def active(self) -> bool:
        return any(rate is not None for rate in self._rates)

    def _refill(self) -> None:
        now = self._clock()
        elapsed, self._stamp = now - self._stamp, now
        for index, rate in enumerate(self._rates):
            if rate is not None:
                self._levels[index] = min(rate, self._levels[index] + elapsed * rate / 60.0)

    async def acquire(self, tokens: int) -> None:
        """Wait until one request and ``tokens`` tokens fit (a request larger than the whole
        per-minute budget waits for a full bucket, then goes)."""
        if not self.active:
            return
        async with self._lock:  # first come, first served
            needs = (1.0, float(tokens))
            while True:
                self._refill()
                waits = [
                    (min(need, rate) - level) * 60.0 / rate
                    for need, level, rate in zip(needs, self._levels, self._rates, strict=True)
                    if rate is not None and level < min(need, rate)
                ]
                if not waits:
                    break
                await self._sleep(max(waits))
            for index, rate in enumerate(self._rates):
                if rate is not None:
                    self._levels[index] -= needs[index]

    def charge(self, tokens: int) -> None:
        """Take ``tokens`` more from the token bucket (it may go below zero: later requests wait)."""
        if self._rates[1] is not None and tokens > 0:
            self._levels[1] -= tokens


def estimate_tokens(line: str) -> int:
    """A rough token count of an item before it is sent (four characters per token)."""
    return max(1, len(line) // 4)


async def run_items(
    target: Any,
    items: Iterable[tuple[Item, str]],
    on_result: Callable[[Item, Any], None],
    *,
    concurrency: int = 16,
    limiter: RateLimiter | None = None,
) -> None:
    """Run ``(item, line)`` pairs on ``target`` with at most ``concurrency`` in flight; each
    result (response or typed error) goes to ``on_result`` as it arrives. ``concurrency``
    workers share the input, each taking the next pair as soon as its call is done, so the
    input is read only as fast as calls finish and memory stays flat however long it is."""
    if concurrency < 1:
        raise InvalidInputError(f"concurrency must be at least 1, got {concurrency!r}")
    limiter = limiter or RateLimiter()
    source = iter(items)

    async def worker() -> None:
        # A worker goes straight from one call to the next: no waiting on the whole pool of
        # tasks per result, and its connection goes back to work instead of idling in the pool.
        for item, line in source:  # shared: each pair goes to exactly one worker
            estimate = estimate_tokens(line)
            await limiter.acquire(estimate)
            result = await acall_item(target, item)
            limiter.charge(usage_tokens(result) - estimate)
            on_result(item, result)

    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*workers)  # the first failure (a bug, Ctrl-C) raises as it is
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
