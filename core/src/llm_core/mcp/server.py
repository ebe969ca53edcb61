""":class:`MCPServer`: an MCP server as a source of a conversation's tools.

What the application configures lives here and imports no SDK; the connection
(:mod:`llm_core.mcp.connection`) is imported when the server first starts.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import math
import os
import threading
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from llm_core.conversation.tools import Tool
from llm_core.errors import ConfigurationError, InvalidInputError

if TYPE_CHECKING:
    from llm_core.mcp.connection import Connection

#: The ``_meta`` key of a ``tools/call`` request that carries the call's idempotency key (the
#: same when a conversation resumes the call in another process).
IDEMPOTENCY_META_KEY = "dev.llm-core/idempotency-key"

_LIVE: weakref.WeakSet[MCPServer] = weakref.WeakSet()


class MCPServer:
    """An MCP server whose tools a conversation offers the model (``tools=[..., server]``).

    Made with :meth:`stdio`, :meth:`http` or :meth:`sse`; started when a conversation first
    needs its tools, closed by :meth:`close` (a conversation's ``close()`` / ``with`` block, and
    at exit). Its tools are listed once, and again only after the server says they changed.
    ``timeout`` bounds listing and each call, ``start_timeout`` starting (the process, the
    handshake): past them :class:`~llm_core.mcp.MCPTimeoutError`. ``prefix`` is put before each
    tool's name (tool names must be unique in a conversation). ``requires_approval``: True for
    every tool, or the names (without prefix) of those whose calls wait for ``chat.approve``."""

    def __init__(
        self,
        name: str,
        transport: Literal["stdio", "http", "sse"],
        target: Mapping[str, Any],
        *,
        prefix: str = "",
        timeout: float = 30.0,
        start_timeout: float = 60.0,
        requires_approval: bool | Collection[str] = False,
    ) -> None:
        if importlib.util.find_spec("mcp") is None:
            raise ConfigurationError("MCP servers need the MCP SDK: pip install 'llm-core[mcp]'")
        for setting, seconds in (("timeout", timeout), ("start_timeout", start_timeout)):
            if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not 0 < seconds < math.inf:
                raise InvalidInputError(f"{setting} must be a positive number of seconds, got {seconds!r}")
        if not isinstance(prefix, str):
            raise InvalidInputError("prefix must be a string")
        if isinstance(requires_approval, str) or not isinstance(requires_approval, bool | Collection):
            raise InvalidInputError("requires_approval must be True/False or a collection of tool names")
        self._name = name
        self.transport = transport
        self.prefix = prefix
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self.requires_approval = (
            requires_approval if isinstance(requires_approval, bool) else frozenset(requires_approval)
        )
        self._target = dict(target)  # may hold credentials (headers, env): never shown
        self._connection: Connection | None = None
        self._tools: list[Tool] | None = None
        self._lock = threading.Lock()

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 30.0,
        start_timeout: float = 60.0,
        requires_approval: bool | Collection[str] = False,
    ) -> MCPServer:
        """A server run as ``command args`` and spoken to over its stdin/stdout; ``env`` is
        added to the MCP SDK's default environment of the process. ``name`` (default: the
        command's base name, or for a launcher such as ``python``, ``npx`` or ``uvx`` the
        script, module or package it runs) names it in errors and traces."""
        if not isinstance(command, str) or not command.strip():
            raise InvalidInputError("MCPServer.stdio: command must be a non-empty string")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise InvalidInputError("MCPServer.stdio: args must be a list of strings")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise InvalidInputError("MCPServer.stdio: env must map strings to strings")
        default = _stdio_name(command, list(args))
        target = {"command": command, "args": list(args), "env": dict(env) if env else None, "cwd": cwd}
        return cls(
            name or default,
            "stdio",
            target,
            prefix=prefix,
            timeout=timeout,
            start_timeout=start_timeout,
            requires_approval=requires_approval,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 30.0,
        start_timeout: float = 60.0,
        requires_approval: bool | Collection[str] = False,
    ) -> MCPServer:
        """A server at ``url``, spoken to over streamable HTTP; ``headers`` (e.g.
        ``Authorization``) go with every request to that host only (redirects are not
        followed). ``name`` defaults to the URL's host."""
        return cls._remote("http", url, headers, name, prefix, timeout, start_timeout, requires_approval)

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 30.0,
        start_timeout: float = 60.0,
        requires_approval: bool | Collection[str] = False,
    ) -> MCPServer:
        """A server at ``url`` spoken to over the older HTTP+SSE transport (servers that do not
        offer streamable HTTP yet); otherwise as :meth:`http`."""
        return cls._remote("sse", url, headers, name, prefix, timeout, start_timeout, requires_approval)

    @classmethod
    def _remote(
        cls,
        transport: Literal["http", "sse"],
        url: str,
        headers: Mapping[str, str] | None,
        name: str | None,
        prefix: str,
        timeout: float,
        start_timeout: float,
        requires_approval: bool | Collection[str],
    ) -> MCPServer:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInputError(f"MCPServer.{transport}: url must be an http(s) URL, got {url!r}")
        if headers is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            raise InvalidInputError(f"MCPServer.{transport}: headers must map strings to strings")
        target = {"url": url, "headers": dict(headers or {})}
        return cls(
            name or parts.hostname,
            transport,
            target,
            prefix=prefix,
            timeout=timeout,
            start_timeout=start_timeout,
            requires_approval=requires_approval,
        )

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"MCPServer({self._name!r}, {self.transport})"

    def __reduce__(self) -> Any:
        raise TypeError("an MCPServer cannot be pickled (it may hold credentials and a live process)")

    # -- ToolSource -------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Its tools (the server starts on the first call; listed again after it said they
        changed, or after it was restarted). Raises :class:`~llm_core.mcp.MCPServerError`."""
        from llm_core.mcp import connection, results

        with self._lock:
            live = self._live()
            if self._tools is None or live.tools_changed:
                listed = connection.run(live.list_tools, self.timeout + 5, self._name)
                self._tools = results.as_tools(self._name, listed, self.prefix, self.requires_approval, self._handler)
            return list(self._tools)

    def close(self) -> None:
        """Stop the server (a stdio process ends); it starts again when used."""
        from llm_core.mcp import connection

        with self._lock:
            live, self._connection, self._tools = self._connection, None, None
            _LIVE.discard(self)
        if live is not None:
            connection.run(live.close, connection.CLOSE_TIMEOUT + 5, self._name)

    # -- internals -----------------------------------------------------------------------------

    def _live(self) -> Connection:
        """The running connection, started (or started again after the server died)."""
        from llm_core.mcp import connection

        if self._connection is not None and self._connection.alive:
            return self._connection
        if self._connection is not None:
            connection.run(self._connection.close, connection.CLOSE_TIMEOUT + 5, self._name)
        self._connection, self._tools = None, None
        live = connection.Connection(self._name, self.transport, self._target, self.timeout)
        connection.run(lambda: live.start(self.start_timeout), self.start_timeout + 5, self._name)
        self._connection = live
        _LIVE.add(self)
        return live

    def _handler(self, remote: str) -> Callable[..., str]:
        def call(arguments: dict[str, Any], idempotency_key: str) -> str:
            """Run the tool on the server (the conversation calls this)."""
            from llm_core.mcp import connection

            with self._lock:
                live = self._live()
            meta = {IDEMPOTENCY_META_KEY: idempotency_key} if idempotency_key else {}
            return connection.run(lambda: live.call_tool(remote, arguments, meta), self.timeout + 5, self._name)

        call.__name__ = remote
        return call


#: Commands that run the server named by their first argument that is not an option.
_LAUNCHERS = ("python", "node", "npx", "uvx", "uv", "bun", "bunx", "deno", "pipx")


def _stdio_name(command: str, args: list[str]) -> str:
    name = Path(command).name
    if name.startswith(_LAUNCHERS):
        run = next((a for a in args if not a.startswith("-") and a != "run"), name)
        name = Path(run).name
    return name.removesuffix(".py") or command


def _forget_all() -> None:
    """In a forked child: the servers are the parent's; each starts anew here when used."""
    for server in list(_LIVE):
        server._connection, server._tools, server._lock = None, None, threading.Lock()
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_all)


@atexit.register
def _close_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):  # at exit nothing can be reported any more
            server.close()
