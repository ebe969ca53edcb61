"""Helpers shared by the Gemini plugin tests (fixtures live in conftest.py): instant retries,
cassette replay (record mode ``none`` unless ``LLM_CORE_RECORD`` is set), and one runner that
makes each call through the sync API or through ``provider.aio``."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2

from core_gemini_plugin.provider import GeminiProvider
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEvent
from llm_core.testing.cassettes import RECORD_ENV, use_cassette
from tests.gemini.gemini_inputs import CASSETTES, KEY

RECORDING = bool(os.environ.get(RECORD_ENV))
#: ``offline(handler=None, **config) -> (provider, sent requests)`` (the conftest fixture).
Offline = Callable[..., tuple[GeminiProvider, list[httpx2.Request]]]


class Delays(list[float]):
    """The waits the retry policy asked for (sync and async), none of them slept."""

    def sleep(self, seconds: float) -> None:
        self.append(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.append(seconds)


def fast_retry(delays: Delays, attempts: int = 3) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, sleep=delays.sleep, async_sleep=delays.async_sleep)


def make_provider(delays: Delays | None = None, *, attempts: int = 3, **config: Any) -> GeminiProvider:
    """A provider with the test key (a real ``GEMINI_API_KEY`` only when re-recording)."""
    key = os.environ.get("GEMINI_API_KEY", KEY) if RECORDING else KEY
    return GeminiProvider(api_key=key, retry=fast_retry(delays if delays is not None else Delays(), attempts), **config)


@contextmanager
def cassette(name: str) -> Iterator[Any]:
    """Replay ``cassettes/gemini/<name>.json``; a request that is not in it fails the test."""
    path = CASSETTES / f"{name}.json"
    assert RECORDING or path.is_file(), f"missing cassette {path}"
    with use_cassette(path) as recorded:
        yield recorded


def sent_body(recorded: Any, index: int = 0) -> Any:
    """The decoded JSON body of the ``index``-th request of a cassette."""
    return json.loads(recorded.requests[index].body)


class Runner:
    """Calls a provider method through the sync API or its ``aio`` twin (``mode``)."""

    def __init__(self, provider: GeminiProvider, mode: str) -> None:
        self.provider = provider
        self.mode = mode

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return getattr(self.provider, method)(*args, **kwargs)
        return asyncio.run(getattr(self.provider.aio, method)(*args, **kwargs))

    def stream(self, *args: Any, **kwargs: Any) -> list[StreamEvent]:
        if self.mode == "sync":
            return list(self.provider.stream_chat_completion(*args, **kwargs))

        async def collect() -> list[StreamEvent]:
            return [event async for event in self.provider.aio.stream_chat_completion(*args, **kwargs)]

        return asyncio.run(collect())

    def stream_text(self, *args: Any, **kwargs: Any) -> list[str]:
        if self.mode == "sync":
            return list(self.provider.stream_text(*args, **kwargs))

        async def collect() -> list[str]:
            return [text async for text in self.provider.aio.stream_text(*args, **kwargs)]

        return asyncio.run(collect())
