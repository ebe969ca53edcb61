"""The fault matrix: every injected fault and its documented outcome.

One table drives the tests (``test_fault_matrix.py``) for every provider in sync and async form,
and the table in ``docs/reliability.md`` (``render_table``; a test keeps the two equal).

The retry policy of the matrix (``Sleeps.policy``): 3 attempts, backoff 0.5 s then 1 s (no
jitter), ``Retry-After`` honoured up to ``max_retry_after`` = 10 s, deadline 30 s. Waits are
recorded by a no-op ``sleep``, never slept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from llm_core.errors import (
    AuthenticationError,
    InvalidRequestError,
    InvalidResponseError,
    LLMError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    TransientError,
)
from llm_core.testing import FakeReply
from tests.reliability import upstreams as up
from tests.reliability.fault_server import Behaviour, paced, redirect, reset, respond, slow, trickle
from tests.reliability.fault_targets import Target

PIECES = ("Once", " upon", " a", " time")
TEXT = "".join(PIECES)
#: Provider timeout used by the "slower than the timeout" faults (seconds): far below their slow
#: answers (3 s, a trickle of several seconds, 2 s of keep-alive comments), and far above what a
#: good answer takes on a busy machine (at 0.25 s a good answer after a timeout was once too late).
SHORT_TIMEOUT = 0.5


@dataclass(frozen=True)
class Outcome:
    """What a call must do under a fault.

    ``error`` None: the call succeeds. ``exact``: the error's class is exactly ``error`` (else a
    subclass is fine). ``waits``: the exact waits asked of ``sleep``; ``waits_between``: each
    wait within a range (HTTP dates). ``tokens``: TOKEN events delivered before ERROR (streams).
    """

    error: type[LLMError] | None
    attempts: int
    waits: tuple[float, ...] | None = ()
    waits_between: tuple[float, float] | None = None
    retry_after: float | tuple[float, float] | None = None
    status: int | None = None
    exact: bool = True
    tokens: int | None = None

    def describe(self) -> str:
        if self.error is None:
            result = "answers"
        else:
            result = f"`{self.error.__name__}`" if self.exact else f"a `{self.error.__name__}` subclass"
            if self.status:
                result += f" ({self.status})"
        return result

    def describe_waits(self) -> str:
        if self.waits_between is not None:
            lo, hi = self.waits_between
            return f"{self.attempts - 1} x {lo:g}-{hi:g} s"
        if not self.waits:
            return "none"
        return ", ".join(f"{w:g} s" for w in self.waits)


@dataclass(frozen=True)
class Fault:
    key: str
    title: str
    kind: Literal["call", "stream"]
    expect: Outcome
    http: Callable[[Target], list[Behaviour]] | None = None
    fake: Callable[[], list[FakeReply]] | None = None
    refused: bool = False
    policy: Mapping[str, Any] = field(default_factory=dict)
    timeout: float = 5.0
    #: Provider options of the case (transport limits).
    options: Mapping[str, Any] = field(default_factory=dict)
    only: tuple[str, ...] = ()
    #: False when the error comes from an event the parser read, not from an SDK exception
    #: (then there is no SDK exception to chain).
    sdk_error: bool = True

    def targets(self) -> list[str]:
        names = []
        if self.fake is not None:
            names.append("fake")
        if self.http is not None or self.refused:
            names += [n for n in ("gemini", "openai") if not self.only or n in self.only]
        return names


def _times(n: int, make: Callable[[], Any]) -> list[Any]:
    return [make() for _ in range(n)]


def _status(code: int, n: int = 3, **kwargs: Any) -> Callable[[Target], list[Behaviour]]:
    return lambda t: _times(n, lambda: t.status(code, **kwargs))


def _fake_errors(make: Callable[[], LLMError], n: int = 3) -> Callable[[], list[FakeReply]]:
    return lambda: _times(n, lambda: FakeReply(error=make()))


BACKOFF = (0.5, 1.0)

FAULTS: tuple[Fault, ...] = (
    # -- rate limits ---------------------------------------------------------------------------
    Fault(
        "429-retry-after-seconds",
        "429 with `Retry-After: 2` on every attempt",
        "call",
        Outcome(RateLimitError, 3, (2.0, 2.0), retry_after=2.0, status=429),
        http=_status(429, headers={"Retry-After": "2"}),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake", retry_after=2.0)),
    ),
    Fault(
        "429-retry-after-http-date",
        "429 with `Retry-After: <HTTP date 4 s ahead>`",
        "call",
        Outcome(RateLimitError, 3, None, waits_between=(2.5, 4.0), retry_after=(2.5, 4.0), status=429),
        http=lambda t: _times(3, lambda: t.status(429, headers={"Retry-After": up.http_date(4)})),
    ),
    Fault(
        "429-retry-info",
        "429 with Gemini `RetryInfo.retryDelay: \"1.5s\"`",
        "call",
        Outcome(RateLimitError, 3, (1.5, 1.5), retry_after=1.5, status=429),
        http=_status(429, retry_delay="1.5s"),
        only=("gemini",),
    ),
    Fault(
        "429-capped",
        "429 with `Retry-After: 45`, policy `max_retry_after=10`",
        "call",
        Outcome(RateLimitError, 3, (10.0, 10.0), retry_after=45.0, status=429),
        http=_status(429, headers={"Retry-After": "45"}),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake", retry_after=45.0)),
    ),
    Fault(
        "429-past-deadline",
        "429 with `Retry-After: 45`, policy `deadline=30`, `max_retry_after=60`",
        "call",
        Outcome(RateLimitError, 1, (), retry_after=45.0, status=429),
        http=_status(429, headers={"Retry-After": "45"}),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake", retry_after=45.0)),
        policy={"max_retry_after": 60.0},
    ),
    Fault(
        "429-no-hint",
        "429 without any delay hint",
        "call",
        Outcome(RateLimitError, 3, BACKOFF, status=429),
        http=_status(429),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake")),
    ),
    Fault(
        "429-nonsense-hint",
        "429 with a nonsense `Retry-After: nan`",
        "call",
        Outcome(RateLimitError, 3, BACKOFF, status=429),
        http=_status(429, headers={"Retry-After": "nan"}),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake", retry_after=float("nan"))),
    ),
    # -- server errors ---------------------------------------------------------------------------
    *(
        Fault(
            f"{code}",
            f"HTTP {code} on every attempt",
            "call",
            Outcome(ServerError, 3, BACKOFF, status=code),
            http=_status(code),
            fake=_fake_errors(lambda code=code: ServerError("boom", provider="fake", status_code=code)),  # type: ignore[misc]
        )
        for code in (500, 502, 503)
    ),
    Fault(
        "503-deadline",
        "HTTP 503 on every attempt, policy `deadline=0.8`",
        "call",
        Outcome(ServerError, 2, (0.5,), status=503),
        http=_status(503),
        fake=_fake_errors(lambda: ServerError("busy", provider="fake", status_code=503)),
        policy={"deadline": 0.8},
    ),
    Fault(
        "504",
        "HTTP 504 on every attempt",
        "call",
        Outcome(TransientError, 3, BACKOFF, status=504, exact=False),
        http=_status(504),
        fake=_fake_errors(lambda: ServerError("gateway timeout", provider="fake", status_code=504)),
    ),
    # -- the network ---------------------------------------------------------------------------
    Fault(
        "connection-reset",
        "connection reset (RST) before any response byte",
        "call",
        Outcome(ProviderConnectionError, 3, BACKOFF),
        http=lambda t: _times(3, reset),
        fake=_fake_errors(lambda: ProviderConnectionError("reset", provider="fake")),
    ),
    Fault(
        "connection-refused",
        "connection refused (nothing listens)",
        "call",
        Outcome(ProviderConnectionError, 3, BACKOFF),
        refused=True,
        fake=_fake_errors(lambda: ProviderConnectionError("refused", provider="fake")),
    ),
    Fault(
        "timeout",
        f"answer slower than the timeout ({SHORT_TIMEOUT:g} s)",
        "call",
        Outcome(ProviderTimeoutError, 3, BACKOFF),
        http=lambda t: _times(3, lambda: slow(3.0, t.ok())),
        fake=_fake_errors(lambda: ProviderTimeoutError("slow", provider="fake")),
        timeout=SHORT_TIMEOUT,
    ),
    Fault(
        "body-cut",
        "`Content-Length` promised, connection closed half-way through the body",
        "call",
        Outcome(ProviderConnectionError, 3, BACKOFF),
        http=lambda t: _times(3, t.body_cut),
    ),
    Fault(
        "malformed-json",
        "200 with a truncated (malformed) JSON body",
        "call",
        Outcome(InvalidResponseError, 1),
        http=lambda t: [t.malformed()],
        fake=_fake_errors(lambda: InvalidResponseError("not JSON", provider="fake"), 1),
    ),
    # -- client errors: never retried ------------------------------------------------------------
    *(
        Fault(
            f"{code}",
            f"HTTP {code}",
            "call",
            Outcome(error, 1, status=code),
            http=_status(code),
            fake=_fake_errors(lambda code=code, error=error: error("no", provider="fake", status_code=code), 1),  # type: ignore[misc]
        )
        for code, error in (
            (400, InvalidRequestError),
            (401, AuthenticationError),
            (403, PermissionDeniedError),
            (404, NotFoundError),
        )
    ),
    # -- recoveries ------------------------------------------------------------------------------
    Fault(
        "503-then-ok",
        "HTTP 503 once, then an answer",
        "call",
        Outcome(None, 2, (0.5,)),
        http=lambda t: [t.status(503), t.ok(TEXT)],
        fake=lambda: [FakeReply(error=ServerError("busy", provider="fake", status_code=503)), FakeReply(content=TEXT)],
    ),
    Fault(
        "429-then-ok",
        "429 with `Retry-After: 1` once, then an answer",
        "call",
        Outcome(None, 2, (1.0,)),
        http=lambda t: [t.status(429, headers={"Retry-After": "1"}), t.ok(TEXT)],
        fake=lambda: [
            FakeReply(error=RateLimitError("quota", provider="fake", retry_after=1.0)),
            FakeReply(content=TEXT),
        ],
    ),
    Fault(
        "timeout-then-ok",
        "one answer slower than the timeout, then an answer",
        "call",
        Outcome(None, 2, (0.5,)),
        http=lambda t: [slow(3.0, t.ok()), t.ok(TEXT)],
        timeout=SHORT_TIMEOUT,
    ),
    # -- streams ---------------------------------------------------------------------------------
    Fault(
        "stream-open-503-then-ok",
        "stream: HTTP 503 when opening, then a full stream",
        "stream",
        Outcome(None, 2, (0.5,), tokens=len(PIECES)),
        http=lambda t: [t.status(503), t.stream(PIECES)],
        fake=lambda: [FakeReply(error=ServerError("busy", provider="fake", status_code=503)), FakeReply(content=TEXT)],
    ),
    Fault(
        "stream-open-429",
        "stream: 429 `Retry-After: 1` on every opening",
        "stream",
        Outcome(RateLimitError, 3, (1.0, 1.0), retry_after=1.0, status=429, tokens=0),
        http=_status(429, headers={"Retry-After": "1"}),
        fake=_fake_errors(lambda: RateLimitError("quota", provider="fake", retry_after=1.0)),
    ),
    Fault(
        "stream-open-timeout",
        f"stream: no first byte within the timeout ({SHORT_TIMEOUT:g} s)",
        "stream",
        Outcome(ProviderTimeoutError, 3, BACKOFF, tokens=0),
        http=lambda t: _times(3, lambda: slow(3.0, t.stream(PIECES))),
        timeout=SHORT_TIMEOUT,
    ),
    Fault(
        "stream-401",
        "stream: HTTP 401 when opening",
        "stream",
        Outcome(AuthenticationError, 1, status=401, tokens=0),
        http=_status(401, n=1),
        fake=_fake_errors(lambda: AuthenticationError("bad key", provider="fake", status_code=401), 1),
    ),
    Fault(
        "stream-cut",
        "stream cut (connection closed) after 2 text events",
        "stream",
        Outcome(ProviderConnectionError, 1, tokens=2),
        http=lambda t: [t.stream_cut(PIECES, 2)],
        fake=lambda: [
            FakeReply(content=TEXT, stream_error=ProviderConnectionError("cut", provider="fake"), stream_error_after=2)
        ],
    ),
    Fault(
        "stream-ends-early",
        "stream ends cleanly after 2 text events, without its final event",
        "stream",
        Outcome(ProviderError, 1, tokens=2, exact=False),
        http=lambda t: [t.stream_ends_early(PIECES, 2)],
        sdk_error=False,
    ),
    Fault(
        "stream-error-event",
        "stream: 2 text events, then the service's error event",
        "stream",
        Outcome(ServerError, 1, tokens=2, exact=False),
        http=lambda t: [t.stream_with_error(PIECES, 2)],
        sdk_error=False,
        fake=lambda: [
            FakeReply(content=TEXT, stream_error=ServerError("in-stream", provider="fake"), stream_error_after=2)
        ],
    ),
    Fault(
        "stream-bad-json",
        "stream: 2 text events, then an event with malformed JSON",
        "stream",
        Outcome(InvalidResponseError, 1, tokens=2),
        http=lambda t: [t.stream_with_bad_json(PIECES, 2)],
    ),
)

KEEP_ALIVE = b": keep-alive\n\n"
#: Where the redirects of the matrix point: nothing listens there, and nothing must try.
ELSEWHERE = "http://127.0.0.2:9/elsewhere"


def _gzip_bomb(inflated: int = 16 * 1024 * 1024) -> bytes:
    """``inflated`` bytes of JSON whitespace, gzip-encoded (about 1000 times smaller)."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(packer.compress(b" " * 1024 * 1024) for _ in range(inflated // (1024 * 1024))) + packer.flush()


