"""Every fault x provider x sync/async: attempts, waits, error type, stream event order.

The plugins talk to the loopback fault server through their real SDKs; the core's own behaviour
is covered with ``FakeProvider`` raising the errors a plugin maps each fault to.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from llm_core.errors import LLMError, RateLimitError
from llm_core.provider import BaseProvider
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.testing import FakeProvider
from tests.reliability.fault_fixtures import AttemptCounter, Rig, Sleeps
from tests.reliability.fault_scenarios import KNOWN_ISSUES, SHORT_TIMEOUT, TEXT, Fault, cases
from tests.reliability.fault_server import FaultServer, closed_port_url
from tests.reliability.fault_targets import GEMINI, OPENAI, Target

TARGETS = {"gemini": GEMINI, "openai": OPENAI}
pytestmark = pytest.mark.asyncio(loop_scope="session")


def _params() -> list[Any]:
    params = []
    for fault, target, mode in cases():
        marks = []
        reason = KNOWN_ISSUES.get((fault.key, target))
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(fault, target, mode, id=f"{fault.key}-{target}-{mode}", marks=marks))
    return params


def _provider(fault: Fault, target: str, rigs: dict[str, Rig], sleeps: Sleeps) -> tuple[BaseProvider, FaultServer]:
    policy = sleeps.policy(**fault.policy)
    if target == "fake":
        assert fault.fake is not None
        return FakeProvider(replies=fault.fake(), retry=policy), FaultServer()
    if target not in rigs:
        pytest.fail(f"plugin {target} is not installed (pip install -e plugins/{target})")
    rig = rigs[target]
    server = rig.reset()
    http: Target = TARGETS[target]
    if fault.refused:
        return rig.provider(retry=policy, timeout=fault.timeout, base_url=closed_port_url()), server
    assert fault.http is not None
    server.script(*fault.http(http))
    server.fallback = http.upstream  # an unexpected extra attempt would be answered: and caught
    return rig.provider(retry=policy, timeout=fault.timeout, **fault.options), server


def _wire_attempts(target: str, provider: BaseProvider, server: FaultServer) -> int:
    if target == "fake":
        assert isinstance(provider, FakeProvider)
        return len(provider.requests)
    return server.count


async def _call(provider: BaseProvider, mode: str) -> Any:
    if mode == "sync":
        return provider.chat_completion("Tell me a story.")
    return await provider.aio.chat_completion("Tell me a story.")


async def _stream(provider: BaseProvider, mode: str) -> list[StreamEvent]:
    if mode == "sync":
        return list(provider.stream_chat_completion("Tell me a story."))  # type: ignore[attr-defined]
    return [event async for event in provider.aio.stream_chat_completion("Tell me a story.")]


def _check_waits(fault: Fault, waits: list[float]) -> None:
    expect = fault.expect
    if expect.waits_between is not None:
        lo, hi = expect.waits_between
        assert len(waits) == expect.attempts - 1, waits
        assert all(lo <= w <= hi for w in waits), f"waits {waits} not within {lo}-{hi} s"
    elif expect.waits is not None:
        assert waits == pytest.approx(list(expect.waits)), f"waits {waits}, documented {expect.waits}"


def _check_error(fault: Fault, error: LLMError | None, target: str) -> None:
    expect = fault.expect
    assert expect.error is not None
    assert error is not None, "no error reported"
    if expect.exact:
        assert type(error) is expect.error, f"{type(error).__name__}: {error}"
    else:
        assert isinstance(error, expect.error), f"{type(error).__name__}: {error}"
    assert error.provider == target
    assert str(error).startswith(f"[{target}] ") and error.message.strip()
    if expect.status is not None:
        assert getattr(error, "status_code", None) == expect.status
    if expect.retry_after is not None:
        assert isinstance(error, RateLimitError)
        assert error.retry_after is not None
        if isinstance(expect.retry_after, tuple):
            assert expect.retry_after[0] <= error.retry_after <= expect.retry_after[1]
        else:
            assert error.retry_after == pytest.approx(expect.retry_after)
    if target != "fake" and fault.sdk_error:
        assert error.__cause__ is not None, "the SDK exception must be chained"


@pytest.mark.parametrize(("fault", "target", "mode"), _params())
async def test_fault(
    fault: Fault, target: str, mode: str, rigs: dict[str, Rig], sleeps: Sleeps, attempts: AttemptCounter
) -> None:
    provider, server = _provider(fault, target, rigs, sleeps)
    expect = fault.expect
    started = time.monotonic()
    if fault.kind == "call":
        error: LLMError | None = None
        try:
            response = await _call(provider, mode)
        except LLMError as exc:
            error = exc
        if expect.error is None:
            assert error is None, f"{type(error).__name__}: {error}"
            assert response.content == TEXT
            assert response.provider == target
        else:
            _check_error(fault, error, target)
    else:
        events = await _stream(provider, mode)
        kinds = [e.type for e in events]
        assert kinds[-1] is StreamEventType.END and kinds.count(StreamEventType.END) == 1
        tokens = [e for e in events if e.type is StreamEventType.TOKEN]
        assert len(tokens) == expect.tokens, [e.text for e in tokens]
        if expect.error is None:
            assert kinds[-2] is StreamEventType.METADATA and StreamEventType.ERROR not in kinds
            assert "".join(e.text or "" for e in tokens) == TEXT
        else:
            assert kinds[-2] is StreamEventType.ERROR and kinds.count(StreamEventType.ERROR) == 1
            assert StreamEventType.METADATA not in kinds
            assert kinds[: len(tokens)] == [StreamEventType.TOKEN] * len(tokens), "tokens come first"
            _check_error(fault, events[-2].error, target)
    elapsed = time.monotonic() - started

    assert attempts.attempts(target) == expect.attempts, "attempts seen by the core"
    if target == "fake" or not fault.refused:
        assert _wire_attempts(target, provider, server) == expect.attempts, "attempts that reached the wire"
    _check_waits(fault, sleeps.waits)
    if fault.timeout == SHORT_TIMEOUT:
        # gave up at the timeout, not when the slow server finally answered (3 s)
        assert elapsed < expect.attempts * SHORT_TIMEOUT + 1.5
