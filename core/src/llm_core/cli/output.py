"""Printing for the CLI: tables for people, JSON for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO


def emit_json(data: Any, stream: TextIO | None = None) -> None:
    print(json.dumps(data, indent=2, default=str, ensure_ascii=False), file=stream or sys.stdout)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], stream: TextIO | None = None) -> None:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out = stream or sys.stdout
    print("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip(), file=out)


def note(message: str) -> None:
    """A message for people, on stderr so that stdout stays clean for pipes."""
    print(message, file=sys.stderr)


class Progress:
    """A one-line progress counter on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self.enabled:
            print(f"\r{self.label}: {self.done}/{self.total}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)
