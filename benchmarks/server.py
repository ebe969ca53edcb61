"""A loopback HTTP/1.1 server speaking the Gemini and OpenAI wire formats, for benchmarks only.

Routes (anything else is a 404 with a JSON error body, as the services send):

- ``POST /v1/models/{model}:generateContent`` → a GenerateContentResponse (JSON)
- ``POST /v1/models/{model}:streamGenerateContent?alt=sse`` → ``deltas`` SSE chunks (chunked)
- ``POST /v1/responses`` → a Response (JSON), or with ``"stream": true`` the ``response.*`` SSE
  event sequence with ``deltas`` text deltas
- ``POST /v1/chat/completions`` → a ChatCompletion (JSON), or with ``"stream": true`` its
  ``data:`` chunks with ``deltas`` text deltas, the usage chunk and ``[DONE]``
- ``GET /_bench/last`` → the last model request received (method, path, headers, JSON body), so
  the harness can check that llm-core and the bare SDK sent the identical request
- ``GET /_bench/stats`` → request counts

It binds 127.0.0.1 only, answers keep-alive connections from pre-rendered bytes (so that it costs
both sides the same and little), and stops by itself: after ``--max-seconds``, after
``--max-requests``, or when the process that started it is gone.

Run: ``python -m benchmarks.server --port 0`` prints ``LISTENING 127.0.0.1 <port>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from benchmarks import bodies

HOST = "127.0.0.1"


def _head(status: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


_GEMINI_HEADERS = [
    ("Content-Type", "application/json; charset=UTF-8"),
    ("Vary", "Origin"),
    ("Vary", "X-Origin"),
    ("Vary", "Referer"),
    ("Server", "scaffolding on HTTPServer2"),
    ("Server-Timing", "gfet4t7; dur=680"),
    ("X-Content-Type-Options", "nosniff"),
]
_GEMINI_SSE_HEADERS = [
    ("Content-Type", "text/event-stream"),
    ("Content-Disposition", "attachment"),
    ("Vary", "Origin"),
    ("Vary", "X-Origin"),
    ("Vary", "Referer"),
    ("Server", "scaffolding on HTTPServer2"),
    ("Server-Timing", "gfet4t7; dur=379"),
    ("Transfer-Encoding", "chunked"),
]
_OPENAI_HEADERS = [
    ("Content-Type", "application/json"),
    ("openai-organization", "user-benchmark"),
    ("openai-processing-ms", "1304"),
    ("openai-version", "2020-10-01"),
    ("x-request-id", "req_5c2b1f3e0e9a4d7c8b6a5f4e3d2c1b0a"),
    ("x-ratelimit-limit-requests", "10000"),
    ("x-ratelimit-remaining-requests", "9999"),
]
_OPENAI_SSE_HEADERS = [
    ("Content-Type", "text/event-stream; charset=utf-8"),
    ("openai-organization", "user-benchmark"),
    ("openai-processing-ms", "100"),
    ("openai-version", "2020-10-01"),
    ("x-request-id", "req_5c2b1f3e0e9a4d7c8b6a5f4e3d2c1b0a"),
    ("Transfer-Encoding", "chunked"),
]


def _fixed(status: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    return _head(status, [*headers, ("Content-Length", str(len(body)))]) + body


def _chunked(headers: list[tuple[str, str]], events: tuple[bytes, ...]) -> bytes:
    parts = [_head("200 OK", headers)]
    parts += [b"%x\r\n%s\r\n" % (len(e), e) for e in events]
    parts.append(b"0\r\n\r\n")
    return b"".join(parts)


class Wire:
    """Pre-rendered responses, keyed by request kind and model."""

    def __init__(self, deltas: int) -> None:
        self.deltas = deltas
        self._cache: dict[tuple[str, str], bytes] = {}

    def response(self, kind: str, model: str) -> bytes:
        key = (kind, model)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._render(kind, model)
        return found

    def _render(self, kind: str, model: str) -> bytes:
        if kind == "gemini":
            return _fixed("200 OK", _GEMINI_HEADERS, bodies.gemini_generate(model))
        if kind == "gemini-sse":
            return _chunked(_GEMINI_SSE_HEADERS, bodies.gemini_stream_events(model, self.deltas))
        if kind == "openai":
            return _fixed("200 OK", _OPENAI_HEADERS, bodies.openai_response(model))
        if kind == "openai-sse":
            return _chunked(_OPENAI_SSE_HEADERS, bodies.openai_stream_events(model, self.deltas))
        if kind == "chat":
            return _fixed("200 OK", _OPENAI_HEADERS, bodies.openai_chat_completion(model))
        if kind == "chat-sse":
            return _chunked(_OPENAI_SSE_HEADERS, bodies.openai_chat_stream_events(model, self.deltas))
        raise ValueError(kind)


def _not_found(path: str) -> bytes:
    body = json.dumps({"error": {"code": 404, "message": f"no route for {path}", "status": "NOT_FOUND"}}).encode()
    return _fixed("404 Not Found", [("Content-Type", "application/json; charset=UTF-8")], body)


class State:
    def __init__(self, wire: Wire, max_requests: int) -> None:
        self.wire = wire
        self.max_requests = max_requests
        self.count: dict[str, int] = {}
        self.total = 0
        self.last: tuple[str, str, list[tuple[str, str]], bytes] | None = None
        self.done = asyncio.Event()

    def handle(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
        path, _, query = target.partition("?")
        if method == "GET" and path == "/_bench/last":
            return self._json(self._last())
        if method == "GET" and path == "/_bench/stats":
            return self._json({"total": self.total, "by_kind": self.count})
        kind, model = self._route(method, unquote(path), query, body)
        if kind is None:
            return _not_found(path)
        self.total += 1
        self.count[kind] = self.count.get(kind, 0) + 1
        self.last = (method, target, headers, body)
        if self.total >= self.max_requests:
            self.done.set()
        return self.wire.response(kind, model)

    @staticmethod
    def _route(method: str, path: str, query: str, body: bytes) -> tuple[str | None, str]:
        if method != "POST":
            return None, ""
        if path in ("/v1/responses", "/v1/chat/completions"):
            try:
                payload = json.loads(body or b"{}")
            except ValueError:
                return None, ""
            kind = "openai" if path == "/v1/responses" else "chat"
            return f"{kind}-sse" if payload.get("stream") else kind, str(payload.get("model", "unknown"))
        for version in ("/v1/", "/v1beta/"):
            if path.startswith(version + "models/"):
                name, _, method_name = path[len(version) + len("models/") :].partition(":")
                if method_name == "generateContent":
                    return "gemini", name
                if method_name == "streamGenerateContent" and "alt=sse" in query:
                    return "gemini-sse", name
        return None, ""

    def _last(self) -> dict[str, Any]:
        if self.last is None:
            return {}
        method, target, headers, body = self.last
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode(errors="replace")
        return {"method": method, "target": target, "headers": headers, "body": parsed}

    @staticmethod
    def _json(value: Any) -> bytes:
        return _fixed("200 OK", [("Content-Type", "application/json")], json.dumps(value).encode())


class Connection(asyncio.Protocol):
    """Minimal HTTP/1.1 with keep-alive and pipelining; Content-Length request bodies only."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            method, target, _ = head[0].split(" ", 2)
            headers = []
            length = 0
            close = False
            for line in head[1:]:
                name, _, value = line.partition(":")
                name, value = name.strip().lower(), value.strip()
                headers.append((name, value))
                if name == "content-length":
                    length = int(value)
                elif name == "connection" and value.lower() == "close":
                    close = True
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            assert self.transport is not None
            self.transport.write(self.state.handle(method, target, headers, body))
            if close:
                self.transport.close()
                return


