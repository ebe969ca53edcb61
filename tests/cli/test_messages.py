"""What the CLI says when something is off: a stopped stream, an option or model one typo away,
sampling options on a reasoning model, a wrong decision question; and output that fits 80
columns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import logdb
from llm_core.cli.main import main
from llm_core.registry import get_registry
from llm_core.streaming import StreamEvent, TokenType
from llm_core.testing import TestProvider
from tests.cli.conftest import Run

REAL = "core-openai-plugin,core-gemini-plugin"


def test_a_stream_stopped_with_ctrl_c_is_logged_and_shown_as_interrupted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = TestProvider()

    def stopped(*_args: Any, **_options: Any) -> Iterator[StreamEvent]:
        yield StreamEvent.token("Half an ", TokenType.LLM_RESPONSE)
        yield StreamEvent.token("answer", TokenType.LLM_RESPONSE)
        raise KeyboardInterrupt  # as Ctrl-C arrives while the next chunk is awaited

    monkeypatch.setattr(provider, "stream_chat_completion", stopped)
    with get_registry().override(provider):
        code = main(["prompt", "Tell me a story", "--stream"])
    printed = capsys.readouterr()
    assert code == 130
    assert printed.out == "Half an answer\n"  # the line is ended: the shell's prompt starts a new one
    assert printed.err.endswith("[interrupted]\n")
    [entry] = logdb.recent()
    assert (entry["response"], entry["error"]) == ("Half an answer", "interrupted")
    assert main(["logs", "-n", "1"]) == 0
    shown = capsys.readouterr().out
    assert "Half an answer\n[interrupted]" in shown and "None" not in shown


def test_an_option_one_typo_from_a_request_field_names_it(run: Run) -> None:
    result = run("hi", "-o", "temprature", "0.5")
    assert result.returncode == 2
    assert "-o temprature: unknown option; did you mean -o temperature (or --temperature)?" in result.stderr


def test_a_model_no_provider_offers_gets_did_you_mean(run: Run) -> None:
    result = run("hi", "-m", "flsh")
    assert result.returncode == 4 and "hint: -m flsh: did you mean -m flash?" in result.stderr


def test_temperature_on_a_reasoning_model_says_what_to_do_on_the_command_line(run: Run) -> None:
    result = run("hi", "-p", "openai", "--temperature", "0.7", plugins=REAL, env={"OPENAI_API_KEY": "sk-not-sent"})
    assert result.returncode == 2, result.stderr
    assert "gpt-5.4-mini is a reasoning model: it takes no --temperature" in result.stderr
    assert "--think" in result.stderr and "-o thinking" in result.stderr and "-m gpt-4.1" in result.stderr
    assert "thinking={" not in result.stderr  # no Python syntax
    both = run(
        "hi", "-p", "openai", "-o", "top_p", "0.9", "--temperature", "1", plugins=REAL, env={"OPENAI_API_KEY": "k"}
    )
    assert both.returncode == 2 and "no --temperature and -o top_p" in both.stderr


def test_a_wrong_decision_question_names_the_question_and_field(run: Run, tmp_path: Path) -> None:
    questions = tmp_path / "q.toml"
    questions.write_text(
        '[[questions]]\nkey = "is_bug"\nkind = "yes_no"\ninstructions = "A defect?"\n\n'
        '[[questions]]\nkey = "area"\nkind = "choise"\ninstructions = "Which area?"\n'
    )
    result = run("decide", "--subject", "s", "--questions", str(questions))
    assert result.returncode == 2
    assert (
        result.stderr
        == f"error: --questions {questions}: question 2 ('area'): kind: 'choise' is not yes_no, choice or score\n"
    )
    questions.write_text('[[questions]]\nkey = "area"\nkind = "choice"\ninstructions = "Which area?"\n')
    result = run("decide", "--subject", "s", "--questions", str(questions))
    assert "question 1 ('area'): options: missing" in result.stderr


@pytest.mark.parametrize("command", ["models", "providers"])
def test_listings_fit_80_columns(run: Run, command: str) -> None:
    result = run(command, plugins=REAL)
    assert result.returncode == 0 and "openai" in result.stdout
    lines = result.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, result.stdout
    if command == "models":
        assert "gemini-2.5-flash (default, alias flash)" in result.stdout
        assert len(lines) < 60


def test_an_option_the_provider_declares_is_no_typo() -> None:
    from core_gemini_plugin.provider import GeminiProvider
    from core_openai_plugin.provider import OpenAIProvider
    from llm_core.cli.options import check_option_names
    from llm_core.errors import InvalidInputError

    check_option_names(GeminiProvider(api_key="not-sent"), {"top_k": 40})  # Gemini takes top_k
    with pytest.raises(InvalidInputError, match=r"-o top_k: unknown option; did you mean -o top_p\?"):
        check_option_names(OpenAIProvider(api_key="not-sent"), {"top_k": 40})  # one letter from top_p
