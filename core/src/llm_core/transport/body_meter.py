"""One response body, decoded and measured: the limits of :mod:`llm_core.transport.clients`.

Pure bookkeeping over bytes (no HTTP library): ``gzip``/``deflate`` decoding a bounded piece at a
time, so that the size limit applies to the decoded bytes and a bomb never inflates much past
it; SSE framing (line and event sizes, when each event completed); the time limits.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Iterable, Iterator

from llm_core.errors import InvalidResponseError
from llm_core.transport.limits import Limits, TransportLimitError

#: Largest piece inflated at once: a bomb never allocates more than this beyond the limit.
PIECE = 64 * 1024


class BodyTimeout(Exception):
    """A time limit of the body was crossed (the transport raises it as an httpx2 timeout)."""


class _Inflater:
    """Incremental ``gzip``/``deflate`` decoding in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, encoding: str, provider: str) -> None:
        self._encoding = encoding
        self._provider = provider
        # gzip: auto-detect the gzip or zlib header; deflate: zlib-wrapped, raw as a fallback
        self._raw_fallback = encoding == "deflate"
        self._obj = zlib.decompressobj(zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                out = self._obj.decompress(data, PIECE)
            except zlib.error as exc:
                if self._raw_fallback:
                    self._raw_fallback = False
                    self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise TransportLimitError(
                    InvalidResponseError(f"the body is not valid {self._encoding} data: {exc}", provider=self._provider)
                ) from None
            self._raw_fallback = False
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if not data and len(out) < PIECE:
                return

    def flush(self) -> bytes:
        return self._obj.flush()


def _through(inflater: _Inflater, pieces: Iterable[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        yield from inflater.feed(piece)


def _flushed(inflater: _Inflater, pieces: Iterable[bytes]) -> Iterator[bytes]:
    yield from _through(inflater, pieces)
    yield inflater.flush()


class BodyMeter:
    """Decodes one response body and enforces the limits on it, chunk by chunk.

    Crossing a time limit raises :class:`BodyTimeout`, a size limit
    :class:`~llm_core.transport.clients.TransportLimitError` (``InvalidResponseError``).
    A call must be complete ``timeout`` after the request was sent. A stream (SSE) must deliver
    its first event within ``first_event_timeout`` of the request, each next event within
    ``idle_timeout`` of the previous one (comment lines are not events), and end within
    ``stream_deadline``. Sizes count decoded bytes.
    """

    def __init__(self, limits: Limits, started: float, encodings: list[str], *, sse: bool) -> None:
        self.limits = limits
        self.sse = sse
        self.total = 0
        self.events = 0
        self._inflaters = [_Inflater(e, limits.provider) for e in reversed(encodings)]
        self._due = started + (limits.first_event_timeout if sse else limits.timeout)
        self._end = started + limits.stream_deadline if sse and limits.stream_deadline else math.inf
        self._line = 0  # bytes of the current SSE line
        self._event = 0  # bytes of the current SSE event
        self._field = False  # the current event has a field (not only comments)
        self._line_start = True
        self._comment = False  # the current line is a comment (left out)
        self._after_cr = False  # the chunk ended in CR: a LF starting the next one ends no line
        self._cr_comment = False  # the line that CR ended was a comment

    # time

    def remaining(self) -> float:
        return min(self._due, self._end) - time.monotonic()

    def check_time(self) -> None:
        if self.remaining() <= 0:
            raise BodyTimeout(self.timeout_reason())

    def timeout_reason(self) -> str:
        """Which time limit was crossed."""
        limits = self.limits
        if time.monotonic() >= self._end:
            what = f"the stream lasted longer than stream_deadline ({limits.stream_deadline:g} s)"
        elif not self.sse:
            what = f"the answer was not complete within the timeout of {limits.timeout:g} s"
        elif self.events == 0:
            what = f"the stream sent no event within stream_first_event_timeout ({limits.first_event_timeout:g} s)"
        else:
            what = f"the stream sent no event for stream_idle_timeout ({limits.idle_timeout:g} s)"
        return what

    # bytes

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded bytes of one raw chunk (raises when a limit is crossed)."""
        self.check_time()
        pieces: Iterable[bytes] = (raw,)
        for inflater in self._inflaters:
            pieces = _through(inflater, pieces)
        for piece in pieces:
            kept = self._count(piece)
            if kept:
                yield kept

    def end(self) -> Iterator[bytes]:
        """What the decoders still hold once the raw body ended."""
        pieces: Iterable[bytes] = ()
        for inflater in self._inflaters:
            pieces = _flushed(inflater, pieces)
        for piece in pieces:
            kept = self._count(piece) if piece else b""
            if kept:
                yield kept

    @property
    def decodes(self) -> bool:
        return bool(self._inflaters)

    def _count(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.total > self.limits.max_response_bytes:
            raise TransportLimitError(
                InvalidResponseError(
                    f"the response is larger than max_response_bytes ({self.limits.max_response_bytes} bytes decoded)",
                    provider=self.limits.provider,
                )
            )
        return self._scan(data) if self.sse else data

    def _scan(self, data: bytes) -> bytes:
        """SSE framing: line and event sizes, the time of each complete event; comment lines
        (``: keep-alive``) are left out of what the SDK reads (not every SDK ignores them).
        The chunk is handed on as it came unless a comment line was left out of it."""
        kept: list[bytes] = []
        dropped = False
        lines = data
        if self._after_cr and data.startswith(b"\n"):  # the LF of a CRLF split between two chunks
            lines = data[1:]
            if self._cr_comment:
                dropped = True
            else:
                kept.append(b"\n")
        limit = self.limits.max_event_bytes
        for line in lines.splitlines(keepends=True):
            content = line.rstrip(b"\r\n")
            if content:
                if self._line_start:
                    self._line_start = False
                    self._comment = content[0] == 0x3A  # ":"
                    self._field = self._field or not self._comment
                self._line += len(content)
                self._event += len(content)
                if self._line > limit or self._event > limit:
                    raise TransportLimitError(
                        InvalidResponseError(
                            f"one stream event is larger than max_event_bytes ({limit} bytes)",
                            provider=self.limits.provider,
                        )
                    )
            if self._comment:
                dropped = True
            else:
                kept.append(line)
            if len(content) < len(line):  # the line ended
                self._line_end()
        self._after_cr = data.endswith(b"\r")
        return b"".join(kept) if dropped else data

    def _line_end(self) -> None:
        if self._line == 0:  # a blank line ends the event
            if self._field:
                self.events += 1
                self._due = time.monotonic() + self.limits.idle_timeout
            self._event = 0
            self._field = False
        self._cr_comment = self._comment
        self._line = 0
        self._line_start = True
        self._comment = False
