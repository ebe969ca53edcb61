"""The habits of ``llm`` users that ``prompt`` keeps: ``llm-core PROMPT`` as the default command,
``--schema-multi SCHEMA``, ``-a -``, ``-x``/``--xl``, ``-u``, ``--key`` and ``-T``, and a piped
prompt without its trailing newline."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import logdb
from llm_core.messages import ImagePart
from llm_core.registry import get_registry
from llm_core.testing import FunctionProvider, TestProvider
from tests.cli.conftest import Run
from tests.cli.test_prompt import PNG, Seen, run as call


@pytest.fixture
def seen() -> Any:
    function = Seen()
    with get_registry().override(FunctionProvider(function)):
        yield function


def test_a_prompt_without_a_command_is_a_prompt(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "Capital of France?", "-s", "One word.")
    assert (code, out) == (0, "Hello back.\n"), err
    [(messages, _)] = seen.calls
    assert [m.text for m in messages] == ["One word.", "Capital of France?"]
    code, out, _ = call(capsys, "--json", "Again?")
    assert code == 0 and json.loads(out)["content"] == "Hello back."
    assert logdb.recent()[-1]["prompt"] == "Again?"


def test_a_misspelt_command_is_not_sent_as_a_prompt(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "provders")
    assert code == 2 and "did you mean 'llm-core providers'?" in err and "llm-core prompt provders" in err
    assert seen.calls == []


def test_schema_multi_takes_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    with get_registry().override(TestProvider()):
        code, out, err = call(capsys, "prompt", "Three dogs", "--schema-multi", "name, age int")
    assert code == 0, err
    assert json.loads(out) == {"items": [{"name": "a", "age": 0}]}
    assert logdb.recent()[0]["options"] == {"schema": "name, age int"}


def test_attachment_from_stdin_is_typed_by_its_bytes(
    seen: Seen, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PNG)))
    code, _, err = call(capsys, "prompt", "Describe it", "-a", "-")
    assert code == 0, err
    [(messages, _)] = seen.calls
    [_text, image] = messages[-1].parts
    assert isinstance(image, ImagePart) and image.mime_type == "image/png" and image.data == PNG
    assert logdb.recent()[0]["attachments"] == ["-"]

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"plain text")))
    code, _, err = call(capsys, "prompt", "Describe it", "-a", "-")
    assert code == 2 and "not a PNG, JPEG, GIF or WebP image, nor a PDF" in err
    code, _, err = call(capsys, "prompt", "-", "-a", "-")
    assert code == 2 and "cannot both come from standard input" in err


def test_a_piped_prompt_loses_its_trailing_newline(
    seen: Seen, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("What is 2+2?\n"))
    assert call(capsys, "prompt")[0] == 0
    assert seen.calls[0][0][-1].text == "What is 2+2?"


ANSWER = "Here:\n\n```python\nprint('first')\n```\n\nand\n\n~~~\nsecond\n~~~\n"


@pytest.mark.parametrize(("flag", "printed"), [("-x", "print('first')\n"), ("--xl", "second\n")])
def test_extract_prints_a_code_block(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flag: str, printed: str
) -> None:
    with get_registry().override(FunctionProvider(Seen(ANSWER))):
        code, out, _ = call(capsys, "prompt", "Code please", flag)
    assert (code, out) == (0, printed)
    assert logdb.recent()[0]["response"] == ANSWER  # the log keeps the whole answer


def test_usage_shows_the_tokens(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "prompt", "hi", "-u")
    assert code == 0 and "Token usage: " in err and " input, " in err and " output" in err


def test_key_is_the_key_or_a_stored_key_name(run: Run, tmp_path: Path) -> None:
    secret = "sk-given-0123456789abcdef"
    assert run("hi", "-p", "keyed").returncode == 3  # no key anywhere
    given = run("hi", "-p", "keyed", "--key", secret, "--json")
    assert given.returncode == 0, given.stderr
    assert run("keys", "set", "work", stdin="sk-stored-0123456789abcdef\n").returncode == 0
    named = run("hi", "-p", "keyed", "--key", "work")
    assert named.returncode == 0, named.stderr
    logged = run("logs", "-n", "0", "--json").stdout
    assert secret not in logged and "sk-stored" not in logged


def test_think_summary_leaves_out_unreported_thinking(capsys: pytest.CaptureFixture[str]) -> None:
    with get_registry().override(TestProvider(text="one two")):
        code, _, err = call(capsys, "prompt", "count", "--stream")
    assert code == 0 and "None" not in err


def test_piped_text_alone_is_a_prompt(
    seen: Seen, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Capital of France?\n"))
    assert call(capsys)[0] == 0
    assert seen.calls[0][0][-1].text == "Capital of France?"
