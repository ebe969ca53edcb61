"""``llm-core chat`` as a conversation, run without a terminal: lines from stdin, ``!`` commands
handled locally, every exchange in the prompt log, ``-c`` continuing a conversation whichever
command began it, ``--functions`` / ``-T`` (a file or code) as tools."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import logdb
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


def test_interactive_chat_keeps_the_conversation_and_logs_every_exchange(
    fake: FakeProvider, monkeypatch: Any, capsys: Any
) -> None:
    fake.script(FakeReply(content="Hi Ada."), FakeReply(content="Your name is Ada."))
    typed = "I am Ada.\n\nWho am I?\nexit\nignored\n"
    out = run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "-s", "Be brief."], typed)
    assert out.splitlines() == ["Hi Ada.", "Your name is Ada."]  # an empty line is skipped, 'exit' leaves
    assert [m["role"] for m in fake.requests[1]["messages"]] == ["system", "user", "assistant", "user"]
    first, second = logdb.recent()
    assert (first["prompt"], first["response"], second["prompt"]) == ("I am Ada.", "Hi Ada.", "Who am I?")
    assert first["conversation_id"] == second["conversation_id"] and second["system"] == "Be brief."


def test_c_continues_a_chat_in_prompt_and_a_prompt_in_chat(fake: FakeProvider, monkeypatch: Any, capsys: Any) -> None:
    fake.script(FakeReply(content="Hi Ada."), FakeReply(content="Still Ada."), FakeReply(content="Ada, again."))
    run_cli(monkeypatch, capsys, ["chat", "-p", "fake"], "I am Ada.\n")
    assert run_cli(monkeypatch, capsys, ["prompt", "-p", "fake", "-c", "Am I still Ada?"], "") == "Still Ada.\n"
    assert [m["role"] for m in fake.requests[1]["messages"]] == ["user", "assistant", "user"]
    assert run_cli(monkeypatch, capsys, ["chat", "-p", "fake", "-c"], "And now?\n") == "Ada, again.\n"
    assert [m["content"] for m in fake.requests[2]["messages"]] == [
        "I am Ada.",
        "Hi Ada.",
        "Am I still Ada?",
        "Still Ada.",
        "And now?",
    ]
    assert len({entry["conversation_id"] for entry in logdb.recent()}) == 1


def test_bang_commands_are_handled_here_and_never_sent(
    fake: FakeProvider, monkeypatch: Any, capsys: Any, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "written in the editor" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    fake.script(FakeReply(content="one"), FakeReply(content="two"))
    typed = "!help\n!hlep\n!multi\nfirst line\nsecond line\n!end\n!edit\n!exit\nnever sent\n"
    out = run_cli(monkeypatch, capsys, ["chat", "-p", "fake"], typed)
    assert "!multi" in out and "!edit" in out and "!exit" in out  # !help
    assert "unknown command !hlep; did you mean !help?" in out
    assert [r["messages"][-1]["content"] for r in fake.requests] == ["first line\nsecond line", "written in the editor"]
    assert out.endswith("one\ntwo\n")


def test_a_failed_exchange_is_logged_and_left_out_of_the_conversation(
    fake: FakeProvider, monkeypatch: Any, capsys: Any
) -> None:
    from llm_core.errors import ContentFilteredError

    fake.script(FakeReply(error=ContentFilteredError("blocked")), FakeReply(content="Fine."))
    monkeypatch.setattr("sys.stdin", io.StringIO("first\nsecond\n"))
    assert main(["chat", "-p", "fake"]) == 0
    printed = capsys.readouterr()
    assert printed.out == "Fine.\n" and "error: blocked" in printed.err
    assert [m["content"] for m in fake.requests[-1]["messages"]] == ["second"]
    failed, answered = logdb.recent()
    assert failed["error"].startswith("ContentFilteredError") and answered["error"] is None


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


def test_prompt_takes_tools_as_code_with_t(fake: FakeProvider, monkeypatch: Any, capsys: Any) -> None:
    fake.script(
        FakeReply(tool_calls=[ToolCall(id="a", name="add", arguments={"a": 2, "b": 3})]),
        FakeReply(content="5"),
    )
    code = "def add(a: int, b: int) -> int:\n    return a + b\n"
    out = run_cli(monkeypatch, capsys, ["prompt", "-p", "fake", "-T", code, "2+3?"], "")
    assert out.splitlines() == ["[tool] add(a=2, b=3)", "5"]
    assert fake.requests[1]["messages"][-1]["content"] == "5"
    assert logdb.recent()[0]["response"] == "5"


def test_bad_functions_and_nothing_to_continue(fake: FakeProvider, monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    empty = tmp_path / "empty.py"
    empty.write_text("import os\n", encoding="utf-8")
    assert main(["chat", "-p", "fake", "--functions", str(empty), "hi"]) == 2
    assert main(["chat", "-p", "fake", "--functions", str(tmp_path / "missing.py"), "hi"]) == 2
    assert main(["chat", "-p", "fake", "-c", "hi"]) == 2
    assert main(["chat", "-p", "fake", "-T", "x = 1", "hi"]) == 2  # code that defines no function
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


