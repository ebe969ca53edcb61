"""A 127.0.0.1 server that plays the OpenAI Batch API and Gemini batch mode (and the single calls
local mode makes), for the real SDKs pointed at it with ``base_url``.

Where each shape comes from (nothing here is invented):

- OpenAI upload: ``POST /v1/files`` multipart (``openai/resources/files.py``), answered with a
  ``FileObject`` (``openai/types/file_object.py``: id, bytes, created_at, filename, object,
  purpose, status).
- OpenAI job: ``POST /v1/batches`` / ``GET /v1/batches/{id}`` / ``POST /v1/batches/{id}/cancel`` /
  ``GET /v1/batches`` (``openai/resources/batches.py``), answered with ``Batch``
  (``openai/types/batch.py``, ``batch_request_counts.py``, ``batch_error.py``): status
  validating → in_progress → finalizing → completed | failed | expired, cancelling → cancelled.
- OpenAI result files: ``GET /v1/files/{id}/content``; each line a ``BatchRequestOutput`` of the
  OpenAPI spec (``id``, ``custom_id``, ``response`` {``status_code``, ``request_id``, ``body``},
  ``error`` {``code``, ``message``}); the bodies are ``openai.types.responses.Response`` and
  ``CreateEmbeddingResponse`` as the single calls return them; an expired request's error code
  is ``batch_expired``.
- Gemini job: ``POST /{version}/models/{model}:batchGenerateContent`` and
  ``:asyncBatchEmbedContent``, ``GET /{version}/batches/{id}``, ``POST .../batches/{id}:cancel``,
  ``GET /{version}/batches`` (``google/genai/batches.py``: the request bodies of
  ``_CreateBatchJobParameters_to_mldev`` / ``_CreateEmbeddingsBatchJobParameters_to_mldev``, the
  answers read by ``_BatchJob_from_mldev``, ``_ListBatchJobsResponse_from_mldev`` and
  ``t_recv_batch_job_destination``): ``{"name": "batches/…", "metadata": {"state":
  "BATCH_STATE_…", "displayName", "model", "createTime", "output": {"inlinedResponses":
  {"inlinedResponses": [{"response": GenerateContentResponse | {"embedding": …}, "metadata"} |
  {"error": JobError}]}}}}`` (``types.BatchJob``, ``InlinedResponse``, ``JobError``,
  ``InlinedEmbedContentResponse``, ``SingleEmbedContentResponse``).
- Gemini input and output files (upload, create with a file, download, the lines): see
  ``mock_gemini_files``.

Each item's answer echoes its prompt (``echo: <text>``), so a test can check every result is
the right one. A prompt containing ``FAIL`` fails alone (HTTP 400 / RPC code 3). ``outcome``
decides how a job ends: completed, failed, expired (the second half of the items gets no answer)
or cancelled (likewise). Every loop is bounded: the server stops with the ``with`` block.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.batch import mock_gemini_files as gfiles

HOST = "127.0.0.1"
GEMINI_STATES = {
    "queued": "BATCH_STATE_PENDING",
    "running": "BATCH_STATE_RUNNING",
    "completed": "BATCH_STATE_SUCCEEDED",
    "failed": "BATCH_STATE_FAILED",
    "expired": "BATCH_STATE_EXPIRED",
    "cancelled": "BATCH_STATE_CANCELLED",
}


def last_text(value: Any) -> str:
    """The last string under a ``text`` or ``content`` key (or a bare input string)."""
    if isinstance(value, str):
        return value
    found = ""
    if isinstance(value, list):
        for entry in value:
            found = last_text(entry) or found
    elif isinstance(value, dict):
        for key in ("request", "input", "contents", "content", "parts", "text"):
            if key in value:
                found = last_text(value[key]) or found
    return found


def openai_response(model: str, text: str) -> dict[str, Any]:
    """A ``Response`` as ``POST /v1/responses`` returns it (fields of openai.types.responses.Response)."""
    return {
        "id": "resp_68c2c1c09c8c81a1b2e3f4a5b6c7d8e9",
        "object": "response",
        "created_at": 1757604033,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": model,
        "output": [
            {
                "id": "msg_68c2c1c1d2e381a1a0b1c2d3e4f5a6b7",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
            }
        ],
        "parallel_tool_calls": True,
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
        "metadata": {},
    }


def json_answer(text: str, schema: Any) -> str:
    """A JSON answer filling ``schema``: the first of an enum, the prompt for a string, 0 for a
    number; ``{"echo": <prompt>}`` without a schema."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not properties:
        return json.dumps({"echo": text})
    values: dict[str, Any] = {}
    for key, spec in properties.items():
        if spec.get("enum"):
            values[key] = spec["enum"][0]
        elif spec.get("type") in ("integer", "number", "INTEGER", "NUMBER"):
            values[key] = 0
        else:
            values[key] = text
    return json.dumps(values)


