"""vcrpy cassettes that people can read: JSON bodies stored as JSON, keys filtered.

Record mode is ``none`` (replay only) unless ``LLM_CORE_RECORD`` is set to a vcrpy record mode
(``once``, ``new_episodes``, ``all``) to re-record against the real API with a real key.
Requests match on method, host, path, query (keys removed) and the JSON body.

No key is ever written: credential headers and query parameters are filtered by name, and every
key the process knows (each live :class:`~llm_core.config.Secret`, so keys given as ``api_key=``
or in a config file, and ``*_API_KEY``/``*_ACCESS_TOKEN`` environment variables) is replaced by
``FILTERED`` wherever it appears: the URL, any request or response header, either body.

Needs the optional dependency ``vcrpy`` (``pip install llm-core[replay]``).
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llm_core.errors import InvalidInputError
from llm_core.redaction import known_values, protect_loggers

RECORD_ENV = "LLM_CORE_RECORD"
SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "x-goog-api-key",
    "x-api-key",
    "api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
    "x-goog-user-project",
)
SECRET_QUERY = ("key", "api_key", "access_token")
FILTERED = "FILTERED"
#: Largest decoded size of one compressed response body (the transport's own default limit on a
#: response): a recorded gzip body is inflated a piece at a time and refused beyond it, so that a
#: small cassette cannot make the process inflate gigabytes.
MAX_INFLATED_BYTES = 64 * 1024 * 1024
#: Largest piece inflated at once.
_PIECE = 64 * 1024
_ZLIB_ENCODINGS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


def _encode_body(text: Any) -> dict[str, Any]:
    """A body as readable as it can be: JSON, text, or base64 for binary."""
    if text is None or text == "":
        return {"string": ""}
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(text).decode("ascii")}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"string": text}
    if isinstance(parsed, dict | list):
        return {"json": parsed}
    return {"string": text}


def _decode_body(body: dict[str, Any]) -> str | bytes:
    if "json" in body:
        return json.dumps(body["json"], ensure_ascii=False)
    if "base64" in body:
        return base64.b64decode(body["base64"])
    return str(body.get("string", ""))


class ReadableJSONSerializer:
    """vcrpy serializer: interactions with ``json`` bodies instead of escaped strings."""

    @staticmethod
    def serialize(cassette: dict[str, Any]) -> str:
        for interaction in cassette["interactions"]:
            request = interaction["request"]
            request["body"] = _encode_body(request.get("body"))
            response = interaction["response"]
            response["body"] = _encode_body(response.get("body", {}).get("string"))
        return json.dumps(cassette, indent=2, ensure_ascii=False) + "\n"

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        cassette: dict[str, Any] = json.loads(text)
        for interaction in cassette["interactions"]:
            request = interaction["request"]
            body = request.get("body")
            request["body"] = _decode_body(body) if isinstance(body, dict) else body
            response = interaction["response"]
            rbody = response.get("body", {})
            response["body"] = {"string": _decode_body(rbody) if isinstance(rbody, dict) else rbody}
        return cassette


def _multipart_boundary(request: Any) -> bytes | None:
    content_type = str(request.headers.get("content-type") or "")
    if not content_type.startswith("multipart/"):
        return None
    for part in content_type.split(";"):
        name, _, value = part.strip().partition("=")
        if name.lower() == "boundary" and value:
            return value.strip('"').encode("ascii")
    return None


def _json_body(request: Any) -> Any:
    body = request.body
    if body in (None, b"", ""):
        return None
    boundary = _multipart_boundary(request)
    if boundary is not None:  # multipart boundaries are random per request: compare without them
        raw = body.encode("utf-8") if isinstance(body, str) else body
        return raw.replace(boundary, b"<boundary>")
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
    try:
        return json.loads(body)
    except ValueError:
        return body


def json_body_matcher(r1: Any, r2: Any) -> None:
    """Bodies match when they decode to the same JSON, or are byte-equal (multipart bodies apart
    from their random boundary)."""
    if _json_body(r1) != _json_body(r2):
        raise AssertionError("request bodies differ")


def _redact(data: Any, secrets: tuple[str, ...]) -> Any:
    for secret in secrets:
        if isinstance(data, bytes):
            data = data.replace(secret.encode(), FILTERED.encode())
        elif isinstance(data, str):
            data = data.replace(secret, FILTERED)
    return data


def _scrub_request(request: Any) -> Any:
    """vcrpy applies this to a copy of each request, before recording it and before matching it
    (so a replayed request matches the filtered recording)."""
    secrets = known_values()
    request.uri = _redact(request.uri, secrets)
    for name in list(request.headers):
        request.headers[name] = _redact(request.headers[name], secrets)
    request.body = _redact(request.body, secrets)
    return request


def _inflate(data: bytes, encoding: str) -> bytes | None:
    """``data`` decoded (``gzip``, or ``deflate`` zlib-wrapped or raw), at most
    :data:`MAX_INFLATED_BYTES` of it: beyond, :class:`~llm_core.errors.InvalidInputError`.
    ``None`` when ``data`` is not of that encoding (vcrpy then takes it as already decoded)."""
    inflater = zlib.decompressobj(_ZLIB_ENCODINGS[encoding])
    pieces: list[bytes] = []
    total = 0
    while not inflater.eof:
        try:
            piece = inflater.decompress(data, _PIECE)
        except zlib.error:
            if encoding != "deflate" or pieces:
                return None
            encoding, inflater = "raw", zlib.decompressobj(-zlib.MAX_WBITS)  # deflate without the zlib header
            continue
        total += len(piece)
        if total > MAX_INFLATED_BYTES:
            raise InvalidInputError(
                f"a recorded response body inflates to more than MAX_INFLATED_BYTES ({MAX_INFLATED_BYTES:,} bytes)"
            )
        pieces.append(piece)
        data = inflater.unconsumed_tail
        if not piece and not data:  # a truncated body: what it held
            break
    return b"".join(pieces)


def _decompressed(response: dict[str, Any]) -> dict[str, Any]:
    """The response with its body decoded when it is gzip or deflate (what vcrpy's
    ``decode_compressed_response`` does, but bounded: vcrpy inflates the whole body at once)."""
    headers = response.get("headers")
    if not isinstance(headers, dict):
        return response
    name = next((n for n in headers if n.lower() == "content-encoding"), None)
    values = headers.get(name) if name is not None else None
    if not values or not isinstance(values, list) or str(values[0]).strip().lower() not in _ZLIB_ENCODINGS:
        return response
    body = response.get("body")
    if not isinstance(body, dict) or not body.get("string"):
        return response
    raw = body["string"]
    decoded = _inflate(raw.encode("utf-8") if isinstance(raw, str) else raw, str(values[0]).strip().lower())
    if decoded is None:
        decoded = raw.encode("utf-8") if isinstance(raw, str) else raw
    rest = values[1:]
    if rest:
        headers[name] = rest
    else:
        headers.pop(name)
    for key in [n for n in headers if n.lower() == "content-length"]:
        headers.pop(key)
    headers["content-length"] = [str(len(decoded))]
    response["body"] = {**body, "string": decoded}
    return response


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    response = _decompressed(response)
    secrets = known_values()
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in SECRET_HEADERS:
            headers.pop(name)
        else:  # a service (or a proxy) may quote the key back in any header
            values = headers[name]
            headers[name] = (
                [_redact(v, secrets) for v in values] if isinstance(values, list) else _redact(values, secrets)
            )
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:  # ... or in the body
        body["string"] = _redact(body["string"], secrets)
    return response


def record_mode() -> str:
    return os.environ.get(RECORD_ENV, "").strip() or "none"


def make_vcr(cassette_dir: str | Path, *, mode: str | None = None) -> Any:
    """A configured ``vcr.VCR`` for ``cassette_dir``."""
    import vcr
    import vcr.stubs.httpx_stubs  # its logger exists once imported: protected below

    # vcrpy logs each interaction it records or loads at INFO, before our filters run on it (and
    # each request it lets through): a key the upstream quoted back would be written as it is.
    protect_loggers("vcr")
    recorder = vcr.VCR(
        cassette_library_dir=str(cassette_dir),
        serializer="readable-json",
        path_transformer=vcr.VCR.ensure_suffix(".json"),
        record_mode=mode or record_mode(),
        match_on=["method", "scheme", "host", "port", "path", "query", "json_body"],
        filter_headers=[(h, FILTERED) for h in SECRET_HEADERS],
        filter_query_parameters=list(SECRET_QUERY),
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,  # decodes gzip bodies too, bounded
    )
    recorder.register_serializer("readable-json", ReadableJSONSerializer)
    recorder.register_matcher("json_body", json_body_matcher)
    return recorder


@contextmanager
def use_cassette(path: str | Path, *, mode: str | None = None, **kwargs: Any) -> Iterator[Any]:
    """Replay (or, with ``LLM_CORE_RECORD``, record) the HTTP traffic of the block."""
    target = Path(path)
    with make_vcr(target.parent, mode=mode).use_cassette(target.name, **kwargs) as cassette:
        yield cassette
