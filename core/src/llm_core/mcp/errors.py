"""Failures of MCP servers: the server's (the conversation stops: :class:`MCPServerError`) and
the tool's (the model is told: :class:`MCPToolError`)."""

from __future__ import annotations

from llm_core.conversation.errors import ToolServerError


class MCPServerError(ToolServerError):
    """An MCP server could not be started, died, or answered with something that is not an
    answer (a malformed result, a tool list that cannot be offered). ``server`` is its name; the
    SDK's exception, when there is one, is the ``__cause__``."""


class MCPTimeoutError(MCPServerError):
    """An MCP server did not answer within its ``timeout`` (starting, listing or a call)."""


class MCPToolError(Exception):
    """A tool of an MCP server failed: it answered ``isError``, or the server refused the call
    (an unknown tool, invalid arguments). The conversation tells the model, as for a function
    that raised."""
