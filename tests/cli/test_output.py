"""Terminal output: rich tables fit the terminal's width and answers render as Markdown at a
terminal; piped output and a missing rich give plain text."""

from __future__ import annotations

import io
import re
import sys

import pytest
from rich.console import Console

from llm_core.cli import output

ROWS = [["gemini", "core-gemini-plugin 0.1.0", "yes", "chat, completion, decision, documents, embeddings, image"]]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rich_table_fits_the_terminal_width() -> None:
    screen = Terminal()
    output.table(["provider", "plugin", "available", "features"], ROWS, console=Console(file=screen, width=50))
    lines = re.sub(r"\x1b\[[0-9;]*m", "", screen.getvalue()).splitlines()  # without the styling codes
    assert lines and all(len(line) <= 50 for line in lines)
    assert "PROVIDER" in lines[0] and any("decision" in line for line in lines)


def test_answers_render_as_markdown_at_a_terminal() -> None:
    screen = Terminal()
    output.answer("# Title\n\n**bold** and `code`", console=Console(file=screen, width=60))
    text = screen.getvalue()
    assert "Title" in text and "bold" in text and "**" not in text and "# Title" not in text


def test_a_terminal_gets_rich_and_a_pipe_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(output.PLAIN_ENV, raising=False)
    assert output.rich_console(Terminal()) is not None
    assert output.rich_console(io.StringIO()) is None
    monkeypatch.setenv(output.PLAIN_ENV, "1")
    assert output.rich_console(Terminal()) is None


def test_without_rich_the_terminal_gets_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)  # as if rich were not installed
    screen = Terminal()
    assert output.rich_console(screen) is None
    output.table(["a", "b"], [["1", "two"]], stream=screen)
    output.answer("**bold**", stream=screen)
    assert screen.getvalue() == "A  B\n1  two\n**bold**\n"


def test_progress_counter_without_a_bar(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)
    progress = output.Progress(3, "embedding", enabled=True)
    progress.advance(2)
    progress.advance()
    progress.close()
    assert capsys.readouterr().err == "\rembedding: 2/3\rembedding: 3/3\n"


def test_the_progress_bar_shows_done_of_total(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(output, "rich_console", lambda stream=None: Console(file=screen, force_terminal=True, width=80))
    bar = output.Progress(5, "items", enabled=True)
    bar.advance(3)
    bar.close()
    assert "3/5" in screen.getvalue()
