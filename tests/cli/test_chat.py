"""``llm-core chat`` as a conversation, run without a terminal: lines from stdin, ``-c`` to
continue the saved conversation, ``--functions FILE.py`` as tools."""

from __future__ import annotations

import io
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import chat as cli_chat
from llm_core.cli.main import main
from llm_core.registry import Registry
from llm_core.specs import ProviderSpec
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from llm_core.tools import ToolCall

FUNCTIONS = textwrap.dedent(
    '''
    from json import dumps  # imported: not a tool


    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return dumps({"city": city, "sky": "sunny"})


    def _helper() -> None:
        pass
    '''
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeProvider:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    instance = FakeProvider()
    registry = Registry(strict=False)
    spec = fake_spec("fake")
    registry.register(
        ProviderSpec(spec.identifier, spec.name, spec.features, lambda **_c: instance, spec.models, spec.default_model)
    )
    monkeypatch.setattr("llm_core.registry.get_registry", lambda: registry)
    return instance


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: Any, argv: list[str], stdin: str) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(argv) == 0
    return str(capsys.readouterr().out)


def test_interactive_chat_keeps_the_conversation_and_c_continues_it(
    fake: FakeProvider, monkeypatch: Any, capsys: Any
) -> None:
    fake.script(FakeReply(content="Hi Ada."), FakeReply(content="Your name is Ada."))
    out = run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "-s", "Be brief."], "I am Ada.\nWho am I?\n\nignored\n")
    assert out.splitlines() == ["Hi Ada.", "Your name is Ada."]
    assert [m["role"] for m in fake.requests[1]["messages"]] == ["system", "user", "assistant", "user"]
    saved = json.loads(cli_chat.state_file().read_text(encoding="utf-8"))
    assert len(saved["messages"]) == 5 and "key" not in json.dumps(saved).lower()

    fake.script(FakeReply(content="Still Ada."))
    assert run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "-c", "Am I still Ada?"], "") == "Still Ada.\n"
    assert [m["role"] for m in fake.requests[2]["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_functions_file_becomes_tools(fake: FakeProvider, monkeypatch: Any, capsys: Any, tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(FUNCTIONS, encoding="utf-8")
    fake.script(
        FakeReply(tool_calls=[ToolCall(id="w", name="get_weather", arguments={"city": "Paris"})]),
        FakeReply(content="Sunny in Paris."),
    )
    out = run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "--functions", str(path)], "Weather in Paris?\nexit\n")
    assert out.splitlines() == ["[tool] get_weather(city='Paris')", "Sunny in Paris."]
    assert fake.requests[0]["tools"] == ["get_weather"]
    assert fake.requests[1]["messages"][-1]["content"] == '{"city": "Paris", "sky": "sunny"}'


def test_bad_functions_and_nothing_to_continue(fake: FakeProvider, monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    empty = tmp_path / "empty.py"
    empty.write_text("import os\n", encoding="utf-8")
    assert main(["chat", "-p", "fake", "--functions", str(empty), "hi"]) == 2
    assert main(["chat", "-p", "fake", "--functions", str(tmp_path / "missing.py"), "hi"]) == 2
    assert main(["chat", "-p", "fake", "-c", "hi"]) == 2
    assert fake.requests == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n    pass\n", r"error: --functions: .*bad\.py, line 1: invalid syntax"),
        ("raise SystemExit(0)\n", r"error: --functions: .*bad\.py exits when imported \(exit code 0\)"),
        ("import sys\nsys.exit('bye')\n", r"error: --functions: .*bad\.py exits when imported \(exit code 'bye'\)"),
        ("raise KeyError('x')\n", r"error: --functions: importing .*bad\.py failed: KeyError: 'x'"),
    ],
    ids=["syntax error", "SystemExit(0)", "sys.exit(text)", "an exception"],
)
def test_a_functions_file_that_cannot_be_imported_is_one_line(
    fake: FakeProvider, monkeypatch: Any, capsys: Any, tmp_path: Path, source: str, message: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    bad = tmp_path / "bad.py"
    bad.write_text(source, encoding="utf-8")
    assert main(["chat", "-p", "fake", "--functions", str(bad), "hi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.fullmatch(message + "\n", err), err
    assert fake.requests == []


@pytest.mark.parametrize(
    ("state", "why"),
    [
        ("null", "a saved conversation is a JSON object, not null"),
        ("[1]", "a saved conversation is a JSON object, not an array"),
        ("[" * 100_000, "the document nests deeper than 200 levels"),
        ('{"format": "llm-core.conversation/1", "messages": [], "options": {"messages": []}}', "options.messages"),
    ],
    ids=["null", "a list", "deep nesting", "options.messages"],
)
def test_c_with_a_tampered_state_file_is_one_line(
    fake: FakeProvider, monkeypatch: Any, capsys: Any, state: str, why: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    saved = cli_chat.state_file()
    saved.parent.mkdir(parents=True)
    saved.write_text(state, encoding="utf-8")
    assert main(["chat", "-p", "fake", "-c", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: from_json: ") and why in err and err.count("\n") == 1, err
    assert fake.requests == []


def test_c_with_a_state_path_that_is_no_regular_file(fake: FakeProvider, monkeypatch: Any, capsys: Any) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    saved = cli_chat.state_file()
    saved.parent.mkdir(parents=True)
    saved.symlink_to("/dev/zero")
    assert main(["chat", "-p", "fake", "-c", "hi"]) == 2
    assert capsys.readouterr().err == f"error: -c: {saved} is not a regular file\n"


def test_the_saved_conversation_is_private_and_holds_no_key(
    fake: FakeProvider, monkeypatch: Any, capsys: Any
) -> None:
    fake.script(FakeReply(content="Hi."))
    header = json.dumps({"x-goog-api-key": "header-secret-123"})
    run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "-o", "extra_headers", header], "hello\n")
    saved = cli_chat.state_file()
    assert saved.stat().st_mode & 0o777 == 0o600
    assert "header-secret" not in saved.read_text() and "Hi." in saved.read_text()
