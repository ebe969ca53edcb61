"""``llm-core chat`` as a conversation, run without a terminal: lines from stdin, ``-c`` to
continue the saved conversation, ``--functions FILE.py`` as tools."""

from __future__ import annotations

import io
import json
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
