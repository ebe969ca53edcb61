"""Tools served by Model Context Protocol servers, for conversations (``pip install 'llm-core[mcp]'``).

>>> from llm_core.mcp import MCPServer
>>> files = MCPServer.stdio("python", ["-m", "my_mcp_server"], prefix="files_")
>>> files
MCPServer('my_mcp_server', stdio)

Give it to ``conversation(tools=[...])`` next to functions: the server starts when the
conversation first needs its tools, is listed once (again when it says its tools changed), and
is closed with the conversation (``with`` / ``close()``) or at exit. See docs/conversations.md,
"MCP servers". Importing this module does not import the MCP SDK: it is imported when a server
starts.
"""

from llm_core.mcp.errors import MCPServerError, MCPTimeoutError, MCPToolError
from llm_core.mcp.server import IDEMPOTENCY_META_KEY, MCPServer

__all__ = ["IDEMPOTENCY_META_KEY", "MCPServer", "MCPServerError", "MCPTimeoutError", "MCPToolError"]
