"""Fixtures of the MCP tests: real MCP servers (tests/mcp/tool_server.py, the SDK's FastMCP)
over stdio and over streamable HTTP on 127.0.0.1, each bounded in time and stopped after the
test."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_core.mcp import MCPServer
from llm_core.retry import RetryPolicy
from llm_core.testing import FakeProvider
from tests.mcp.servers import PYTHONPATH, ROOT, server_command, stdio_server


@pytest.fixture(autouse=True)
def _isolated(fresh_registry: None) -> None:
    """A fresh registry with no observers (tests/conftest.py)."""


@pytest.fixture
def fake() -> FakeProvider:
    return FakeProvider(retry=RetryPolicy.none())


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """The file the server's ``pay`` tool appends a line to per payment."""
    return tmp_path / "ledger.txt"


@pytest.fixture
def tools_server(ledger: Path) -> Iterator[MCPServer]:
    server = stdio_server(ledger)
    yield server
    server.close()


@pytest.fixture(params=["http", "sse"])
def http_url(request: pytest.FixtureRequest, ledger: Path) -> Iterator[str]:
    """The URL of the tool server run over streamable HTTP (or HTTP+SSE: ``/sse``) on
    127.0.0.1, stopped after the test."""
    transport = request.param
    process = subprocess.Popen(
        [sys.executable, *server_command(transport, ledger)],
        cwd=ROOT,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()  # the server prints its port, then serves
        assert port.isdigit(), f"the HTTP server did not start (exit {process.poll()})"
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"
    finally:
        process.kill()
        process.wait(timeout=30)
