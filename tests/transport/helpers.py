"""Helpers of the transport tests: drive one provider call or stream, sync or async."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from llm_core.errors import LLMError
from llm_core.provider import BaseProvider
from llm_core.streaming import StreamEvent, StreamEventType

MODES = ("sync", "async")
KINDS = ("call", "stream")


def run(provider: BaseProvider, kind: str, mode: str, prompt: str = "Tell me a story.") -> tuple[Any, float]:
    """(the response, or the stream's events, or the LLMError raised; seconds it took)."""
    started = time.monotonic()
    result: Any
    try:
        if kind == "call":
            if mode == "sync":
                result = provider.chat_completion(prompt)
            else:
                result = asyncio.run(provider.aio.chat_completion(prompt))
        elif mode == "sync":
            result = list(provider.stream_chat_completion(prompt))  # type: ignore[attr-defined]
        else:

            async def events() -> list[StreamEvent]:
                return [e async for e in provider.aio.stream_chat_completion(prompt)]

            result = asyncio.run(events())
    except LLMError as exc:
        result = exc
    return result, time.monotonic() - started


def warm(provider: BaseProvider, kind: str, mode: str) -> None:
    """One successful call of the same kind first (the server's fallback answers it), and the
    error mapping once: SDK imports and client construction do not count in a measured time."""
    result, _ = run(provider, kind, mode)
    assert error_of(result) is None, result
    import httpx2

    provider.map_error(httpx2.ReadTimeout("warm-up"))


def error_of(result: Any) -> LLMError | None:
    """The error a call raised or a stream reported (its ERROR event), else None."""
    if isinstance(result, LLMError):
        return result
    if isinstance(result, list):
        kinds = [e.type for e in result]
        assert kinds[-1] is StreamEventType.END and kinds.count(StreamEventType.END) == 1
        errors = [e.error for e in result if e.type is StreamEventType.ERROR]
        return errors[0] if errors else None
    return None


def tokens(result: Any) -> int:
    return sum(1 for e in result if e.type is StreamEventType.TOKEN) if isinstance(result, list) else 0


def wait_until(check: Callable[[], bool], seconds: float = 3.0) -> bool:
    """Poll ``check`` every 10 ms for at most ``seconds`` (bounded)."""
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if check():
            return True
        time.sleep(0.01)
    return check()
