"""A canary API key, configured for every provider, never shows up anywhere a user could see it:
logs at every level (the SDKs', the HTTP stack's and the built-in ``llm_core.calls`` observer at
DEBUG), reprs, exception messages and full tracebacks (chained causes included), observer events
and stream events. Every capability runs its success path and its failure paths (key rejected,
server error retried, connection reset, malformed answer, and an upstream that echoes the key).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from llm_core.errors import AuthenticationError, InvalidResponseError, LLMError, ProviderConnectionError, ServerError
from llm_core.observe import observers
from llm_core.observe.observers import LoggingObserver
from llm_core.registry.discovery import new_plugin_manager
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEvent
from llm_core.testing import FakeProvider, FakeReply
from tests.reliability.fault_fixtures import AttemptCounter
from tests.reliability.fault_server import FaultServer, reset
from tests.reliability.fault_targets import GEMINI, OPENAI, Target
from tests.reliability.operations import OPERATIONS
from tests.security.canary import echo_key_upstream, make_canary

STREAMS = {
    "stream_chat_completion": (
        lambda p: list(p.stream_chat_completion("hi")),
        lambda p: _collect(p.aio.stream_chat_completion("hi")),
    ),
}


async def _collect(events: Any) -> list[StreamEvent]:
    return [e async for e in events]


@dataclass
class Exposure:
    """Everything a user could see: log text, reprs, error texts and tracebacks."""

    texts: list[tuple[str, str]] = field(default_factory=list)

    def add(self, where: str, text: object) -> None:
        self.texts.append((where, str(text)))

    def error(self, where: str, error: BaseException) -> None:
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:  # the whole chain
            seen.add(id(current))
            self.add(f"{where}: str({type(current).__name__})", current)
            self.add(f"{where}: repr({type(current).__name__})", repr(current))
            self.add(f"{where}: args", repr(current.args))
            current = current.__cause__ or current.__context__
        self.add(f"{where}: traceback", "".join(traceback.format_exception(error)))

    def leaks(self, canary: str) -> list[str]:
        probes = {canary, canary[6:18]}  # the key, and a piece of its secret part
        return [where for where, text in self.texts if any(p in text for p in probes)]


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every logger at DEBUG, with the built-in observer logging each call on ``llm_core.calls``."""
    caplog.set_level(logging.DEBUG)
    for name in ("llm_core", "llm_core.calls", "openai", "httpx2", "httpcore2", "google_genai", "google"):
        caplog.set_level(logging.DEBUG, logger=name)
    manager = new_plugin_manager()
    manager.register(LoggingObserver(), name="llm-core:logging")
    counter = AttemptCounter()
    manager.register(counter)
    observers.install(manager.hook)
    caplog.counter = counter  # type: ignore[attr-defined]
    yield caplog
    observers.install(None)


FAILURES = ("key-rejected-and-echoed", "server-error-retried", "connection-reset", "malformed-answer")


def _fail_http(kind: str, target: Target, server: FaultServer) -> None:
    server.clear()
    if kind == "key-rejected-and-echoed":
        server.fallback = echo_key_upstream(target)
    elif kind == "server-error-retried":
        server.always(target.status(500))
    elif kind == "connection-reset":
        server.always(reset())
    else:
        server.always(target.malformed())


def _fail_fake(kind: str, fake: FakeProvider, canary: str) -> None:
    errors: dict[str, Callable[[], LLMError]] = {
        "key-rejected-and-echoed": lambda: AuthenticationError("the key was rejected", provider="fake"),
        "server-error-retried": lambda: ServerError("boom", provider="fake", status_code=500),
        "connection-reset": lambda: ProviderConnectionError("reset", provider="fake"),
        "malformed-answer": lambda: InvalidResponseError("not JSON", provider="fake"),
    }
    fake.script(*[FakeReply(error=errors[kind]()) for _ in range(4)])


async def _run_everything(provider: Any, mode: str, exposure: Exposure, on_fail: Any) -> int:
    """Every capability: success, then each failure path. Returns the number of calls made."""
    calls = 0
    for phase in ("success", *FAILURES):
        on_fail(phase)
        for name, (sync, asynchronous) in {**OPERATIONS, **STREAMS}.items():
            where = f"{name} [{phase}, {mode}]"
            calls += 1
            try:
                result = sync(provider) if mode == "sync" else await asynchronous(provider)
            except LLMError as exc:
                exposure.error(where, exc)
                continue
            exposure.add(f"{where}: repr(result)", repr(result))
            exposure.add(f"{where}: str(result)", str(result))
            for event in result if isinstance(result, list) else ():
                if isinstance(event, StreamEvent) and event.error is not None:
                    exposure.error(f"{where}: stream ERROR event", event.error)
    return calls


def _provider_surface(provider: Any, exposure: Exposure) -> None:
    exposure.add("repr(provider)", repr(provider))
    exposure.add("str(provider)", str(provider))
    exposure.add("repr(vars(provider))", repr(vars(provider)))
    exposure.add("repr(api_key)", repr(provider.api_key))
    exposure.add("format(api_key)", f"{provider.api_key} {provider.api_key!s} {provider.api_key!r}")
    exposure.add("repr(options)", repr(provider.options))
    exposure.add("repr(aio)", repr(provider.aio))


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("style", ["shaped", "plain"])
@pytest.mark.parametrize("name", ["fake", "gemini", "openai"])
async def test_the_canary_key_never_leaks(
    name: str, style: str, mode: str, debug_logs: pytest.LogCaptureFixture
) -> None:
    canary = make_canary(style, name)
    exposure = Exposure()
    policy = RetryPolicy(max_attempts=2, jitter=0.0, sleep=lambda s: None, async_sleep=_no_wait)
    server: FaultServer | None = None
    if name == "fake":
        fake = FakeProvider(api_key=canary, retry=policy)
        provider: Any = fake

        def on_fail(phase: str) -> None:
            if phase != "success":
                _fail_fake(phase, fake, canary)
    else:
        target = {"gemini": GEMINI, "openai": OPENAI}[name]
        server = FaultServer(target.upstream).start()
        provider = target.build(server.url, retry=policy, api_key=canary)

        def on_fail(phase: str) -> None:
            assert server is not None
            if phase == "success":
                server.fallback = target.upstream
            else:
                _fail_http(phase, target, server)

    try:
        calls = await _run_everything(provider, mode, exposure, on_fail)
        if server is not None:
            seen = {r.headers.get("x-goog-api-key") or r.headers.get("authorization", "").removeprefix("Bearer ")
                    for r in server.requests}
            assert seen == {canary}, "the canary was configured and sent as the key"
    finally:
        if server is not None:
            server.close()
    _provider_surface(provider, exposure)
    exposure.add("logs", debug_logs.text)
    for record in debug_logs.records:
        exposure.add(f"log record {record.name}", record.getMessage())
    counter: AttemptCounter = debug_logs.counter  # type: ignore[attr-defined]
    exposure.add("observer events", repr(counter.before + counter.errors + counter.done))

    assert calls >= 50
    assert any(r.name == "llm_core.calls" and r.levelno == logging.DEBUG for r in debug_logs.records), (
        "the built-in observer logged the calls at DEBUG"
    )
    leaks = exposure.leaks(canary)
    assert leaks == [], f"the key leaked in: {leaks[:10]}"


async def _no_wait(seconds: float) -> None:
    return None
