"""Emulated upstreams: what the Gemini and OpenAI services answer, served by the fault server.

Bodies follow the shapes the real services return (the SDKs' response types and
recordings of real traffic): a Gemini ``generateContent`` response, its ``?alt=sse`` stream, ``google.rpc``
error bodies with ``RetryInfo``; an OpenAI Responses object, its ``event:``/``data:`` stream,
error bodies, embeddings (float or base64 as asked), images, decisions and model lists.

Answers echo the caller's last user text (``echo: <text>``), so that concurrent calls can
prove that no result crossed to another call.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Sequence
from email.utils import formatdate
from typing import Any

from tests.reliability.fault_server import Behaviour, Request, json_response, sse

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def http_date(seconds_from_now: float) -> str:
    """An HTTP-date ``seconds_from_now`` in the future (``Retry-After`` date form)."""
    import time

    return formatdate(time.time() + seconds_from_now, usegmt=True)


def words(text: str) -> list[str]:
    """``"a b c"`` → ``["a", " b", " c"]`` (how services chunk a streamed answer)."""
    pieces = text.split(" ")
    return [pieces[0], *(" " + p for p in pieces[1:])]


# =========================================================================================
# Gemini (google-genai, API v1)
# =========================================================================================

GEMINI_MODEL = "gemini-2.5-flash"


def gemini_last_user_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    for content in reversed(body.get("contents") or []):
        if content.get("role", "user") == "user":
            texts = [p["text"] for p in content.get("parts", []) if isinstance(p.get("text"), str)]
            if texts:
                return "".join(texts)
    return ""


def gemini_usage(prompt: int = 7, output: int = 5, thoughts: int | None = None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output + (thoughts or 0),
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def gemini_content(
    parts: Sequence[dict[str, Any]], *, finish: str | None = "STOP", usage: bool = True
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": GEMINI_MODEL,
        "responseId": "rel-test-response",
    }
    if usage:
        body["usageMetadata"] = gemini_usage()
    return body


def gemini_text(text: str) -> dict[str, Any]:
    return gemini_content([{"text": text}])


def gemini_sse_events(pieces: Sequence[str]) -> list[str]:
    """One ``data:`` event per piece; the last carries finishReason and the usage."""
    events = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        body = gemini_content([{"text": piece}], finish="STOP" if last else None, usage=last)
        events.append(f"data: {json.dumps(body)}\r\n\r\n")
    return events


def gemini_error(code: int, status: str, message: str, details: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return {"error": error}


GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def gemini_status(code: int, *, headers: dict[str, str] | None = None, retry_delay: str | None = None) -> Behaviour:
    details: list[dict[str, Any]] = []
    if retry_delay is not None:
        details = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests"}],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ]
    body = gemini_error(code, GEMINI_STATUS.get(code, "UNKNOWN"), f"test fault {code}", details)
    return json_response(code, body, headers=headers)


def gemini_upstream(request: Request) -> Behaviour:
    """Answer any Gemini call the plugin makes."""
    body = request.json if request.body else None
    path = request.path
    if path.endswith(":streamGenerateContent"):
        return sse(gemini_sse_events(words("echo: " + gemini_last_user_text(body))))
    if path.endswith(":generateContent"):
        if isinstance(body, dict) and "IMAGE" in json.dumps(body.get("generationConfig", {})):
            image = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG_1X1).decode()}}
            return json_response(200, gemini_content([image]))
        config = body.get("generationConfig", {}) if isinstance(body, dict) else {}
        if config.get("responseMimeType") == "application/json":
            return json_response(200, gemini_text(json.dumps(_json_answer(config))))
        return json_response(200, gemini_text("echo: " + gemini_last_user_text(body)))
    if path.endswith(":batchEmbedContents"):
        count = len(body.get("requests", [])) if isinstance(body, dict) else 1
        return json_response(200, {"embeddings": [{"values": [0.1, 0.2, 0.3, 0.4]} for _ in range(count)]})
    if path.endswith(":embedContent"):
        contents = body.get("content") if isinstance(body, dict) else None
        count = len(contents) if isinstance(contents, list) else 1
        return json_response(200, {"embeddings": [{"values": [0.1, 0.2, 0.3, 0.4]} for _ in range(count)]})
    if path.endswith(":predict"):
        prediction = {"bytesBase64Encoded": base64.b64encode(PNG_1X1).decode(), "mimeType": "image/png"}
        return json_response(200, {"predictions": [prediction]})
    if path.endswith("/decisions"):
        return json_response(200, gemini_decision(body))
    if request.method == "GET" and path.rstrip("/").endswith("/models"):
        return json_response(200, {"models": [{"name": f"models/{GEMINI_MODEL}", "displayName": "Gemini 2.5 Flash"}]})
    return json_response(404, gemini_error(404, "NOT_FOUND", f"no emulated route for {request.method} {path}"))


def _json_answer(config: dict[str, Any]) -> Any:
    """A JSON answer that satisfies a simple response schema (strings, numbers, booleans)."""
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return _sample(schema)


def _sample(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: _sample(sub) for name, sub in props.items()}
    if kind == "array":
        return [_sample(schema.get("items", {}))]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    return "echo"


def gemini_decision(body: Any) -> dict[str, Any]:
    """A Gemini native decision answer for every asked question (``noul``/``choice``/``score``)."""
    questions = body.get("questions", {}) if isinstance(body, dict) else {}
    answers: dict[str, Any] = {}
    for key, question in questions.items():
        kind = question.get("type") or next(iter(k for k in ("noul", "choice", "score") if k in question), "noul")
        criteria = question.get("criteria")
        if kind == "choice":
            options = list(criteria) if isinstance(criteria, dict) else list(question.get("options", []))
            share = 1.0 / max(1, len(options))
            answers[key] = {
                "type": "choice",
                "choice": options[0] if options else "",
                "confidence": share,
                "probabilities": dict.fromkeys(options, share),
            }
        elif kind == "score":
            levels = criteria if isinstance(criteria, list) else []
            share = 1.0 / max(1, len(levels))
            answers[key] = {
                "type": "score",
                "score": 0,
                "confidence": share,
                "probabilities": {str(i): share for i in range(len(levels))},
            }
        else:
            answers[key] = {"type": "noul", "noul": 0.5, "confidence": 0.5}
    return {"answers": answers, "usage": {"inputTokens": 5, "outputTokens": 1}}


# =========================================================================================
# OpenAI (Responses, Embeddings, Images, Decisions, Models)
# =========================================================================================

OPENAI_MODEL = "gpt-4o-mini"


def openai_last_user_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    items = body.get("input")
    if isinstance(items, str):
        return items
    for item in reversed(items or []):
        if item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        texts = [c.get("text", "") for c in content or [] if c.get("type") == "input_text"]
        if texts:
            return "".join(texts)
    return ""


def openai_usage(prompt: int = 7, output: int = 5, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + output,
    }


def openai_message(text: str, item_id: str = "msg_rel_1", status: str = "completed") -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def openai_response(
    output: Sequence[dict[str, Any]], *, status: str = "completed", model: str = OPENAI_MODEL, usage: bool = True
) -> dict[str, Any]:
    return {
        "id": "resp_rel_1",
        "object": "response",
        "created_at": 1764400000,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": list(output),
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": openai_usage() if usage else None,
        "metadata": {},
    }


def openai_text(text: str) -> dict[str, Any]:
    return openai_response([openai_message(text)])


def _event(kind: str, sequence: int, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': sequence, **fields})}\n\n"


def openai_sse_events(pieces: Sequence[str], *, error: dict[str, Any] | None = None, error_after: int = 0) -> list[str]:
    """A Responses stream: created, in_progress, the message item, one ``output_text.delta`` per
    piece, the done events and ``response.completed``. With ``error``, an ``error`` event is
    placed after ``error_after`` deltas and the stream stops there."""
    text = "".join(pieces)
    item_id = "msg_rel_1"
    seq = iter(range(10_000))
    in_progress = openai_response([], status="in_progress", usage=False)
    events = [
        _event("response.created", next(seq), response=in_progress),
        _event("response.in_progress", next(seq), response=in_progress),
        _event(
            "response.output_item.added",
            next(seq),
            output_index=0,
            item={"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []},
        ),
        _event(
            "response.content_part.added",
            next(seq),
            item_id=item_id,
            output_index=0,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
        ),
    ]
    for index, piece in enumerate(pieces):
        if error is not None and index == error_after:
            events.append(_event("error", next(seq), **error))
            return events
        events.append(
            _event(
                "response.output_text.delta",
                next(seq),
                item_id=item_id,
                output_index=0,
                content_index=0,
                delta=piece,
                logprobs=[],
            )
        )
    if error is not None:
        events.append(_event("error", next(seq), **error))
        return events
    events += [
        _event(
            "response.output_text.done",
            next(seq),
            item_id=item_id,
            output_index=0,
            content_index=0,
            text=text,
            logprobs=[],
        ),
        _event(
            "response.content_part.done",
            next(seq),
            item_id=item_id,
            output_index=0,
            content_index=0,
            part={"type": "output_text", "text": text, "annotations": [], "logprobs": []},
        ),
        _event("response.output_item.done", next(seq), output_index=0, item=openai_message(text, item_id)),
        _event("response.completed", next(seq), response=openai_text(text)),
    ]
    return events


def openai_error(code: int, message: str, *, kind: str | None = None, error_code: str | None = None) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
             404: "invalid_request_error", 429: "requests"}
    codes = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
    return {
        "error": {
            "message": message,
            "type": kind or kinds.get(code, "server_error"),
            "param": None,
            "code": error_code or codes.get(code),
        }
    }


def openai_status(code: int, *, headers: dict[str, str] | None = None) -> Behaviour:
    return json_response(code, openai_error(code, f"test fault {code}"), headers=headers)


def openai_upstream(request: Request) -> Behaviour:
    """Answer any OpenAI call the plugin makes."""
    body = request.json if request.body else None
    path = request.path.rstrip("/")
    if path.endswith("/responses") and request.method == "POST":
        fmt = ((body or {}).get("text") or {}).get("format") or {}
        if fmt.get("type") in ("json_schema", "json_object"):
            text = json.dumps(_sample(fmt.get("schema") or {"type": "object", "properties": {"echo": {}}}))
        else:
            text = "echo: " + openai_last_user_text(body)
        if isinstance(body, dict) and body.get("stream"):
            return sse(openai_sse_events(words(text)))
        return json_response(200, openai_text(text))
    if path.endswith("/embeddings"):
        inputs = body.get("input") if isinstance(body, dict) else []
        count = 1 if isinstance(inputs, str) else len(inputs or [])
        vector = [0.1, 0.2, 0.3, 0.4]
        as_base64 = isinstance(body, dict) and body.get("encoding_format") == "base64"
        encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode() if as_base64 else vector
        return json_response(
            200,
            {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": encoded} for i in range(count)],
                "model": (body or {}).get("model", "text-embedding-3-small"),
                "usage": {"prompt_tokens": 3, "total_tokens": 3},
            },
        )
    if path.endswith(("/images/generations", "/images/edits")):
        return json_response(
            200,
            {
                "created": 1764400000,
                "data": [{"b64_json": base64.b64encode(PNG_1X1).decode()}],
                "output_format": "png",
                "usage": {
                    "input_tokens": 5,
                    "input_tokens_details": {"image_tokens": 0, "text_tokens": 5},
                    "output_tokens": 10,
                    "total_tokens": 15,
                },
            },
        )
    if path.endswith("/decisions"):
        return json_response(200, openai_decision(body))
    if path.endswith("/models") and request.method == "GET":
        return json_response(
            200,
            {
                "object": "list",
                "data": [{"id": OPENAI_MODEL, "object": "model", "created": 1700000000, "owned_by": "openai"}],
            },
        )
    return json_response(404, openai_error(404, f"no emulated route for {request.method} {path}"))


def openai_decision(body: Any) -> dict[str, Any]:
    questions = body.get("questions", []) if isinstance(body, dict) else []
    answers: list[dict[str, Any]] = []
    for question in questions:
        name = question.get("name")
        kind = question.get("type")
        if kind == "choice":
            values = [c.get("value") for c in question.get("choices", [])]
            share = 1.0 / max(1, len(values))
            answers.append(
                {
                    "type": "choice",
                    "name": name,
                    "choice": values[0],
                    "confidence": share,
                    "probabilities": [{"value": v, "probability": share} for v in values],
                }
            )
        elif kind == "score":
            levels = question.get("levels", [])
            share = 1.0 / max(1, len(levels))
            answers.append(
                {
                    "type": "score",
                    "name": name,
                    "score": 0,
                    "confidence": share,
                    "probabilities": [
                        {"value": i, "label": level.get("label", str(i)), "probability": share}
                        for i, level in enumerate(levels)
                    ],
                }
            )
        else:
            answers.append({"type": "predicate", "name": name, "probability": 0.5})
    return {
        "answers": answers,
        "model": (body or {}).get("model", OPENAI_MODEL),
        "usage": {
            "input_tokens": 5,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 6,
        },
    }

