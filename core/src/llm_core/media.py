"""Images and documents given to a call: turned into parts and checked before anything is sent."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from llm_core.errors import InvalidInputError
from llm_core.messages import ImagePart

#: What ``analyze_image`` accepts as one image.
ImageInput = ImagePart | bytes | str

_FORMAT_ALIASES = {"jpg": "jpeg", "image/jpg": "jpeg", "heif": "heic"}
#: Formats whose bytes :func:`sniff_mime` recognises: bytes declared as one of them must carry its magic.
_SNIFFED = frozenset({"png", "jpeg", "gif", "webp", "heic", "pdf"})


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
        if sniffed is None and fmt in _SNIFFED:
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


def to_image_part(item: ImageInput, mime_type: str | None = None) -> ImagePart:
    """An :class:`ImagePart` from bytes, an http(s) or ``data:`` URL, or a part itself."""
    if isinstance(item, ImagePart):
        return item
    if isinstance(item, bytes):
        return _image_part("image", data=item, mime_type=mime_type)
    if isinstance(item, str) and item.startswith("data:"):
        header = item[5:].split(";", 1)[0]
        return _image_part("image", data=item, mime_type=mime_type or header or None)
    if isinstance(item, str) and item.startswith(("http://", "https://")):
        return _image_part("image", url=item, mime_type=mime_type)
    raise InvalidInputError("an image must be bytes, an ImagePart, or an http(s) or data: URL")


def _image_part(what: str, provider: str | None = None, **values: Any) -> ImagePart:
    """An :class:`ImagePart` of caller input; Pydantic's refusal becomes :class:`InvalidInputError`."""
    try:  # model_validate: Pydantic's own error, reworded here with the provider and what it was
        return ImagePart.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        detail = str(first["msg"]).removeprefix("Value error, ")
        where = ".".join(str(p) for p in first.get("loc", ()))
        detail = f"{where}: {detail}" if where else detail  # which argument: mime_type, url, data
        raise InvalidInputError(f"{what} is invalid: {detail}", provider=provider) from None


def input_image(item: ImagePart | tuple[bytes, str], provider: str) -> ImagePart:
    """An image-generation input image: ``(bytes, mime_type)`` or an :class:`ImagePart` with both."""
    if isinstance(item, ImagePart):
        part = item
    elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], bytes) and isinstance(item[1], str):
        part = _image_part("an input image", provider, data=item[0], mime_type=item[1])
    else:
        raise InvalidInputError("an input image is (bytes, mime_type) or an ImagePart", provider=provider)
    if part.data is None or not part.mime_type:
        raise InvalidInputError("an input image needs both bytes and a MIME type", provider=provider)
    return part


def mime_from_url(url: str | None) -> str | None:
    """The MIME type a URL's file suffix names, for the formats providers accept."""
    if not url:
        return None
    suffix = url.split("?", 1)[0].rsplit(".", 1)[-1].lower()
    return {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "webp": "image/webp",
        "gif": "image/gif",
        "pdf": "application/pdf",
    }.get(suffix)
