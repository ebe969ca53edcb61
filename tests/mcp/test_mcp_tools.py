"""Tools of real MCP servers in conversations: over stdio and streamable HTTP, results mapped,
the server's failures told to the model, name clashes, listing, lifetime, and a dead, hung or
malformed server as a typed error (never a hang)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from llm_core import InvalidInputError, ToolCall, ToolInterruptedError
from llm_core.mcp import MCPServer, MCPServerError, MCPTimeoutError
from llm_core.testing import FakeProvider, FakeReply
from tests.mcp.servers import PYTHONPATH, ROOT, server_command, stdio_server

pytestmark = pytest.mark.timeout(180)


def calling(*calls: tuple[str, dict[str, Any]]) -> FakeReply:
    return FakeReply(tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)])


def results(fake: FakeProvider, request: int) -> list[str]:
    """The tool results the model was sent in request ``request``."""
    return [m["content"] for m in fake.requests[request]["messages"] if m["role"] == "tool"]


def offered(fake: FakeProvider, request: int) -> list[str]:
    """The names of the tools the model was offered in request ``request``."""
    return fake.requests[request]["tools"]


def test_a_stdio_tool_runs_in_a_conversation_and_its_result_reaches_the_model(
    fake: FakeProvider, tools_server: MCPServer
) -> None:
    fake.script(calling(("add", {"a": 2, "b": 3})), FakeReply(content="5"))
    chat = fake.conversation(tools=[tools_server])
    assert chat.send("What is 2 + 3?").content == "5"
    assert results(fake, 1) == ["5"]
    assert "add" in offered(fake, 0)
    schema = chat.tools["add"].spec.parameters
    assert schema["properties"] == {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}
    assert schema["required"] == ["a", "b"]  # the server's schema as it is (titles included)


def test_text_image_and_failures_are_mapped(fake: FakeProvider, tools_server: MCPServer) -> None:
    fake.script(
        calling(("echo", {"text": "hi"}), ("picture", {}), ("fail", {"why": "no reason"}), ("add", {"a": "x"})),
        FakeReply(content="done"),
    )
    fake.conversation(tools=[tools_server]).send("Try everything")
    echo, picture, failed, invalid = results(fake, 1)
    assert echo == "hi"
    assert picture.startswith("[image: image/png, ") and picture.endswith(" bytes]")
    assert json.loads(failed)["error"].startswith("MCPToolError: ") and "no reason" in failed
    assert json.loads(invalid)["error"].startswith("MCPToolError: ")  # the server validated the arguments


def test_a_name_clash_is_refused_before_any_request_and_a_prefix_solves_it(
    fake: FakeProvider, tools_server: MCPServer, ledger: Path
) -> None:
    def add(a: int, b: int) -> int:
        """Add locally."""
        return a + b

    with pytest.raises(InvalidInputError, match=r"'add' is both a function .* prefix"):
        fake.conversation(tools=[add, tools_server]).send("2 + 3?")
    assert fake.requests == []
    prefixed = stdio_server(ledger, prefix="remote_")
    try:
        fake.script(calling(("remote_add", {"a": 1, "b": 1})), FakeReply(content="2"))
        chat = fake.conversation(tools=[add, prefixed])
        assert chat.send("1 + 1 remotely?").content == "2" and results(fake, 1) == ["2"]
        assert {"add", "remote_add", "remote_echo"} <= set(offered(fake, 0))
    finally:
        prefixed.close()


def test_tools_are_listed_once_and_again_when_the_server_says_they_changed(
    fake: FakeProvider, tools_server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llm_core.mcp import connection

    listings: list[int] = []
    original = connection.Connection.list_tools

    async def counted(self: connection.Connection) -> Any:
        listings.append(1)
        return await original(self)

    monkeypatch.setattr(connection.Connection, "list_tools", counted)
    fake.script(calling(("echo", {"text": "a"})), calling(("echo", {"text": "b"})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[tools_server])
    chat.send("Echo twice")
    assert len(listings) == 1 and "shrink" not in offered(fake, 2)
    fake.script(calling(("grow", {})), FakeReply(content="grown"))
    chat.send("Grow")
    deadline = time.monotonic() + 10  # the change arrives on its own stream
    while "shrink" not in [t.name for t in tools_server.tools()] and time.monotonic() < deadline:
        time.sleep(0.05)
    fake.script(FakeReply(content="seen"))
    chat.send("And now?")
    assert "shrink" in offered(fake, 5) and len(listings) == 2


def test_the_conversation_closes_its_server(fake: FakeProvider, tools_server: MCPServer) -> None:
    fake.script(calling(("pid", {})), FakeReply(content="ok"))
    with fake.conversation(tools=[tools_server]) as chat:
        chat.send("Your pid?")
        pid = int(results(fake, 1)[0])
        os.kill(pid, 0)  # alive
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    fake.script(calling(("echo", {"text": "again"})), FakeReply(content="ok"))
    fake.conversation(tools=[tools_server]).send("Echo")  # used again: started again
    assert results(fake, 3) == ["again"]


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):  # reap it if it is this process's child
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_server_killed_mid_call_is_a_typed_error_and_the_call_is_interrupted(
    fake: FakeProvider, tools_server: MCPServer
) -> None:
    fake.script(calling(("echo", {"text": "first"}), ("die", {})))
    chat = fake.conversation(tools=[tools_server])
    with pytest.raises(MCPServerError, match="'tools' closed the connection") as caught:
        chat.send("Die")
    assert caught.value.server == "tools"
    assert results_in_history(chat) == ["first"]  # what finished before is kept
    with pytest.raises(ToolInterruptedError) as interrupted:
        chat.send()
    assert interrupted.value.call.name == "die"
    chat.deny(interrupted.value.call.id, "the server died")
    fake.script(FakeReply(content="sorry"))
    assert chat.send().content == "sorry"  # the server starts again for the next call


def results_in_history(chat: Any) -> list[str]:
    return [m.content for m in chat.messages if m.role.value == "tool"]


def test_a_hung_server_times_out(fake: FakeProvider, ledger: Path) -> None:
    server = stdio_server(ledger, timeout=2)
    try:
        assert "slow" in [t.name for t in server.tools()]
        fake.script(calling(("slow", {"seconds": 60})))
        began = time.monotonic()
        with pytest.raises(MCPTimeoutError, match="did not answer tools/call slow within 2s"):
            fake.conversation(tools=[server]).send("Wait")
        assert time.monotonic() - began < 15
    finally:
        server.close()


def test_a_server_that_cannot_start_is_a_typed_error(fake: FakeProvider, tmp_path: Path) -> None:
    missing = MCPServer.stdio(str(tmp_path / "no-such-server"), timeout=10)
    with pytest.raises(MCPServerError, match="could not start"):
        fake.conversation(tools=[missing]).send("Hello")
    exits = MCPServer.stdio(sys.executable, ["-c", "pass"], timeout=10, name="quitter")
    with pytest.raises(MCPServerError, match="'quitter'"):
        exits.tools()
    with socket.socket() as closed:  # bound, not listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        refused = MCPServer.http(f"http://127.0.0.1:{closed.getsockname()[1]}/mcp", start_timeout=20)
        with pytest.raises(MCPServerError, match="could not start: ConnectError"):
            refused.tools()
    assert fake.requests == []


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("result", "answered tools/call broken with something that is not an answer"),
        ("schema", "its tool 'broken' cannot be offered to a model: parameters"),
    ],
)
def test_malformed_answers_are_errors(fake: FakeProvider, ledger: Path, mode: str, message: str) -> None:
    odd = MCPServer.stdio(
        sys.executable,
        server_command(mode, ledger, module="tests.mcp.malformed_server")[:3],
        env={"PYTHONPATH": PYTHONPATH},
        cwd=ROOT,
        timeout=30,
    )
    try:
        fake.script(calling(("broken", {})))
        with pytest.raises(MCPServerError, match=message):
            fake.conversation(tools=[odd]).send("Call it")
    finally:
        odd.close()


def test_async_conversations_use_the_server_concurrently(fake: FakeProvider, tools_server: MCPServer) -> None:
    fake.script(calling(("slow", {"seconds": 1}), ("slow", {"seconds": 1}), ("echo", {"text": "x"})))
    fake.script(FakeReply(content="ok"))

    async def run() -> float:
        async with fake.aio.conversation(tools=[tools_server]) as chat:
            await chat.send("Warm up")  # starts the server, runs the calls
            return 0.0

    asyncio.run(run())
    assert results(fake, 1) == ["late", "late", "x"]


def test_an_http_server(fake: FakeProvider, http_url: str) -> None:
    kind = MCPServer.sse if http_url.endswith("/sse") else MCPServer.http
    server = kind(http_url, headers={"Authorization": "Bearer sk-secret-123"}, timeout=30)
    assert "sk-secret" not in repr(server) and repr(server) == f"MCPServer('127.0.0.1', {kind.__name__})"
    try:
        fake.script(calling(("add", {"a": 20, "b": 22})), FakeReply(content="42"))
        chat = fake.conversation(tools=[server])
        assert chat.send("20 + 22?").content == "42" and results(fake, 1) == ["42"]
        assert "sk-secret" not in chat.to_json()
        fake.script(calling(("authorization", {})), FakeReply(content="seen"))
        chat.send("Which credentials reached you?")
        assert results(fake, 3)[-1] == "Bearer sk-secret-123"  # the header went with the call
    finally:
        server.close()


def test_the_idempotency_key_goes_with_the_call(fake: FakeProvider, tools_server: MCPServer, ledger: Path) -> None:
    fake.script(calling(("pay", {"amount": 3})), FakeReply(content="paid"))
    chat = fake.conversation(tools=[tools_server])
    chat.send("Pay 3")
    key = json.loads(chat.to_json())["tool_calls"]["c0"]["key"]
    assert ledger.read_text().split() == ["3", key]


def test_bad_configuration_is_refused_at_once() -> None:
    with pytest.raises(InvalidInputError, match="http"):
        MCPServer.http("ftp://example.invalid/mcp")
    with pytest.raises(InvalidInputError, match="command"):
        MCPServer.stdio("")
    with pytest.raises(InvalidInputError, match="timeout"):
        MCPServer.stdio("server", timeout=0)
    with_key = MCPServer.http("http://127.0.0.1:1/mcp", headers={"Authorization": "Bearer x"})
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(with_key)


def test_the_mcp_sdk_is_imported_only_when_a_server_starts() -> None:
    code = (
        "import sys, llm_core, llm_core.mcp\n"
        "server = llm_core.mcp.MCPServer.stdio('python', ['-m', 'server'])\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": PYTHONPATH}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_server_left_open_stops_when_the_process_exits(ledger: Path) -> None:
    code = (
        "from pathlib import Path\n"
        "from tests.mcp.servers import stdio_server\n"
        "from llm_core.testing import FakeProvider, FakeReply\n"
        "from llm_core import ToolCall\n"
        "fake = FakeProvider(replies=[FakeReply(tool_calls=[ToolCall(id='c', name='pid')]), FakeReply('ok')])\n"
        f"chat = fake.conversation(tools=[stdio_server(Path({str(ledger)!r}))])\n"
        "chat.send('pid?')\n"
        "print(chat.messages[2].content)\n"  # never closed: the process just ends
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": PYTHONPATH},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip())
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)



def test_llm_core_prompt_and_chat_take_mcp_servers(
    ledger: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from llm_core.cli.main import main
    from llm_core.registry import Registry
    from llm_core.specs import ProviderSpec
    from llm_core.testing import fake_spec

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    model = FakeProvider()
    registry = Registry(strict=False)
    spec = fake_spec("fake")
    registry.register(ProviderSpec(spec.identifier, spec.name, spec.features, lambda **_c: model, spec.models))
    monkeypatch.setattr("llm_core.registry.get_registry", lambda: registry)
    monkeypatch.chdir(ROOT)  # the server is run as a module of the tests package
    command = f"{sys.executable} -m tests.mcp.tool_server stdio {ledger}"
    model.script(calling(("add", {"a": 1, "b": 2})), FakeReply(content="3"))
    assert main(["prompt", "-p", "fake", "--mcp", command, "1 + 2?"]) == 0
    model.script(calling(("echo", {"text": "hi"})), FakeReply(content="hi"))
    monkeypatch.setattr("sys.stdin", io.StringIO("Say hi\nexit\n"))
    assert main(["chat", "-p", "fake", "--mcp", command]) == 0
    assert results(model, 1) == ["3"] and results(model, 3) == ["hi"]
    assert capsys.readouterr().out.splitlines() == ["[tool] add(a=1, b=2)", "3", "[tool] echo(text='hi')", "hi"]
    assert main(["prompt", "-p", "fake", "--mcp", "  ", "hi"]) == 2


def server_pid(server: MCPServer) -> int:
    """The pid of the server process, asked through its ``pid`` tool."""
    tool = next(t for t in server.tools() if t.name == "pid")
    assert tool.handler is not None
    return int(tool.handler({}, ""))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_server(tools_server: MCPServer) -> None:
    parent = server_pid(tools_server)  # started in the parent
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write, str(server_pid(tools_server)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        in_child = int(answer.read() or 0)
    os.waitpid(child, 0)
    assert in_child not in (0, parent)  # its own server, not the parent's
    assert server_pid(tools_server) == parent  # the parent's is untouched
