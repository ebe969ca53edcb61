"""Checks on images and documents before anything is sent."""

from __future__ import annotations

from collections.abc import Iterable

from llm_core.errors import InvalidInputError

_FORMAT_ALIASES = {"jpg": "jpeg", "image/jpg": "jpeg"}


def sniff_mime(data: bytes) -> str | None:
    """The MIME type told by the first bytes, for the formats providers accept."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:12] in (b"ftypheic", b"ftypheix", b"ftypmif1", b"ftypheif"):
        return "image/heic"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def format_of(mime_type: str) -> str:
    """``"image/jpeg"`` → ``"jpeg"``; ``"application/pdf"`` → ``"pdf"``."""
    lowered = mime_type.lower().strip()
    lowered = _FORMAT_ALIASES.get(lowered, lowered)
    sub = lowered.rsplit("/", 1)[-1]
    return _FORMAT_ALIASES.get(sub, sub)


def check_media(
    data: bytes | None,
    mime_type: str | None,
    *,
    kind: str,
    formats: Iterable[str],
    max_bytes: int,
    provider: str,
) -> str:
    """Validate inline media and return its MIME type.

    Raises :class:`InvalidInputError` for unsupported formats, bytes that are not the declared
    type, and sizes over ``max_bytes``. URL inputs (``data is None``) are checked by format only.
    """
    allowed = sorted({format_of(f) for f in formats})
    sniffed = sniff_mime(data) if data is not None else None
    declared = mime_type or sniffed
    if declared is None:
        raise InvalidInputError(
            f"cannot tell the type of this {kind}: pass mime_type (one of {', '.join(allowed)})",
            provider=provider,
        )
    medium = declared.split("/", 1)[0].strip().lower()
    if medium in ("video", "audio"):  # a medium of its own, not an image or a document
        raise InvalidInputError(
            f"{declared} is {medium} input, which llm-core does not support yet (it is neither an image "
            "nor a file to attach)",
            provider=provider,
        )
    fmt = format_of(declared)
    if fmt not in allowed:
        raise InvalidInputError(
            f"{kind} format {fmt!r} is not supported by {provider}; use one of {', '.join(allowed)}",
            provider=provider,
        )
    if data is not None:
        if sniffed is not None and format_of(sniffed) != fmt:
            raise InvalidInputError(
                f"{kind} bytes are {sniffed}, not the declared {declared}: fix mime_type",
                provider=provider,
            )
        if sniffed is None and fmt in {"png", "jpeg", "gif", "webp", "pdf"}:
            raise InvalidInputError(
                f"{kind} bytes are not a valid {fmt} file (wrong or corrupt data)",
                provider=provider,
            )
        if len(data) > max_bytes:
            raise InvalidInputError(
                f"{kind} is {len(data):,} bytes; {provider} accepts at most {max_bytes:,} bytes",
                provider=provider,
            )
    return declared if "/" in declared else f"{'application' if fmt == 'pdf' else 'image'}/{fmt}"
