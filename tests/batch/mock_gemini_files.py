"""The Gemini Files API half of the loopback batch server: the resumable upload of a batch input
file, the ``File`` it becomes, and a file job's output lines (used by ``mock_server``).

Where each shape comes from (nothing here is invented):

- Upload start: ``POST /upload/{version}/files`` with ``X-Goog-Upload-Protocol: resumable``,
  ``X-Goog-Upload-Command: start``, ``X-Goog-Upload-Header-Content-Length`` / ``-Content-Type``
  and the body ``{"file": {"mimeType", "sizeBytes", "displayName"}}`` (``google/genai/files.py``
  ``Files.upload`` / ``_create``, ``_extra_utils.prepare_resumable_upload``). The SDK needs only
  the ``x-goog-upload-url`` header of the answer (``Files.upload`` raises without it); the URL
  is the service's form, ``/upload/{version}/files?upload_id=…&upload_protocol=resumable`` (the
  SDK moves it to its own base URL's host, ``BaseApiClient._upload_fd``).
- Upload chunks: ``POST <upload url>`` with ``X-Goog-Upload-Command: upload`` (``upload,
  finalize`` for the last chunk) and ``X-Goog-Upload-Offset``, and no API key header (the SDK
  sends the upload headers alone). Each answer carries ``x-goog-upload-status`` (``active``,
  then ``final``, which the SDK requires); the final answer's body is ``{"file": File}``
  (``return_file.json['file']``).
- ``File``: ``name`` (``files/…``), ``displayName``, ``mimeType``, ``sizeBytes`` (int64 as a
  string), ``createTime``, ``updateTime``, ``expirationTime`` (48 hours later), ``sha256Hash``,
  ``uri``, ``state: ACTIVE``, ``source: UPLOADED`` (``types.File``; the cookbook notebook
  google-gemini/cookbook ``quickstarts/Batch_mode.ipynb`` prints one).
- Create with a file: ``batch.inputConfig.fileName`` (``_BatchJobSource_to_mldev``), or
  ``inputConfig.file_name`` for embeddings (``_EmbeddingsBatchJobSource_to_mldev`` writes the
  proto name); a finished file job's ``metadata.output.responsesFile`` names its output file
  (read as ``dest.file_name`` by ``_BatchJobDestination_from_mldev``), ``files/batch-<job id>``
  as the cookbook's jobs show.
- Download: ``GET /{version}/files/<name>:download?alt=media`` answers the file's bytes
  (``Files.download``).
- Output lines: ``{"key", "response": GenerateContentResponse}`` and, for embeddings,
  ``{"key", "response": {"embedding": {"values"}, "tokenCount"}}`` (the cookbook's output
  lines); a failed request ``{"key", "error": {"code", "message"}}``: a google.rpc ``Status``,
  the docs' "status object".
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

UPLOAD_PATH = "/upload/"


@dataclass
class Upload:
    """One resumable upload session."""

    display_name: str
    mime_type: str
    size: int
    data: bytearray = field(default_factory=bytearray)


def file_document(name: str, display_name: str, mime_type: str, data: bytes, base_url: str) -> dict[str, Any]:
    """A ``File`` as the Files API answers it."""
    return {
        "name": name,
        "displayName": display_name,
        "mimeType": mime_type,
        "sizeBytes": str(len(data)),
        "createTime": "2026-12-01T10:00:00.000000Z",
        "updateTime": "2026-12-01T10:00:00.000000Z",
        "expirationTime": "2026-12-03T10:00:00.000000Z",
        "sha256Hash": base64.b64encode(hashlib.sha256(data).hexdigest().encode()).decode(),
        "uri": f"{base_url}/v1beta/{name}",
        "state": "ACTIVE",
        "source": "UPLOADED",
    }


def start_upload(headers: Any, body: bytes, session: str, base_url: str) -> tuple[Upload, dict[str, str]]:
    """The session a ``start`` command opens, and the headers of its answer."""
    described = json.loads(body or b"{}").get("file") or {}
    upload = Upload(
        display_name=described.get("displayName", ""),
        mime_type=headers.get("X-Goog-Upload-Header-Content-Type") or described.get("mimeType", ""),
        size=int(headers.get("X-Goog-Upload-Header-Content-Length") or 0),
    )
    url = f"{base_url}/upload/v1beta/files?upload_id={session}&upload_protocol=resumable"
    return upload, {"x-goog-upload-url": url, "x-goog-upload-status": "active"}


def input_lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def output_line(line: dict[str, Any], failed: bool, answer: Any) -> str:
    """The output line of one input line (``answer``: the response the request gets)."""
    if failed:
        error = {"code": 3, "message": "Request contains an invalid argument."}
        return json.dumps({"key": line["key"], "error": error})
    return json.dumps({"response": answer, "key": line["key"]})