def answer_text(body: dict[str, Any]) -> str:
    """``echo: <prompt>``, or JSON when the request asks for it (OpenAI ``text.format``, Gemini
    ``generationConfig.responseMimeType``)."""
    text = last_text(body)
    fmt = (body.get("text") or {}).get("format") or {}
    if fmt.get("type") in ("json_schema", "json_object"):
        return json_answer(text, fmt.get("schema"))
    request = body.get("request") or body
    # inlined requests arrive in lowerCamelCase (the SDK's), file lines with the proto names
    config = request.get("generationConfig") or request.get("generation_config") or {}
    if (config.get("responseMimeType") or config.get("response_mime_type")) == "application/json":
        schema = config.get("responseJsonSchema") or config.get("response_json_schema") or config.get("responseSchema")
        return json_answer(text, schema)
    return "echo: " + text


def vector(text: str) -> list[float]:
    return [float(len(text)), 1.0, 0.5]


def openai_embeddings(model: str, inputs: list[str]) -> dict[str, Any]:
    """A ``CreateEmbeddingResponse`` (openai.types.create_embedding_response)."""
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(inputs)],
        "model": model,
        "usage": {"prompt_tokens": 4 * len(inputs), "total_tokens": 4 * len(inputs)},
    }


def gemini_response(model: str, text: str) -> dict[str, Any]:
    """A ``GenerateContentResponse`` on the wire (camelCase, as generateContent returns it)."""
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
        "responseId": "bzlXaa_EE_aHqtsPi_zw8Ao",
    }


