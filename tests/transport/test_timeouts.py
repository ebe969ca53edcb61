"""Timeouts mean what users think: ``timeout`` bounds a whole attempt (connect, headers and the
complete body), and a stream is bounded by the time to its first event, the longest silence
between two events (keep-alive comments are not events) and an optional total deadline.

Each case: one loopback server, both plugins, sync and async, one attempt on the wire, and the
time the call took (figures in docs/reliability.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_core.errors import ProviderTimeoutError
from tests.reliability.fault_scenarios import PIECES
from tests.reliability.fault_server import FaultServer, paced, slow, trickle
from tests.reliability.fault_targets import HTTP_TARGETS, Target
from tests.transport.helpers import MODES, error_of, run, tokens, warm

TARGETS = {t.name: t for t in HTTP_TARGETS}
KEEP_ALIVE = b": keep-alive\n\n"
#: How late past a limit a call may end (scheduling on a loaded 2-core machine).
SLACK = 0.35


def _first_text(target: Target, events: list[str]) -> int:
    marker = "response.output_text.delta" if target.name == "openai" else '"text"'
    return next(i for i, e in enumerate(events) if marker in e)


def trickled_answer(target: Target) -> Any:
    """A complete answer, ``Content-Length`` and all, sent one byte every 20 ms (> 5 s)."""
    body = json.dumps(target.text_body("this answer arrives one byte at a time " * 4))
    return trickle(200, body, 0.02)


def only_keep_alives(target: Target) -> Any:
    """A stream that sends nothing but ``: keep-alive`` comments, every 20 ms."""
    return paced([KEEP_ALIVE] * 250, 0.02)


def one_event_then_keep_alives(target: Target) -> Any:
    events = target.stream_events(PIECES)
    head = events[: _first_text(target, events) + 1]
    return paced([e.encode() for e in head] + [KEEP_ALIVE] * 250, 0.02)


def slow_events(target: Target) -> Any:
    """Real text events, one every 50 ms, for far longer than the deadline."""
    events = target.stream_events([f" word{i}" for i in range(100)])
    return paced([e.encode() for e in events], 0.05)


#: case → (behaviour, provider options, the limit that applies, kind, text of the error)
CASES: dict[str, tuple[Any, dict[str, Any], float, str, str]] = {
    "trickled-body": (trickled_answer, {"timeout": 0.5}, 0.5, "call", "timeout of 0.5 s"),
    "first-event": (
        only_keep_alives,
        {"timeout": 5.0, "stream_first_event_timeout": 0.4},
        0.4,
        "stream",
        "stream_first_event_timeout",
    ),
    "idle-between-events": (
        one_event_then_keep_alives,
        {"timeout": 5.0, "stream_idle_timeout": 0.4},
        0.4,
        "stream",
        "stream_idle_timeout",
    ),
    "stream-deadline": (slow_events, {"timeout": 5.0, "stream_deadline": 0.6}, 0.6, "stream", "stream_deadline"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_limit_ends_the_attempt_on_time(case: str, target: str, mode: str, server: FaultServer) -> None:
    make, options, limit, kind, words = CASES[case]
    http = TARGETS[target]
    server.fallback = http.upstream  # a retry would be answered at once: and counted
    provider = http.build(server.url, **options)
    warm(provider, kind, mode)
    server.clear()
    server.script(make(http))

    result, elapsed = run(provider, kind, mode)

    error = error_of(result)
    print(f"\n{case} {target} {mode}: {type(error).__name__} after {elapsed:.3f} s (limit {limit} s)")
    assert isinstance(error, ProviderTimeoutError), result
    assert words in str(error) or words in str(error.__cause__), error
    assert limit - 0.05 <= elapsed <= limit + SLACK, f"{elapsed:.3f} s for a limit of {limit} s"
    assert server.count == 1
    if case == "idle-between-events":
        assert tokens(result) == 1
    if case == "stream-deadline":
        assert 1 <= tokens(result) < 100


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_timeout_below_one_millisecond_is_not_no_timeout(target: str, mode: str, server: FaultServer) -> None:
    http = TARGETS[target]
    server.fallback = http.upstream
    warm(http.build(server.url), "call", mode)
    server.clear()
    server.script(slow(3.0, http.ok()))
    provider = http.build(server.url, timeout=0.0004)
    if target == "gemini":
        assert provider.http_options().timeout == 1  # type: ignore[attr-defined]  # ms, rounded up, not to 0

    result, elapsed = run(provider, "call", mode)

    assert isinstance(error_of(result), ProviderTimeoutError), result
    assert elapsed < 1.0
