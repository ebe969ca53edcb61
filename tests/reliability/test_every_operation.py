"""Every capability of both plugins goes through the same retry policy and error mapping:
a persistent 503 is retried to the attempt cap, a 401 is never retried."""

from __future__ import annotations

from typing import Any

import pytest

from llm_core import operations as declared
from llm_core.errors import AuthenticationError, LLMError, ServerError
from tests.reliability.fault_fixtures import Rig, Sleeps
from tests.reliability.operations import NOT_HERE, OPERATIONS

NAMES = ["gemini", "openai"]
pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _run(rig: Rig, operation: str, mode: str, sleeps: Sleeps) -> Any:
    provider = rig.provider(retry=sleeps.policy())
    sync, asynchronous = OPERATIONS[operation]
    if mode == "sync":
        return sync(provider)
    return await asynchronous(provider)


async def test_every_declared_operation_is_here_or_says_why_not() -> None:
    """(``available_models`` is here too: not a declared operation, but a call that retries.)"""
    assert {op.name for op in declared.OPERATIONS} - set(OPERATIONS) == set(NOT_HERE)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("name", NAMES)
async def test_operation_answers_through_the_loopback_upstream(
    name: str, operation: str, mode: str, rigs: dict[str, Rig], sleeps: Sleeps
) -> None:
    rig = rigs[name]
    server = rig.reset()
    server.fallback = rig.target.upstream
    result = await _run(rig, operation, mode, sleeps)
    assert result is not None
    assert server.count == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("code", "error", "attempts"), [(503, ServerError, 3), (401, AuthenticationError, 1)])
async def test_operation_retries_by_the_policy(
    name: str, operation: str, mode: str, code: int, error: type[LLMError], attempts: int,
    rigs: dict[str, Rig], sleeps: Sleeps,
) -> None:
    rig = rigs[name]
    server = rig.reset()
    server.always(rig.target.status(code))
    with pytest.raises(error) as caught:
        await _run(rig, operation, mode, sleeps)
    assert caught.value.provider == name
    assert getattr(caught.value, "status_code", None) == code
    assert server.count == attempts
    assert sleeps.waits == ([0.5, 1.0] if attempts == 3 else [])