@dataclass
class Job:
    provider: str  # "openai" or "gemini"
    id: str
    kind: str  # "generate" or "embeddings"
    model: str
    tag: str
    requests: list[dict[str, Any]]
    endpoint: str = ""
    input_file_id: str = ""
    source: str = "inlined"  # Gemini: "inlined" or "file"
    polls: int = 0
    state: str = "queued"
    output_file_id: str | None = None
    error_file_id: str | None = None
    created_at: int = field(default_factory=lambda: int(time.time()))


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client killed mid-request (what the resume tests do) is not a server failure."""


class BatchServer:
    """``with BatchServer(outcome="completed") as server: server.url``; ``server.jobs`` and the
    counters (``creates``, ``downloads``) show what the clients did. ``pause(point, hook)``
    calls ``hook`` (e.g. to kill a client) when ``point`` is reached: ``"create"`` (a job was
    created), ``"poll"`` (a status request), ``"download"`` (half an output file was sent),
    ``"single"`` (the 30th single call)."""

    def __init__(self, *, outcome: str = "completed", polls: int = 2) -> None:
        self.outcome = outcome
        self.polls = polls
        self.jobs: dict[str, Job] = {}
        self.files: dict[str, bytes] = {}
        self.creates = 0
        self.uploads = 0
        self.downloads: list[str] = []
        self.single_calls = 0
        self.hooks: dict[str, Callable[[], None]] = {}
        self.upload_sessions: dict[str, gfiles.Upload] = {}
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{HOST}:{self._server.server_address[1]}"

    def pause(self, point: str, hook: Callable[[], None]) -> None:
        self.hooks[point] = hook

    def _fire(self, point: str) -> None:
        hook = self.hooks.pop(point, None)
        if hook is not None:
            hook()

    def __enter__(self) -> BatchServer:
        server = _QuietServer((HOST, 0), _Handler)
        server.batch = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- lifecycle ----------------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{len(self.jobs) + len(self.files) + 1:06d}"

    def advance(self, job: Job) -> None:
        """One status request moves a job one step: running (``polls`` times), then final."""
        if job.state in ("completed", "failed", "expired", "cancelled"):
            return
        job.polls += 1
        if job.state == "cancelling":
            self.finish(job, "cancelled")
        elif job.polls > self.polls:
            self.finish(job, self.outcome)
        else:
            job.state = "running"

    def answered(self, job: Job) -> int:
        """How many of the job's requests got an answer (expired/cancelled: the first half)."""
        if job.state == "failed":
            return 0
        return len(job.requests) if job.state == "completed" else len(job.requests) // 2

    def finish(self, job: Job, state: str) -> None:
        job.state = state
        if job.provider == "gemini" and job.source == "file" and state != "failed":
            lines = []
            for line in job.requests[: self.answered(job)]:
                text = last_text(line["request"])
                if job.kind == "embeddings":
                    answer: Any = {"embedding": {"values": vector(text)}, "tokenCount": "4"}
                else:
                    answer = gemini_response(job.model, answer_text(line))
                lines.append(gfiles.output_line(line, "FAIL" in text, answer))
            job.output_file_id = "files/batch-" + job.id.removeprefix("batches/")
            self.files[job.output_file_id] = "".join(line + "\n" for line in lines).encode()
        if job.provider == "openai" and state != "failed":
            ok, bad = [], []
            for index, line in enumerate(job.requests):
                if index >= self.answered(job):
                    if state == "expired":
                        bad.append(
                            _openai_line(
                                line,
                                None,
                                {
                                    "code": "batch_expired",
                                    "message": "This request could not be executed before the completion window "
                                    "expired.",
                                },
                            )
                        )
                    continue
                body = line["body"]
                if "FAIL" in last_text(body):
                    error = {
                        "message": "Invalid prompt",
                        "type": "invalid_request_error",
                        "param": "input",
                        "code": "invalid_value",
                    }
                    bad.append(
                        _openai_line(
                            line, {"status_code": 400, "request_id": f"req_{index}", "body": {"error": error}}, None
                        )
                    )
                elif job.kind == "embeddings":
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    answer = openai_embeddings(body["model"], inputs)
                    ok.append(
                        _openai_line(line, {"status_code": 200, "request_id": f"req_{index}", "body": answer}, None)
                    )
                else:
                    answer = openai_response(body["model"], answer_text(body))
                    ok.append(
                        _openai_line(line, {"status_code": 200, "request_id": f"req_{index}", "body": answer}, None)
                    )
            if ok:
                job.output_file_id = self.store("\n".join(ok).encode() + b"\n")
            if bad:
                job.error_file_id = self.store("\n".join(bad).encode() + b"\n")

    def store(self, data: bytes) -> str:
        file_id = self.new_id("file-")
        self.files[file_id] = data
        return file_id

    # -- OpenAI documents ----------------------------------------------------------------

    def openai_batch(self, job: Job) -> dict[str, Any]:
        status = {"queued": "validating", "running": "in_progress", "cancelling": "cancelling"}.get(
            job.state, job.state
        )
        total = len(job.requests)
        done = self.answered(job) if job.state in ("completed", "expired", "cancelled") else 0
        failed = sum(1 for r in job.requests[:done] if "FAIL" in last_text(r["body"]))
        document: dict[str, Any] = {
            "id": job.id,
            "object": "batch",
            "endpoint": job.endpoint,
            "input_file_id": job.input_file_id,
            "completion_window": "24h",
            "status": status,
            "created_at": job.created_at,
            "output_file_id": job.output_file_id,
            "error_file_id": job.error_file_id,
            "request_counts": {
                "total": total,
                "completed": done - failed,
                "failed": failed + (total - done if job.state == "expired" else 0),
            },
            "metadata": {"llm_core_tag": job.tag},
        }
        if job.state == "failed":
            document["errors"] = {
                "object": "list",
                "data": [
                    {"code": "invalid_request", "line": 1, "message": "The batch input file is invalid.", "param": None}
                ],
            }
            document["failed_at"] = job.created_at
        return document

    # -- Gemini documents ----------------------------------------------------------------

    def gemini_batch(self, job: Job) -> dict[str, Any]:
        state = GEMINI_STATES.get(job.state, "BATCH_STATE_RUNNING")
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{job.model}",
            "displayName": job.tag,
            "createTime": "2026-12-01T10:00:00.000000Z",
            "updateTime": "2026-12-01T10:00:05.000000Z",
            "state": state,
        }
        if job.source == "file" and job.output_file_id is not None:
            metadata["output"] = {"responsesFile": job.output_file_id}
            metadata["endTime"] = "2026-12-01T10:05:00.000000Z"
        elif job.state in ("completed", "expired", "cancelled") and job.source == "inlined":
            responses = []
            for index, request in enumerate(job.requests[: self.answered(job)]):
                text = last_text(request)
                if "FAIL" in text:
                    responses.append({"error": {"code": 3, "message": "Request contains an invalid argument."}})
                elif job.kind == "embeddings":
                    responses.append({"response": {"embedding": {"values": vector(text)}, "tokenCount": "4"}})
                else:
                    entry: dict[str, Any] = {"response": gemini_response(job.model, answer_text(request))}
                    if request.get("metadata"):
                        entry["metadata"] = request["metadata"]
                    responses.append(entry)
                del index
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
            metadata["endTime"] = "2026-12-01T10:05:00.000000Z"
        return {"name": job.id, "metadata": metadata}


