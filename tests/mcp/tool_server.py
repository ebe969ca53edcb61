"""A real MCP server (the MCP SDK's FastMCP, ``mcp.server.mcpserver.MCPServer`` in SDK 2.x) for
the tests: ``python -m tests.mcp.tool_server stdio LEDGER`` speaks over stdin/stdout,
``python -m tests.mcp.tool_server http LEDGER`` over streamable HTTP (``sse``: the older
HTTP+SSE transport) on 127.0.0.1 (a port the OS picks, printed as the first line of stdout).
Every ``pay`` call appends a line to LEDGER, so that a test can count how often a tool really
ran."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from llm_core.mcp import IDEMPOTENCY_META_KEY
from llm_core.testing.fake import PNG_1X1

server = MCPServer("tools", log_level="CRITICAL")
LEDGER = Path(sys.argv[2]) if len(sys.argv) > 2 else None


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say the text again."""
    return text


@server.tool()
def fail(why: str) -> str:
    """Always fails (a ToolError: the server reports its text as the result, isError)."""
    raise ToolError(why)


@server.tool()
def picture() -> Image:
    """A tiny picture."""
    return Image(data=PNG_1X1, format="png")


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after some seconds."""
    await asyncio.sleep(seconds)
    return "late"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def die() -> str:
    """The server process exits in the middle of the call."""
    os._exit(3)


@server.tool()
def pay(amount: int, ctx: Context) -> str:
    """Pay an amount (once per call: each payment is a line of the ledger)."""
    key = (ctx.request_context.meta or {}).get(IDEMPOTENCY_META_KEY, "")
    if LEDGER is not None:
        with LEDGER.open("a") as ledger:
            ledger.write(f"{amount} {key}\n")
    return f"paid {amount}"


@server.tool()
def authorization(ctx: Context) -> str:
    """The Authorization header of the HTTP request that carried the call ("" over stdio)."""
    return (ctx.headers or {}).get("authorization", "")


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named shrink, and say the tools changed."""
    server.add_tool(lambda: "shrunk", name="shrink", description="Shrink.")
    await ctx.notify_tools_changed()
    return "grown"


def serve_http(transport: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # connections wait in the backlog until uvicorn serves: no race with the test
    print(listener.getsockname()[1], flush=True)
    app = server.sse_app(host="127.0.0.1") if transport == "sse" else server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[listener]))


if __name__ == "__main__":
    if sys.argv[1] in ("http", "sse"):
        serve_http(sys.argv[1])
    else:
        server.run()
