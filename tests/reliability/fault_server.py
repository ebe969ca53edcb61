"""A loopback HTTP server that plays scripted faults to the real SDKs.

It listens on 127.0.0.1 only, on a free port, is started and stopped by the tests, and is
bounded: no handler waits longer than :data:`MAX_WAIT` seconds, and closing the server wakes
every waiting handler. Every request is recorded (method, path, query, headers, body) so that a
test can assert how many attempts reached the wire, or that none did.

Behaviours are small callables ``(handler, request) -> None``: a status with a body, a reset
connection, a slow answer, a truncated body, an SSE stream (optionally cut after some events),
or raw chunks. Scripted behaviours are used first (FIFO); after that ``fallback(request)``
decides (e.g. an emulated upstream that answers every call).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: No handler waits longer than this (seconds), whatever a behaviour asks for.
MAX_WAIT = 5.0


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


Behaviour = Callable[["_Handler", Request], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    allow_reuse_address = True
    owner: FaultServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = MAX_WAIT  # a client that never sends its body cannot hold a thread for long
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        owner = self.server.owner
        behaviour = owner._next_behaviour(request)
        self.close_connection = not owner.keep_alive
        with contextlib.suppress(OSError):  # the client gave up (e.g. its timeout fired)
            behaviour(self, request)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    # -- writing helpers used by behaviours ----------------------------------------------

    def head(self, status: int, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if not self.server.owner.keep_alive:
            self.send_header("Connection", "close")
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def hang_up(self) -> None:
        """Close our side cleanly (FIN) without finishing the message."""
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_WR)

    def reset(self) -> None:
        """Abort the connection with a TCP reset (RST)."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def wait(self, seconds: float) -> None:
        self.server.owner._stopping.wait(min(seconds, MAX_WAIT))


# -- behaviours ------------------------------------------------------------------------------


def respond(
    status: int,
    body: bytes | str = b"",
    *,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
) -> Behaviour:
    """A complete response with ``Content-Length``."""
    data = body.encode() if isinstance(body, str) else body

    def act(handler: _Handler, request: Request) -> None:
        handler.head(status, {"Content-Type": content_type, "Content-Length": str(len(data)), **(headers or {})})
        handler.wfile.write(data)

    act.__doc__ = f"HTTP {status}"
    return act


def json_response(status: int, payload: Any, *, headers: Mapping[str, str] | None = None) -> Behaviour:
    return respond(status, json.dumps(payload), headers=headers)


