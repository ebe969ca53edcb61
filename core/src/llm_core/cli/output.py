"""Printing for the CLI: rich tables, Markdown and progress bars for people at a terminal, plain
text for pipes and scripts, JSON on request.

``rich`` is optional (``pip install 'llm-core[cli]'``): without it, or when stdout is not a
terminal, everything is plain text, so ``llm-core`` works after ``pip install
core-gemini-plugin`` alone and its output is stable for scripts. ``LLM_CORE_PLAIN=1`` forces
plain text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

PLAIN_ENV = "LLM_CORE_PLAIN"


def emit_json(data: Any, stream: TextIO | None = None) -> None:
    print(json.dumps(data, indent=2, default=str, ensure_ascii=False), file=stream or sys.stdout)


def rich_console(stream: TextIO | None = None) -> Any:
    """A rich ``Console`` for ``stream`` (stdout) when rich is installed and it is a terminal."""
    out = stream or sys.stdout
    if os.environ.get(PLAIN_ENV) or not out.isatty():
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=out)


def table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], stream: TextIO | None = None, console: Any = None
) -> None:
    """A table: rich (wrapped to the terminal's width) at a terminal, aligned columns otherwise."""
    cells = [[str(c) for c in row] for row in rows]
    console = console or rich_console(stream)
    if console is not None:
        from rich.table import Table

        grid = Table(*[h.upper() for h in headers], show_edge=False, header_style="bold", expand=False)
        for row in cells:
            grid.add_row(*row)
        console.print(grid)
        return
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out = stream or sys.stdout
    print("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), file=out)


#: Joins words that :func:`wrapped` keeps on one line (printed as a plain space).
NBSP = "\u00a0"


def wrapped(text: str, *, indent: str = "", hanging: str | None = None, width: int | None = None) -> str:
    """``text`` wrapped at spaces to the terminal's width (80 columns when piped), each line
    after ``indent`` (the lines after the first after ``hanging``, when given); words joined by
    :data:`NBSP` stay together."""
    import shutil
    import textwrap

    columns = width or (shutil.get_terminal_size(fallback=(80, 24)).columns if sys.stdout.isatty() else 80)
    lines = textwrap.fill(
        text,
        width=max(40, columns),
        initial_indent=indent,
        subsequent_indent=indent if hanging is None else hanging,
        break_on_hyphens=False,
    )
    return lines.replace(NBSP, " ")


def answer(text: str, stream: TextIO | None = None, console: Any = None) -> None:
    """A model's answer: rendered as Markdown at a terminal, the text as it is otherwise."""
    console = console or rich_console(stream)
    if console is None:
        print(text, file=stream or sys.stdout)
        return
    from rich.markdown import Markdown

    console.print(Markdown(text))


def note(message: str) -> None:
    """A message for people, on stderr so that stdout stays clean for pipes."""
    print(message, file=sys.stderr)


class Progress:
    """Progress of long work on stderr: a rich bar with ``n/total`` at a terminal, an ``n/total``
    counter line without rich, nothing when stderr is not a terminal (unless ``enabled`` forces
    it)."""

    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar: Any = None
        if self.enabled and rich_console(sys.stderr) is not None:
            from rich.progress import MofNCompleteColumn, Progress as Bar

            # the default columns (label, bar, percent, time left) with "n/total" after the bar
            columns = [*Bar.get_default_columns()]
            columns.insert(2, MofNCompleteColumn())
            self._bar = Bar(*columns, console=rich_console(sys.stderr), transient=True)
            self._task = self._bar.add_task(label, total=total)
            self._bar.start()

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self.enabled:
            print(f"\r{self.label}: {self.done}/{self.total}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.enabled:
            print(file=sys.stderr)