def _trickled(t: Target) -> Behaviour:
    """A whole answer with its ``Content-Length``, sent one byte every 20 ms."""
    import json

    return trickle(200, json.dumps(t.text_body("this answer arrives one byte at a time")), 0.02)


def _events(t: Target, upto_text: int) -> list[bytes]:
    """The stream's events up to (and with) its ``upto_text``-th text event."""
    events = t.stream_events(PIECES)
    marker = "response.output_text.delta" if t.name == "openai" else '"text"'
    texts = [i for i, e in enumerate(events) if marker in e]
    return [e.encode() for e in events[: texts[upto_text - 1] + 1]]


TRANSPORT_FAULTS: tuple[Fault, ...] = (
    Fault(
        "redirect",
        "302 redirect to another host",
        "call",
        Outcome(InvalidResponseError, 1, status=302),
        http=lambda t: [redirect(302, ELSEWHERE)],
    ),
    Fault(
        "stream-redirect",
        "stream: 307 redirect to another host when opening",
        "stream",
        Outcome(InvalidResponseError, 1, status=307, tokens=0),
        http=lambda t: [redirect(307, ELSEWHERE)],
    ),
    Fault(
        "trickled-body",
        f"the answer trickles in one byte every 20 ms (timeout {SHORT_TIMEOUT:g} s)",
        "call",
        Outcome(ProviderTimeoutError, 3, BACKOFF),
        http=lambda t: _times(3, lambda: _trickled(t)),
        timeout=SHORT_TIMEOUT,
    ),
    Fault(
        "gzip-bomb",
        "200 whose 16 KB gzip body inflates to 16 MiB, `max_response_bytes` 1 MiB",
        "call",
        Outcome(InvalidResponseError, 1),
        http=lambda t: [respond(200, _gzip_bomb(), headers={"Content-Encoding": "gzip"})],
        options={"max_response_bytes": 1024 * 1024},
    ),
    Fault(
        "stream-keep-alive-only",
        f"stream: only `: keep-alive` comments, no event (first-event limit {SHORT_TIMEOUT:g} s)",
        "stream",
        Outcome(ProviderTimeoutError, 3, BACKOFF, tokens=0),
        http=lambda t: _times(3, lambda: paced([KEEP_ALIVE] * 100, 0.02)),
        timeout=SHORT_TIMEOUT,
    ),
    Fault(
        "stream-idle",
        f"stream: 1 text event, then only keep-alive comments (idle limit {SHORT_TIMEOUT:g} s)",
        "stream",
        Outcome(ProviderTimeoutError, 1, tokens=1),
        http=lambda t: [paced([*_events(t, 1), *[KEEP_ALIVE] * 100], 0.02)],
        timeout=SHORT_TIMEOUT,
    ),
    Fault(
        "stream-keep-alives-between-events",
        "stream: `: keep-alive` comments between every two events",
        "stream",
        Outcome(None, 1, tokens=len(PIECES)),
        http=lambda t: [paced([p for e in t.stream_events(PIECES) for p in (e.encode(), KEEP_ALIVE)], 0.0)],
    ),
    Fault(
        "stream-event-too-large",
        "stream: 1 text event, then a 2 MiB `data:` line, `max_event_bytes` 64 KiB",
        "stream",
        Outcome(InvalidResponseError, 1, tokens=1),
        http=lambda t: [paced([*_events(t, 1), b"data: ", *[b"x" * 65536] * 32], 0.0)],
        options={"max_event_bytes": 65536},
    ),
)

