"""The input side of ``llm-core chat``: edited lines with history at a terminal, plain lines from
a pipe, and the ``!`` commands that never reach the model.

At a terminal a line is read with prompt_toolkit when it is installed (the ``cli`` extra:
``pip install 'llm-core[cli]'``), else with :func:`input` and the
standard :mod:`readline` (arrow keys, Ctrl-R search, Emacs keys). Both keep what was typed for
the next session: prompt_toolkit in the history file given, readline in the same name with
``-readline`` added (the two formats differ).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

PROMPT = "> "
CONTINUATION = "... "
#: ``!`` commands → what they do (``!help`` prints this).
COMMANDS: dict[str, str] = {
    "!help": "show these commands",
    "!multi": "type several lines; a line '!end' sends them",
    "!edit": "write the prompt in $EDITOR (or $VISUAL, else vi); saving sends it",
    "!exit": "leave the chat (also 'exit', 'quit', Ctrl-D)",
}
EXIT_WORDS = frozenset({"!exit", "!quit", "exit", "quit", ":q"})
_HISTORY_LINES = 1000


@dataclass(frozen=True)
class Typed:
    """One input: a prompt to send, or ``None`` with a message shown instead (a command)."""

    prompt: str | None
    shown: str | None = None


class LineReader:
    """``read()`` gives the next line (``None`` at the end of input); ``interactive`` when stdin
    is a terminal: then lines are edited and kept in ``history``."""

    def __init__(self, history: Path, *, stdin: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.interactive = self.stdin.isatty()
        self.history = history
        self._read: Callable[[str], str] = self._piped
        if self.interactive:
            self._read = self._prompt_toolkit() or self._readline()

    def read(self, prompt: str = PROMPT) -> str | None:
        try:
            return self._read(prompt)
        except EOFError:  # Ctrl-D: the shell's prompt goes on a line of its own
            if self.interactive:
                print(flush=True)
            return None

    def _piped(self, _prompt: str) -> str:
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.removesuffix("\n")

    def _prompt_toolkit(self) -> Callable[[str], str] | None:
        try:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory
        except ImportError:
            return None
        self.history.parent.mkdir(parents=True, exist_ok=True)
        session: PromptSession[str] = PromptSession(history=FileHistory(str(self.history)))

        def read(prompt: str) -> str:
            return str(session.prompt(prompt))

        return read

    def _readline(self) -> Callable[[str], str]:
        try:
            import readline
        except ImportError:  # e.g. Windows without pyreadline: plain input()
            return input
        readline.set_history_length(_HISTORY_LINES)
        # its own file: readline's format (a line per entry) is not prompt_toolkit's
        self.history = self.history.with_name(self.history.name + "-readline")
        if self.history.is_file():
            with contextlib.suppress(OSError):
                readline.read_history_file(self.history)

        def read(prompt: str) -> str:
            line = input(prompt)
            self.history.parent.mkdir(parents=True, exist_ok=True)
            try:
                if self.history.exists():
                    readline.append_history_file(1, self.history)
                else:
                    readline.write_history_file(self.history)
            except OSError:
                pass  # no history file is no reason to stop chatting
            return line

        return read


def next_input(reader: LineReader) -> Typed | None:
    """The next prompt from ``reader`` with the ``!`` commands applied; ``None``: leave."""
    while True:
        line = reader.read()
        if line is None:
            return None
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return None
        if not text.startswith("!"):
            return Typed(line)
        command = text.split()[0].lower()
        if command == "!help":
            return Typed(None, "\n".join(f"  {name:<7} {what}" for name, what in COMMANDS.items()))
        if command in ("!multi", "!edit"):
            written = _multi(reader) if command == "!multi" else edited()
            return Typed(written) if written else Typed(None, "(nothing to send)")
        import difflib

        close = difflib.get_close_matches(command, list(COMMANDS), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return Typed(None, f"unknown command {command}{hint} (!help lists them; nothing was sent)")


def _multi(reader: LineReader) -> str:
    lines: list[str] = []
    while True:
        line = reader.read(CONTINUATION)
        if line is None or line.strip() == "!end":
            return "\n".join(lines).strip()
        lines.append(line)


def edited(initial: str = "") -> str:
    """The text saved in the user's editor (``$VISUAL``, ``$EDITOR``, else ``vi``)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    handle, name = tempfile.mkstemp(prefix="llm-core-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(initial)
        subprocess.run([*shlex.split(editor), str(path)], check=False)  # noqa: S603 - the user's own editor
        return path.read_text(encoding="utf-8").strip()
    finally:
        path.unlink(missing_ok=True)


def lines_of(reader: LineReader) -> Iterator[Typed]:
    """Every input of ``reader`` until the user leaves."""
    while (typed := next_input(reader)) is not None:
        yield typed
