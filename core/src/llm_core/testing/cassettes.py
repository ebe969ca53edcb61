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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llm_core.redaction import known_values

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


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
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

    recorder = vcr.VCR(
        cassette_library_dir=str(cassette_dir),
        serializer="readable-json",
        path_transformer=vcr.VCR.ensure_suffix(".json"),
        record_mode=mode or record_mode(),
        match_on=["method", "scheme", "host", "port", "path", "query", "json_body"],
        filter_headers=[(h, FILTERED) for h in SECRET_HEADERS],
        filter_query_parameters=list(SECRET_QUERY),
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
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
