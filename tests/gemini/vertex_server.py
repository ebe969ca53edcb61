"""A 127.0.0.1 server playing Vertex AI's Gemini endpoints and Google's OAuth token endpoint, and
a service-account file whose ``token_uri`` points at it: the real google-genai and google-auth
code talk to it, through ``base_url`` and the file.

Where each shape comes from (nothing here is invented):

- Token endpoint: the JWT-bearer grant google-auth sends for a service account
  (``google/oauth2/_client.py`` ``jwt_grant``: form fields ``grant_type`` =
  ``urn:ietf:params:oauth:grant-type:jwt-bearer`` and ``assertion``, an RS256 JWT whose claims
  ``service_account.Credentials._make_authorization_grant_assertion`` writes: ``iss``, ``aud``
  (the token URI), ``scope``, ``iat``, ``exp``), answered with ``access_token``, ``expires_in``,
  ``token_type`` (what ``_handle_refresh_grant_response`` reads); a refused grant with
  ``{"error": "invalid_grant", "error_description"}`` (RFC 6749 5.2).
- Vertex AI paths: ``/v1beta1/projects/{project}/locations/{location}/publishers/google/models/
  {model}:generateContent`` (``:streamGenerateContent?alt=sse``, ``:countTokens``), and without the
  ``projects/...`` part in express mode: what google-genai builds (``_api_client._build_request``)
  and the reference recordings of Vertex AI show (INDEX.md, files 20, 21, 25).
- Bodies: a Vertex AI answer as recorded (file 20: ``candidates`` with ``avgLogprobs``,
  ``createTime``, ``responseId``, ``modelVersion``, ``usageMetadata`` with
  ``candidatesTokensDetails``, ``promptTokensDetails`` and ``trafficType``); a stream chunk as
  recorded (file 21: ``data: {...}`` blocks ending ``\\r\\n\\r\\n``, the last with the usage); no
  recording holds a Vertex stream of several chunks, so the text is split over two such chunks, as
  the Developer API's streams are; ``countTokens`` as recorded (file 25: ``totalTokens``,
  ``promptTokensDetails``); an error as Google APIs send it (``{"error": {"code", "message",
  "status"}}``, the Gemini API's shape, which INDEX.md says Vertex AI shares); Imagen's
  ``:predict`` answer ``{"predictions": [{"mimeType", "bytesBase64Encoded"}]}`` as google-genai
  reads it (``models._GeneratedImage_from_vertex``, ``_Image_from_vertex``).

Every request is recorded (path, query, headers, body). ``faults`` answers the next Vertex AI
requests with the given status and body instead. The server stops with the ``with`` block.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

HOST = "127.0.0.1"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_EMAIL = "llm-core-test@loopback-project.iam.gserviceaccount.com"
PROJECT = "loopback-project"
_VERTEX_PATH = re.compile(
    r"^/(?P<version>v1beta1|v1)/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
    r"publishers/google/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent|countTokens|predict)$"
)
_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
#: A minimal JPEG (SOI, APP0, EOI), the image Imagen's ``:predict`` answers with.
JPEG_BASE64 = base64.b64encode(bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")).decode()


def service_account_info(token_uri: str) -> dict[str, str]:
    """A service-account key file's fields (the format ``google.oauth2.service_account`` reads)."""
    pem = _KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "loopback-key-1",
        "private_key": pem,
        "client_email": CLIENT_EMAIL,
        "client_id": "100000000000000000001",
        "token_uri": token_uri,
    }


def write_service_account(folder: Path, token_uri: str) -> Path:
    path = folder / "service-account.json"
    path.write_text(json.dumps(service_account_info(token_uri)), encoding="utf-8")
    return path


def answer(text: str, model: str) -> dict[str, Any]:
    """A Vertex AI ``generateContent`` answer (shape of the recording, file 20)."""
    return {
        "candidates": [
            {"avgLogprobs": -0.05, "content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
        ],
        "createTime": "2026-12-01T22:00:00.000000Z",
        "modelVersion": model,
        "responseId": "loopback-response-1",
        "usageMetadata": {
            "candidatesTokenCount": 8,
            "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
            "promptTokenCount": 13,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 13}],
            "totalTokenCount": 21,
            "trafficType": "ON_DEMAND",
        },
    }


