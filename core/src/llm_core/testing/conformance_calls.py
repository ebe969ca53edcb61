"""How the conformance kit makes its calls: sync and async, a failure becoming a conformance error."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

from llm_core.provider import BaseProvider
from llm_core.streaming import StreamEvent
from llm_core.testing import scenarios as sc
from llm_core.testing.checks import ConformanceError, describe


def run_async(awaitable: Any) -> Any:
    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def call_outcome(make_call: Callable[..., Any], *args: Any) -> Any:
    """The call's result (awaited when it is awaitable), or the exception it raised."""
    try:
        result = make_call(*args)
        if inspect.isawaitable(result):
            result = run_async(result)
        return result
    except Exception as exc:  # noqa: BLE001 - the outcome is inspected by the caller
        return exc


def stream_events(provider: BaseProvider, name: str, model: str | None) -> list[StreamEvent]:
    try:
        return list(sc.call(name, provider, model))
    except Exception as exc:
        raise ConformanceError(
            f"{provider.identifier}: the stream raised {describe(exc)} instead of yielding ERROR then END"
        ) from exc


def astream_events(provider: BaseProvider, name: str, model: str | None) -> list[StreamEvent]:
    async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
        return [event async for event in events]

    try:
        return asyncio.run(collect(sc.call(name, provider.aio, model)))
    except Exception as exc:
        raise ConformanceError(
            f"{provider.identifier}: the async stream raised {describe(exc)} instead of yielding ERROR then END"
        ) from exc


def call_both(provider: BaseProvider, name: str, model: str | None) -> tuple[Any, Any]:
    """Scenario ``name`` through the sync API, then through ``provider.aio``."""
    sync = call_ok(provider, f"the {name} call", sc.call, name, provider, model)
    return sync, call_ok(provider, f"the async {name} call", sc.call, name, provider.aio, model)


def call_ok(provider: BaseProvider, what: str, make_call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The call's result (awaited when awaitable); an exception becomes a conformance failure."""
    outcome = call_outcome(lambda: make_call(*args, **kwargs))
    if isinstance(outcome, BaseException):
        raise ConformanceError(f"{provider.identifier}: {what} failed: {describe(outcome)}") from outcome
    return outcome
