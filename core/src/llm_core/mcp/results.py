"""An MCP server's answers as a conversation's tools see them: its tool list as
:class:`~llm_core.conversation.tools.Tool` s (schemas as they are), and a ``tools/call``
result as the text the model is sent."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

import mcp_types
from pydantic import ValidationError

from llm_core.conversation.tools import Tool, validation_summary
from llm_core.mcp.errors import MCPServerError, MCPToolError
from llm_core.tools import ToolCall, ToolSpec


class MCPTool(Tool):
    """A tool of an MCP server: its handler takes the model's arguments as they are (the
    server validates them against its own schema) and the call's idempotency key."""

    def bind(self, call: ToolCall, key: str = "") -> dict[str, Any]:
        return {"arguments": dict(call.arguments), "idempotency_key": key}


def as_tools(
    server: str,
    listed: Sequence[mcp_types.Tool],
    prefix: str,
    requires_approval: bool | Collection[str],
    handler: Callable[[str], Callable[..., Any]],
) -> list[Tool]:
    """The server's tools, named ``prefix + name``; ``handler(name)`` runs one. A tool whose
    name or schema cannot be offered to a model raises :class:`MCPServerError`."""
    tools: list[Tool] = []
    for item in listed:
        try:
            spec = ToolSpec(name=prefix + item.name, description=item.description or "", parameters=item.input_schema)
        except ValidationError as exc:
            why = validation_summary(exc)
            raise MCPServerError(
                f"MCP server {server!r}: its tool {item.name!r} cannot be offered to a model: {why}", server=server
            ) from None
        approval = requires_approval if isinstance(requires_approval, bool) else item.name in requires_approval
        tools.append(MCPTool(spec=spec, handler=handler(item.name), requires_approval=approval, server=server))
    return tools


def result_text(result: mcp_types.CallToolResult) -> str:
    """What the model is sent: the content blocks (text as it is; an image, audio or embedded
    blob described, since tool results reach the providers as text; a resource by its URI),
    or the structured result as JSON when there are none (a server that returns both sends
    the JSON as text too, as the protocol asks). ``isError`` raises :class:`MCPToolError`
    with that text, for the model to hear as the tool's failure."""
    if result.is_error:
        raise MCPToolError(_blocks_text(result.content) or "the tool failed")
    if not result.content and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return _blocks_text(result.content)


def _blocks_text(blocks: Sequence[mcp_types.ContentBlock]) -> str:
    parts = []
    for block in blocks:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {_decoded_size(block.data)} bytes]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource: {block.uri}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[resource: {resource.uri}, {resource.mime_type or 'binary'}]")
    return "\n".join(parts)


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)