def _openai_line(request: dict[str, Any], response: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    return json.dumps(
        {
            "id": f"batch_req_{request['custom_id']}",
            "custom_id": request["custom_id"],
            "response": response,
            "error": error,
        }
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    @property
    def batch(self) -> BatchServer:
        return self.server.batch  # type: ignore[attr-defined,no-any-return]

    def _send(
        self, status: int, document: Any, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        data = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self) -> None:
        self._route("GET", b"")

    def do_POST(self) -> None:
        self._route("POST", self._body())

    def _route(self, method: str, body: bytes) -> None:
        path = self.path.split("?", 1)[0]
        server = self.batch
        with server.lock:
            reply = self._dispatch(server, method, path, body)
        if reply is None:
            return
        self._send(*reply)

    def _dispatch(self, server: BatchServer, method: str, path: str, body: bytes) -> tuple[Any, ...] | None:
        if method == "POST" and path.startswith(gfiles.UPLOAD_PATH):  # upload chunks carry no key header
            return self._gemini_upload(server, body)
        if self.headers.get("x-goog-api-key") is None:  # the OpenAI SDK sends a bearer token instead
            return self._openai(server, method, path, body)
        match = re.match(r"^/v1(?:beta)?/(.*)$", path)
        if match:
            return self._gemini(server, method, match.group(1), body)
        return 404, {"error": {"message": f"no route {path}"}}

    # -- OpenAI routes -------------------------------------------------------------------

    def _openai(self, server: BatchServer, method: str, path: str, body: bytes) -> tuple[Any, ...] | None:
        if method == "POST" and path == "/v1/files":
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body
            )
            data = b""
            for part in message.iter_parts():
                if part.get_param("name", header="content-disposition") == "file":
                    data = part.get_payload(decode=True) or b""
            server.uploads += 1
            file_id = server.store(data)
            return 200, {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": 1764583200,
                "filename": "batch.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        if method == "POST" and path == "/v1/batches":
            args = json.loads(body)
            lines = [json.loads(line) for line in server.files[args["input_file_id"]].splitlines() if line.strip()]
            kind = "embeddings" if args["endpoint"] == "/v1/embeddings" else "generate"
            job = Job(
                "openai",
                server.new_id("batch_"),
                kind,
                lines[0]["body"]["model"],
                args["metadata"]["llm_core_tag"],
                lines,
                endpoint=args["endpoint"],
                input_file_id=args["input_file_id"],
            )
            server.jobs[job.id] = job
            server.creates += 1
            server._fire("create")
            return 200, server.openai_batch(job)
        if method == "GET" and path == "/v1/batches":
            data = [server.openai_batch(j) for j in reversed(server.jobs.values()) if j.provider == "openai"]
            return 200, {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": False,
            }
        match = re.match(r"^/v1/batches/([^/]+)(/cancel)?$", path)
        if match:
            job = server.jobs[match.group(1)]
            if match.group(2):
                job.state = "cancelling"
            else:
                server._fire("poll")
                server.advance(job)
            return 200, server.openai_batch(job)
        match = re.match(r"^/v1/files/([^/]+)/content$", path)
        if match:
            server.downloads.append(match.group(1))
            return self._download(server, server.files[match.group(1)])
        if method == "POST" and path == "/v1/responses":
            server.single_calls += 1
            if server.single_calls == 30:
                server._fire("single")
            args = json.loads(body)
            return 200, openai_response(args["model"], answer_text(args))
        if method == "POST" and path == "/v1/embeddings":
            server.single_calls += 1
            args = json.loads(body)
            inputs = args["input"] if isinstance(args["input"], list) else [args["input"]]
            return 200, openai_embeddings(args["model"], inputs)
        return 404, {
            "error": {"message": f"no route {path}", "type": "invalid_request_error", "code": None, "param": None}
        }

    def _download(self, server: BatchServer, data: bytes) -> tuple[Any, ...] | None:
        """The file, in two halves when a ``download`` pause is set (its hook runs in between)."""
        hook = server.hooks.pop("download", None)
        if hook is None:
            return 200, data, "application/octet-stream"
        lines = data.splitlines(keepends=True)
        first = b"".join(lines[: len(lines) // 2])
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(first)
        self.wfile.flush()
        time.sleep(0.5)  # the client writes what it has, then the hook stops it
        hook()
        self.close_connection = True
        return None

    # -- Gemini routes -------------------------------------------------------------------

    def _gemini_upload(self, server: BatchServer, body: bytes) -> tuple[Any, ...]:
        command = self.headers.get("X-Goog-Upload-Command", "")
        if command == "start":
            session = f"session{len(server.upload_sessions) + 1:04d}"
            upload, headers = gfiles.start_upload(self.headers, body, session, server.url)
            server.upload_sessions[session] = upload
            return 200, b"", "application/json", headers
        session = re.search(r"upload_id=([^&]+)", self.path)
        upload = server.upload_sessions[session.group(1)] if session else None
        if upload is None or int(self.headers.get("X-Goog-Upload-Offset") or -1) != len(upload.data):
            return 400, {"error": {"code": 400, "message": "bad upload offset", "status": "INVALID_ARGUMENT"}}
        upload.data.extend(body)
        if "finalize" not in command:
            return 200, b"", "application/json", {"x-goog-upload-status": "active"}
        name = f"files/upload{len(server.files) + 1:06d}"
        server.files[name] = bytes(upload.data)
        server.uploads += 1
        document = gfiles.file_document(name, upload.display_name, upload.mime_type, bytes(upload.data), server.url)
        return 200, {"file": document}, "application/json", {"x-goog-upload-status": "final"}

    def _gemini(self, server: BatchServer, method: str, path: str, body: bytes) -> tuple[Any, ...] | None:
        match = re.match(r"^models/([^:]+):(batchGenerateContent|asyncBatchEmbedContent)$", path)
        if match and method == "POST":
            args = json.loads(body)["batch"]
            kind = "embeddings" if match.group(2) == "asyncBatchEmbedContent" else "generate"
            source = args["inputConfig"]
            file_name = source.get("fileName") or source.get("file_name")
            if file_name:
                requests = gfiles.input_lines(server.files[file_name])
            else:
                requests = source["requests"]["requests"]
                if kind == "embeddings":
                    requests = [r["request"] for r in requests]
            job = Job("gemini", server.new_id("batches/"), kind, match.group(1), args.get("displayName", ""), requests)
            job.source = "file" if file_name else "inlined"
            server.jobs[job.id] = job
            server.creates += 1
            server._fire("create")
            return 200, server.gemini_batch(job)
        if match and method == "POST":
            return 404, {}
        if method == "POST" and path.startswith("models/") and path.endswith(":generateContent"):
            server.single_calls += 1
            model = path.removeprefix("models/").removesuffix(":generateContent")
            return 200, gemini_response(model, answer_text(json.loads(body)))
        match = re.match(r"^(files/[^/:]+):download$", path)
        if match and method == "GET" and match.group(1) in server.files:
            server.downloads.append(match.group(1))
            return self._download(server, server.files[match.group(1)])
        if method == "GET" and path == "batches":
            return 200, {
                "operations": [server.gemini_batch(j) for j in reversed(server.jobs.values()) if j.provider == "gemini"]
            }
        match = re.match(r"^(batches/[^/:]+)(:cancel)?$", path)
        if match and match.group(1) in server.jobs:
            job = server.jobs[match.group(1)]
            if match.group(2):
                job.state = "cancelling"
                return 200, {}
            server._fire("poll")
            server.advance(job)
            return 200, server.gemini_batch(job)
        return 404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}}
