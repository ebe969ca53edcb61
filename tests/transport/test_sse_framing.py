"""The SSE framing of a metered body: events counted, comment lines left out, any chunking."""

from __future__ import annotations

import itertools
import time

from hypothesis import given, strategies as st

from llm_core.transport.body_meter import BodyMeter
from llm_core.transport.limits import Limits

LIMITS = Limits(
    provider="p",
    timeout=60.0,
    first_event_timeout=60.0,
    idle_timeout=60.0,
    stream_deadline=None,
    max_response_bytes=10**7,
    max_event_bytes=10**5,
)
EVENTS = [b"event: delta\ndata: {\"delta\": \"a\"}\n\n", b"data: {\"delta\": \"b\"}\r\n\r\n", b"data: x\r\rdata: y\r\r"]
COMMENTS = [b": keep-alive\n", b": ping\r\n", b":\r"]  # comment lines (their blank line is kept)


def metered(chunks: list[bytes]) -> tuple[bytes, int]:
    meter = BodyMeter(LIMITS, time.monotonic(), [], sse=True)
    out = b"".join(piece for chunk in chunks for piece in meter.feed(chunk))
    return out + b"".join(meter.end()), meter.events


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


@given(
    st.lists(st.tuples(st.sampled_from(EVENTS), st.lists(st.sampled_from(COMMENTS), max_size=2)), max_size=6),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_any_chunking_gives_the_events_without_their_comments(
    stream: list[tuple[bytes, list[bytes]]], cuts: list[int]
) -> None:
    body = b"".join(b"".join(comments) + event for event, comments in stream)
    wanted = b"".join(event for event, _ in stream)
    out, events = metered(split(body, cuts))
    assert out == wanted
    # EVENTS[2] holds two events (CR line ends)
    assert events == sum(2 if event == EVENTS[2] else 1 for event, _ in stream)


def test_a_chunk_without_comments_is_handed_on_as_it_came() -> None:
    chunk = EVENTS[0] * 3
    meter = BodyMeter(LIMITS, time.monotonic(), [], sse=True)
    assert list(meter.feed(chunk)) == [chunk]
    assert meter.events == 3


def test_a_comment_ended_by_a_crlf_split_between_chunks_leaves_nothing_behind() -> None:
    out, events = metered([b": ping\r", b"\ndata: a\n\n"])
    assert out == b"data: a\n\n"
    assert events == 1


def test_a_comment_alone_is_not_an_event() -> None:
    out, events = metered([b": keep-alive\n\n", b": keep-alive\n\n"])
    assert out == b"\n\n"  # the blank lines: an SSE reader dispatches nothing for them
    assert events == 0
