"""One live connection to an MCP server, through the MCP SDK's ``Client``.

The SDK is async (anyio), and a session must live in one task from start to close. Every
connection of the process lives on one event loop in a daemon thread (:data:`LOOP`); sync and
async conversations alike hand it coroutines and wait for them with a deadline, so a server
behaves the same under both, and a conversation's own event loop never holds an MCP session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TextIO, TypeVar, cast

import httpx2
import mcp_types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import RequestParamsMeta
from pydantic import ValidationError

from llm_core.mcp.errors import MCPServerError, MCPTimeoutError, MCPToolError
from llm_core.mcp.results import result_text
from mcp import Client, MCPError, StdioServerParameters, stdio_client

T = TypeVar("T")

#: A server that lists more pages of tools than this is refused (a cursor that never ends).
MAX_PAGES = 100
#: How long an HTTP server's event stream may stay silent (the MCP SDK's default).
SSE_READ_TIMEOUT = 300.0
#: How long closing waits for a server to go (the SDK ends a stdio process that does not exit).
CLOSE_TIMEOUT = 10.0


class _LoopThread:
    """An event loop in a daemon thread, started on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """``coroutine``'s result; after ``timeout`` seconds it is cancelled and
        :class:`TimeoutError` raised."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._started())
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="llm-core-mcp", daemon=True).start()
                self._loop = loop
            return self._loop

    def forget(self) -> None:
        """In a forked child: the parent's loop thread does not exist here; start a new one."""
        self._loop = None
        self._lock = threading.Lock()


LOOP = _LoopThread()
os.register_at_fork(after_in_child=LOOP.forget)


class Connection:
    """A started server: its ``Client`` held open by a task until :meth:`close`."""

    def __init__(self, name: str, kind: str, target: Mapping[str, Any], timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self.tools_changed = False
        self._kind = kind
        self._target = target
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- on the loop ----------------------------------------------------------------------

    async def start(self, timeout: float) -> None:
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(started))
        try:
            await asyncio.wait_for(asyncio.shield(started), timeout)
        except TimeoutError:
            await self.close()
            raise MCPTimeoutError(
                f"MCP server {self.name!r} did not start within {timeout:g}s", server=self.name
            ) from None
        except Exception as exc:
            raise MCPServerError(
                f"MCP server {self.name!r} could not start: {_describe(exc)}", server=self.name
            ) from exc

    async def _hold(self, started: asyncio.Future[None]) -> None:
        try:
            transport = open_transport(self._kind, self._target, self.timeout)
            async with Client(transport, message_handler=self._on_message, cache=None) as client:
                self._client = client
                watcher = asyncio.create_task(self._watch(client))
                started.set_result(None)
                try:
                    await self._stop.wait()
                finally:
                    watcher.cancel()
                    await asyncio.gather(watcher, return_exceptions=True)
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc if isinstance(exc, Exception) else ConnectionError("cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    async def _watch(self, client: Client) -> None:
        """Note when the server says its tools changed: a server of the 2026-07-28 protocol
        tells subscribers of ``subscriptions/listen``; an older one sends a notification
        (:meth:`_on_message`), and refuses the subscription."""
        with contextlib.suppress(Exception):  # no subscription: the notification comes instead
            async with client.listen(tools_list_changed=True) as changes:
                async for _event in changes:
                    self.tools_changed = True

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.tools_changed = True

    async def list_tools(self) -> list[mcp_types.Tool]:
        client = self._live()
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        self.tools_changed = False
        for _ in range(MAX_PAGES):
            page = await self._ask("tools/list", client.list_tools(cursor=cursor))
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return listed
        raise MCPServerError(f"MCP server {self.name!r} lists more than {MAX_PAGES} pages of tools", server=self.name)

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> str:
        client = self._live()
        result = await self._ask(
            f"tools/call {name}",
            client.call_tool(name, arguments, read_timeout_seconds=self.timeout, meta=cast("RequestParamsMeta", meta)),
        )
        return result_text(result)

    async def _ask(self, what: str, request: Coroutine[Any, Any, T]) -> T:
        """The answer to ``request``; the server's refusal as :class:`MCPToolError`, a dead,
        hung or malformed server as :class:`MCPServerError`."""
        try:
            return await request
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise MCPTimeoutError(
                    f"MCP server {self.name!r} did not answer {what} within {self.timeout:g}s", server=self.name
                ) from exc
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self._stop.set()
                raise MCPServerError(
                    f"MCP server {self.name!r} closed the connection during {what}", server=self.name
                ) from exc
            raise MCPToolError(exc.message) from exc
        except (ValidationError, RuntimeError) as exc:  # what the SDK raises for an answer of the wrong shape
            raise MCPServerError(
                f"MCP server {self.name!r} answered {what} with something that is not an answer: {_describe(exc)}",
                server=self.name,
            ) from exc

    def _live(self) -> Client:
        if self._client is None or self._stop.is_set():
            raise MCPServerError(f"MCP server {self.name!r} is not running", server=self.name)
        return self._client

    @property
    def alive(self) -> bool:
        return self._client is not None and not self._stop.is_set()

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=CLOSE_TIMEOUT)
            if not done:
                self._task.cancel()


def open_transport(kind: str, target: Mapping[str, Any], timeout: float) -> Any:
    """The SDK's transport to a server (``kind``: ``stdio``, ``http``, ``sse``): an async
    context manager of its message streams."""
    if kind == "stdio":
        return stdio_client(StdioServerParameters(**target), errlog=_server_errors())
    headers = dict(target["headers"])
    if kind == "sse":
        url = target["url"]
        return sse_client(url, headers, timeout, SSE_READ_TIMEOUT, httpx_client_factory=_http_client)
    return streamable_http_client(target["url"], http_client=_http_client(headers, _http_timeout(timeout)))


def _server_errors() -> TextIO:
    """Where a stdio server's stderr goes: ours, or the process's own when ours is no file (a
    notebook's, a captured one), since the server process needs a file descriptor."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
    return sys.stderr


def _http_timeout(timeout: float) -> httpx2.Timeout:
    # a server's event stream may be quiet for long; each request has its own deadline (timeout)
    return httpx2.Timeout(timeout, read=max(timeout, SSE_READ_TIMEOUT))


def _http_client(
    headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
) -> httpx2.AsyncClient:
    """An HTTP client that follows no redirect: the headers (credentials) go to the configured
    host only."""
    return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, follow_redirects=False)


def _describe(error: BaseException) -> str:
    """``error`` in one line; a task group's single failure is that failure."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def run(coroutine: Callable[[], Coroutine[Any, Any, T]], timeout: float, name: str) -> T:
    """Run ``coroutine()`` on the MCP loop, waiting at most ``timeout`` seconds."""
    try:
        return LOOP.run(coroutine(), timeout)
    except TimeoutError:
        raise MCPTimeoutError(f"MCP server {name!r} did not answer within {timeout:g}s", server=name) from None
