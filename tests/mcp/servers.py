"""How the MCP tests start the tool server (tests/mcp/tool_server.py): shared by the fixtures
and by the child process that resumes a conversation (tests/mcp/resume_child.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import llm_core
from llm_core.mcp import MCPServer

ROOT = Path(__file__).parents[2]
#: The sources under test (a worktree's, not the installed copy's) and the tests package.
PYTHONPATH = f"{Path(llm_core.__file__).parents[1]}:{ROOT}"
#: Generous for starting a Python process on a busy machine; the hang test uses its own.
TIMEOUT = 30.0


def server_command(transport: str, ledger: Path, module: str = "tests.mcp.tool_server") -> list[str]:
    return ["-m", module, transport, str(ledger)]


def stdio_server(ledger: Path, **options: Any) -> MCPServer:
    """The tool server over stdio; its ``pay`` tool writes to ``ledger``."""
    return MCPServer.stdio(
        sys.executable,
        server_command("stdio", ledger),
        env={"PYTHONPATH": PYTHONPATH},
        cwd=ROOT,
        name="tools",
        **{"timeout": TIMEOUT, **options},
    )