def reset() -> Behaviour:
    """The connection is reset (RST) after the request was read, before any response byte."""

    def act(handler: _Handler, request: Request) -> None:
        handler.reset()

    return act


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Answer only after ``seconds`` (bounded by MAX_WAIT); ``then`` is the late answer."""

    def act(handler: _Handler, request: Request) -> None:
        handler.wait(seconds)
        if then is not None:
            then(handler, request)

    return act


def cut_body(status: int, body: bytes | str, *, keep: int, content_type: str = "application/json") -> Behaviour:
    """Promise the whole body (``Content-Length``) but send only ``keep`` bytes, then hang up."""
    data = body.encode() if isinstance(body, str) else body

    def act(handler: _Handler, request: Request) -> None:
        handler.head(status, {"Content-Type": content_type, "Content-Length": str(len(data))})
        handler.wfile.write(data[:keep])
        handler.hang_up()

    return act


def chunks(
    pieces: Iterable[bytes],
    *,
    status: int = 200,
    content_type: str = "text/event-stream",
    complete: bool = True,
    headers: Mapping[str, str] | None = None,
) -> Behaviour:
    """A chunked body, one HTTP chunk per piece (flushed). ``complete=False`` hangs up
    without the terminating chunk: the client sees the body cut in the middle."""
    parts = list(pieces)

    def act(handler: _Handler, request: Request) -> None:
        handler.head(status, {"Content-Type": content_type, "Transfer-Encoding": "chunked", **(headers or {})})
        for piece in parts:
            handler.chunk(piece)
        if complete:
            handler.end_chunks()
        else:
            handler.hang_up()

    return act


def sse(events: Sequence[str], *, cut_after: int | None = None, content_type: str = "text/event-stream") -> Behaviour:
    """Server-sent events, each a complete ``data: …`` block (as given). ``cut_after=n`` sends
    only the first ``n`` events, then hangs up mid-stream."""
    blocks = [event.encode() for event in events]
    if cut_after is not None:
        return chunks(blocks[:cut_after], content_type=content_type, complete=False)
    return chunks(blocks, content_type=content_type)


def redirect(status: int, location: str) -> Behaviour:
    """A redirect (3xx) to ``location``, as a hostile or misconfigured upstream might send."""
    return respond(status, b"", headers={"Location": location})


def paced(
    pieces: Sequence[bytes],
    interval: float,
    *,
    content_type: str = "text/event-stream",
    headers: Mapping[str, str] | None = None,
) -> Behaviour:
    """A chunked body, one piece every ``interval`` seconds (a trickle, or a slow stream). The
    server stops at the first write the client no longer reads and records the time in
    :attr:`FaultServer.disconnects`. Bounded: it gives up after :data:`MAX_WAIT` seconds."""
    parts = list(pieces)

    def act(handler: _Handler, request: Request) -> None:
        handler.head(200, {"Content-Type": content_type, "Transfer-Encoding": "chunked", **(headers or {})})
        give_up = time.monotonic() + MAX_WAIT
        try:
            for piece in parts:
                handler.chunk(piece)
                if handler.server.owner._stopping.is_set() or time.monotonic() > give_up:
                    return
                handler.wait(interval)
            handler.end_chunks()
        except OSError:
            handler.server.owner.note_disconnect()
            raise

    return act


def trickle(status: int, body: bytes | str, interval: float, *, content_type: str = "application/json") -> Behaviour:
    """``Content-Length`` for the whole body, then one byte every ``interval`` seconds (for at
    most :data:`MAX_WAIT` seconds)."""
    data = body.encode() if isinstance(body, str) else body

    def act(handler: _Handler, request: Request) -> None:
        handler.head(status, {"Content-Type": content_type, "Content-Length": str(len(data))})
        give_up = time.monotonic() + MAX_WAIT
        try:
            for index in range(len(data)):
                handler.wfile.write(data[index : index + 1])
                handler.wfile.flush()
                if handler.server.owner._stopping.is_set() or time.monotonic() > give_up:
                    return
                handler.wait(interval)
        except OSError:
            handler.server.owner.note_disconnect()
            raise

    return act


# -- the server ----------------------------------------------------------------------------


@dataclass
class FaultServer:
    """``with FaultServer(fallback) as server: ... server.url ... server.script(...)``."""

    fallback: Callable[[Request], Behaviour] | None = None
    requests: list[Request] = field(default_factory=list)
    #: Keep connections open between responses (HTTP/1.1 keep-alive; an idle connection is
    #: closed by the server after MAX_WAIT seconds), as the real services do.
    keep_alive: bool = False

    def __post_init__(self) -> None:
        #: ``time.monotonic()`` of each write that found the client gone (``paced``, ``trickle``).
        self.disconnects: list[float] = []
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> FaultServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, name="fault-server", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=MAX_WAIT)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # scripting

    def script(self, *behaviours: Behaviour) -> FaultServer:
        """Queue behaviours for the next requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)
        return self

    def always(self, behaviour: Behaviour) -> FaultServer:
        """Answer every request not scripted with ``behaviour``."""
        self.fallback = lambda request: behaviour
        return self

    def _next_behaviour(self, request: Request) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.fallback is not None:
            return self.fallback(request)
        return json_response(404, {"error": {"code": 404, "message": f"no route for {request.path}"}})

    def note_disconnect(self) -> None:
        with self._lock:
            self.disconnects.append(time.monotonic())

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.disconnects.clear()


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
