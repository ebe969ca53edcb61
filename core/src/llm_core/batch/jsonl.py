"""Reading a JSONL input file: line by line, each line at most ``max_line_bytes`` long (read in
bounded chunks and refused before it is decoded or parsed, so one huge line cannot take the
memory a parser would need for it), UTF-8 checked per line, every error naming the file and
the line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from llm_core.batch.types import Item, item_from_json
from llm_core.errors import InvalidInputError

#: The longest input line accepted, in bytes without its line ending (32 MiB): room for an item
#: carrying an image or a document as base64 (the providers take about 20 MB inline per
#: request), while a line is decoded and parsed in a few times its size.
MAX_LINE_BYTES = 32 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1024 * 1024


def read_lines(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of ``path`` that is not blank.

    Raises :class:`InvalidInputError` naming the file and the line for a line longer than
    ``max_line_bytes`` (before more than that is read of it) or one that is not UTF-8."""
    if max_line_bytes < 1:
        raise InvalidInputError(f"max_line_bytes must be at least 1, got {max_line_bytes!r}")
    with open(path, "rb") as handle:
        number = 0
        while True:
            line = _next_line(handle, max_line_bytes)
            if line is None:
                return
            number += 1
            if line.endswith(b"\n"):
                del line[-1:]
            if line.endswith(b"\r"):
                del line[-1:]
            if number == 1 and line.startswith(_BOM):  # editors on Windows write one
                del line[: len(_BOM)]
            if len(line) > max_line_bytes:
                raise InvalidInputError(
                    f"{path}: line {number}: longer than {max_line_bytes} bytes (max_line_bytes); "
                    "split the item, or raise the limit"
                )
            if not line or line.isspace():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(
                    f"{path}: line {number}: not UTF-8 (byte {exc.start + 1} of the line); the input must be "
                    "UTF-8 JSONL"
                ) from exc
            yield number, text


def _next_line(handle: BinaryIO, limit: int) -> bytearray | None:
    """The next line with its ending, or as much of it as shows it is longer than ``limit``
    (the limit, a CR LF, and the byte that does not fit); ``None`` at the end of the file.
    Read in chunks into one buffer: a single ``readline`` of the whole limit would hold the
    line twice while it joins its pieces."""
    line = bytearray()
    wanted = limit + 3 + len(_BOM)
    while len(line) < wanted:
        piece = handle.readline(min(_CHUNK, wanted - len(line)))
        if not piece:
            break
        line += piece
        if piece.endswith(b"\n"):
            break
    return line if line else None


def read_items(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[str, Item]]:
    """``("line N", item)`` for every item of the JSONL file ``path``, validated in turn."""
    for number, text in read_lines(path, max_line_bytes=max_line_bytes):
        yield f"line {number}", item_from_json(text, where=f"{path}: line {number}")


__all__ = ["MAX_LINE_BYTES", "read_items", "read_lines"]
