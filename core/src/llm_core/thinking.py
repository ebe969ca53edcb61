"""Separating visible text from native and ``<think>`` thinking, shared by plugins."""

from __future__ import annotations

import re
from collections.abc import Iterable

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"[ \t]+")


def extract_think_tags(text: str) -> tuple[str, str | None]:
    """Pull ``<think>…</think>`` blocks out of ``text``.

    Returns ``(content, inline_thinking)``. Without any block the text is returned unchanged.
    Blocks are joined with ``"\\n"`` and trimmed; each block becomes one space in the content,
    runs of spaces/tabs collapse and the content is trimmed. Empty inline thinking is ``None``.
    """
    blocks = _THINK_BLOCK.findall(text)
    if not blocks:
        return text, None
    inline = "\n".join(blocks).strip()
    content = _SPACES.sub(" ", _THINK_BLOCK.sub(" ", text)).strip()
    return content, inline or None


def combine_thinking(native: str | None, inline: str | None) -> str | None:
    """Native thinking, then one newline, then inline thinking; ``None`` when neither."""
    if native and inline:
        return f"{native}\n{inline}"
    return native or inline or None


def split_text_parts(parts: Iterable[tuple[str, bool]]) -> tuple[str, str | None]:
    """Join ``(text, is_thought)`` parts into ``(content, thinking)``.

    Native thought text is joined without separator and kept byte for byte (never parsed for
    tags); visible text is joined, then goes once through :func:`extract_think_tags`.
    """
    native: list[str] = []
    visible: list[str] = []
    for text, is_thought in parts:
        (native if is_thought else visible).append(text)
    content, inline = extract_think_tags("".join(visible))
    return content, combine_thinking("".join(native) or None, inline)
