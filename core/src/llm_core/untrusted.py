"""Files and JSON documents that someone else may have written.

A path may name a FIFO (opening it waits for a writer), a device (``/dev/zero`` never ends) or a
huge sparse file; a JSON document may nest deeper than the parser's recursion limit, or than code
walking it recursively can go. These functions read only regular files, never more than a limit,
and refuse deep nesting, each with one :class:`~llm_core.errors.InvalidInputError` that names what
is wrong. :func:`write_private_file` writes a file only its owner can read without following a
link planted where its temporary file goes.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from llm_core.errors import InvalidInputError

#: Deepest nesting of arrays and objects accepted by :func:`load_json` by default. What llm-core
#: writes (saved conversations with replay data, cassettes, schemas) stays under 30 levels.
MAX_NESTING = 200
#: Default limit of :func:`read_text_file`: a schema, a file of questions or of texts to embed.
MAX_TEXT_BYTES = 32 * 1024 * 1024


def read_regular_file(path: str | Path, *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (more is refused; the
    size is checked before anything is read). ``what`` starts each message (e.g. ``"-a"``)."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer; checked below on the descriptor
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InvalidInputError(f"{what}: no such file {path}") from None
    except OSError as exc:
        raise InvalidInputError(f"{what}: cannot open {path}: {exc.strerror}") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInputError(f"{what}: {path} is not a regular file")
        if info.st_size > limit:
            raise InvalidInputError(f"{what}: {path} is {info.st_size:,} bytes; the limit is {limit:,}")
        data = handle.read(limit + 1)  # it may have grown since fstat
    if len(data) > limit:
        raise InvalidInputError(f"{what}: {path} is larger than {limit:,} bytes")
    return data


def read_text_file(path: str | Path, *, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """:func:`read_regular_file` as UTF-8 text (bytes that are not are refused)."""
    try:
        return read_regular_file(path, limit=limit, what=what).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{what}: {path} is not UTF-8 text (byte {exc.start})") from None


def check_nesting(value: Any, *, what: str, limit: int = MAX_NESTING) -> None:
    """Refuse ``value`` (parsed JSON) when its arrays and objects nest deeper than ``limit``
    (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        current, depth = pending.pop()
        if depth > limit:
            raise InvalidInputError(f"{what} nests deeper than {limit} levels")
        children = current.values() if isinstance(current, dict) else current if isinstance(current, list) else ()
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def load_json(text: str | bytes, *, what: str, limit: int = MAX_NESTING) -> Any:
    """``text`` parsed as JSON, nesting at most ``limit`` levels. Raises ``ValueError`` (as
    :func:`json.loads` does) for text that is not JSON, and :class:`InvalidInputError` for
    deeper nesting (which the parser would report as a ``RecursionError``)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidInputError(f"{what} nests deeper than {limit} levels") from None
    check_nesting(value, what=what, limit=limit)
    return value


def write_private_file(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, mode 0600 from the start. The temporary file
    beside it gets a fresh name and is created with ``O_EXCL | O_NOFOLLOW``: a file or a symlink
    planted there is never written through."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import secrets  # with the first write: start-up does without it (and hashlib under it)

    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