FAULTS = (*FAULTS, *TRANSPORT_FAULTS)

FAULTS_BY_KEY = {fault.key: fault for fault in FAULTS}
assert len(FAULTS_BY_KEY) == len(FAULTS), "fault keys must be unique"

#: Known deviations of a plugin from the documented outcome: (fault key, target) → reason.
#: Each is marked xfail(strict=True) in the matrix and listed in docs/reliability.md.
KNOWN_ISSUES: dict[tuple[str, str], str] = {}


def cases() -> list[tuple[Fault, str, str]]:
    return [(fault, target, mode) for fault in FAULTS for target in fault.targets() for mode in ("sync", "async")]


def render_table() -> str:
    """The markdown table of docs/reliability.md (kept equal by a test)."""
    lines = [
        "| fault | kind | providers | outcome | attempts | waits |",
        "|---|---|---|---|---|---|",
    ]
    for fault in FAULTS:
        providers = ", ".join(_label(name, fault.key) for name in fault.targets())
        expect = fault.expect
        outcome = expect.describe()
        if fault.kind == "stream":
            tokens = f"TOKEN x{expect.tokens}, " if expect.tokens else ""
            outcome = f"{tokens}METADATA, END" if expect.error is None else f"{tokens}ERROR {outcome}, END"
        if isinstance(expect.retry_after, tuple):
            outcome += f", `retry_after` {expect.retry_after[0]:g}-{expect.retry_after[1]:g} s"
        elif expect.retry_after is not None:
            outcome += f", `retry_after` {expect.retry_after:g} s"
        waits = expect.describe_waits()
        lines.append(f"| {fault.title} | {fault.kind} | {providers} | {outcome} | {expect.attempts} | {waits} |")
    return "\n".join(lines) + "\n"


def _label(target: str, key: str) -> str:
    name = {"fake": "core (FakeProvider)"}.get(target, target)
    return f"{name} ✗" if (key, target) in KNOWN_ISSUES else name