async def serve(port: int, deltas: int, max_seconds: float, max_requests: int) -> None:
    loop = asyncio.get_running_loop()
    state = State(Wire(deltas), max_requests)
    server = await loop.create_server(lambda: Connection(state), HOST, port, backlog=256)
    bound = server.sockets[0].getsockname()[1]
    print(f"LISTENING {HOST} {bound}", flush=True)
    parent = os.getppid()

    async def watchdog() -> None:
        while os.getppid() == parent:  # the harness that started us is gone → stop
            await asyncio.sleep(0.5)
        state.done.set()

    guard = asyncio.create_task(watchdog())
    try:
        await asyncio.wait_for(state.done.wait(), timeout=max_seconds)
    except TimeoutError:
        print("benchmark server: time limit reached, stopping", file=sys.stderr)
    finally:
        guard.cancel()
        server.close()


class LoopbackServer:
    """Start the server in its own process (so that it does not share the client's GIL) and
    stop it on exit: ``with LoopbackServer(deltas=500) as server: server.url``."""

    def __init__(self, *, deltas: int = 500, max_seconds: float = 1800.0) -> None:
        self.deltas = deltas
        self.max_seconds = max_seconds
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> LoopbackServer:
        root = Path(__file__).resolve().parent.parent
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.server",
                "--port",
                "0",
                "--deltas",
                str(self.deltas),
                "--max-seconds",
                str(self.max_seconds),
            ],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if len(line) != 3 or line[0] != "LISTENING":
            self.process.kill()
            raise RuntimeError(f"benchmark server did not start: {line!r}")
        self.port = int(line[2])
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()

    def get(self, path: str) -> Any:
        """A ``/_bench/*`` document (stdlib client: no SDK involved)."""
        import urllib.request

        with urllib.request.urlopen(self.url + path, timeout=10) as reply:
            return json.loads(reply.read())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--deltas", type=int, default=500, help="text deltas per streamed answer")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="stop after this long")
    parser.add_argument("--max-requests", type=int, default=5_000_000, help="stop after this many model requests")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.port, args.deltas, args.max_seconds, args.max_requests))


if __name__ == "__main__":
    main()