def stream_chunks(texts: list[str], model: str) -> bytes:
    """``data:`` blocks as Vertex AI sends them (file 21), the last one with the usage."""
    blocks = []
    for index, text in enumerate(texts):
        chunk: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}],
            "modelVersion": model,
            "createTime": "2026-12-01T22:00:00.000000Z",
            "responseId": "loopback-response-2",
        }
        if index == len(texts) - 1:
            chunk["candidates"][0]["finishReason"] = "STOP"
            chunk["usageMetadata"] = {
                "promptTokenCount": 5,
                "candidatesTokenCount": 2,
                "totalTokenCount": 7,
                "trafficType": "ON_DEMAND",
            }
        blocks.append(f"data: {json.dumps(chunk)}\r\n\r\n")
    return "".join(blocks).encode()


def error_body(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class VertexServer:
    """The server: ``url`` is the base URL for the provider, ``token_uri`` the token endpoint.

    ``api_key``: the express-mode key it accepts; ``expires_in``: the lifetime of each access
    token (google-auth refreshes a token that expires within minutes, so a few seconds make every
    request fetch a new one)."""

    api_key: str = ""
    expires_in: int = 3600
    faults: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    token_faults: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    issued: list[str] = field(default_factory=list)
    grants: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{HOST}:{self._server.server_address[1]}"

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    @property
    def vertex_requests(self) -> list[Seen]:
        return [seen for seen in self.requests if seen.path != "/token"]

    def __enter__(self) -> VertexServer:
        server = ThreadingHTTPServer((HOST, 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # -- answers ----------------------------------------------------------------------------

    def token(self, seen: Seen) -> tuple[int, dict[str, Any]]:
        form = {k: v[0] for k, v in parse_qs(seen.body.decode()).items()}
        if self.token_faults:
            return self.token_faults.pop(0)
        if form.get("grant_type") != JWT_GRANT:
            return 400, {"error": "unsupported_grant_type", "error_description": "loopback: JWT bearer only"}
        claims = _verified_claims(form.get("assertion", ""))
        if claims is None:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        self.grants.append(claims)
        with self._lock:
            token = f"ya29.loopback-token-{len(self.issued) + 1}-{int(time.time() * 1000)}"
            self.issued.append(token)
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}

    def vertex(self, seen: Seen) -> tuple[int, dict[str, Any] | bytes]:
        match = _VERTEX_PATH.match(seen.path)
        if match is None:
            return 404, error_body(404, "NOT_FOUND", f"loopback: no Vertex AI method at {seen.path}")
        authorization = seen.headers.get("authorization", "")
        if match["project"]:
            if authorization.removeprefix("Bearer ") not in self.issued:
                return 401, error_body(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        elif not self.api_key or seen.headers.get("x-goog-api-key") != self.api_key:
            return 401, error_body(401, "UNAUTHENTICATED", "API keys are not supported by this API.")
        if self.faults:
            return self.faults.pop(0)
        model, method = match["model"], match["method"]
        if method == "predict":  # Imagen
            return 200, {"predictions": [{"mimeType": "image/jpeg", "bytesBase64Encoded": JPEG_BASE64}]}
        if method == "countTokens":
            return 200, {"totalTokens": 13, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 13}]}
        if method == "streamGenerateContent":
            return 200, stream_chunks(["Paris is the ", "capital of France."], model)
        return 200, answer("The capital of France is Paris.\n", model)


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _verified_claims(assertion: str) -> dict[str, Any] | None:
    """The claims of an RS256 JWT signed with the service account's key, or None."""
    try:
        header, payload, signature = assertion.split(".")
        _KEY.public_key().verify(
            _b64(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
        )
        claims: dict[str, Any] = json.loads(_b64(payload))
    except Exception:
        return None
    return claims


def _handler(server: VertexServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a stalled client cannot hold the handler thread

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            seen = Seen("POST", parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()},
                        self.rfile.read(length))
            server.requests.append(seen)
            status, body = server.token(seen) if parts.path == "/token" else server.vertex(seen)
            if isinstance(body, bytes):
                self._send(status, body, "text/event-stream")
            else:
                self._send(status, json.dumps(body).encode(), "application/json; charset=UTF-8")

        def _send(self, status: int, content: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    return Handler
