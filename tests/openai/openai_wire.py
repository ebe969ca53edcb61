"""Builders of OpenAI wire bodies for authoring cassettes: Responses objects, SSE event streams,
embeddings, images, decisions, model lists and error bodies.

The shapes follow the installed ``openai`` SDK types and real traffic recorded against the API
(fields the real API sends that the SDK does not type, such as
``obfuscation`` on deltas, are included; fields it omits, such as ``cache_write_tokens``, are not).
Bodies may echo the captured request, as the real API does (``instructions``, ``tools``, ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CREATED = 1795939200  # 2026-11-29

#: A 1x1 PNG, a minimal baseline JPEG and a one-page PDF: small real files for media tests.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
JPEG = bytes.fromhex(
    "ffd8ffdb004300030202020203020202030303030406040404040408060605060908"
    "0a0a090809090a0c0f0c0a0b0e0b09090d110d0e0f101011100a0c12131210130f101010"
    "ffc9000b080001000101011100ffcc000600101005ffda0008010100003f00d2cf20ffd9"
)
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<<>>>>endobj\n"
    b"4 0 obj<</Length 44>>stream\nBT /F1 12 Tf 20 50 Td (Q3 revenue grew 12%) Tj ET\nendstream endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)
SNAPSHOTS = {
    "gpt-4.1": "gpt-4.1-2025-04-14",
    "gpt-5.4-mini": "gpt-5.4-mini-2026-03-17",
    "gpt-5.4": "gpt-5.4-2026-03-05",
}
REASONING_MODELS = ("gpt-5", "gpt-6", "o3", "o4")


def ident(prefix: str, *seed: object) -> str:
    digest = hashlib.sha256("/".join(map(str, seed)).encode()).hexdigest()
    return f"{prefix}_{digest[:48]}"


def encrypted(*seed: object) -> str:
    """An opaque encrypted-reasoning token (Fernet-like, as OpenAI sends; not a key)."""
    digest = b"".join(hashlib.sha256(f"{seed}/{i}".encode()).digest() for i in range(6))
    return "gAAAAABp" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def usage(input_tokens: int, output_tokens: int, reasoning: int = 0, cached: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


# --- output items (with their streaming chunks) ---------------------------------------------


@dataclass
class Msg:
    """An assistant message; ``chunks`` are the streamed deltas (joined for the final text)."""

    chunks: Sequence[str]
    refusal: bool = False

    @property
    def text(self) -> str:
        return "".join(self.chunks)


@dataclass
class Think:
    """A reasoning item: summary parts (each a list of deltas) and its encrypted content."""

    parts: Sequence[Sequence[str]]
    seed: str = "reasoning"


@dataclass
class Call:
    """A function call; ``chunks`` are the streamed argument deltas."""

    name: str
    chunks: Sequence[str]
    call_seed: str = ""


@dataclass
class Answer:
    """What the model answers: items, usage, and how the response ends."""

    items: Sequence[Msg | Think | Call]
    usage: dict[str, Any]
    status: str = "completed"
    incomplete_reason: str | None = None
    error: dict[str, Any] | None = None
    seed: str = ""
    ids: dict[int, str] = field(default_factory=dict)


def _item_id(prefix: str, answer: Answer, index: int) -> str:
    return ident(prefix, answer.seed, index)


def final_item(item: Msg | Think | Call, answer: Answer, index: int) -> dict[str, Any]:
    incomplete = answer.status == "incomplete" and index == len(answer.items) - 1
    if isinstance(item, Msg):
        part = ({"type": "refusal", "refusal": item.text} if item.refusal
                else {"type": "output_text", "annotations": [], "logprobs": [], "text": item.text})
        return {"id": _item_id("msg", answer, index), "type": "message",
                "status": "incomplete" if incomplete else "completed", "content": [part], "role": "assistant"}
    if isinstance(item, Think):
        return {"id": _item_id("rs", answer, index), "type": "reasoning",
                "encrypted_content": encrypted(answer.seed, item.seed, index),
                "summary": [{"type": "summary_text", "text": "".join(p)} for p in item.parts]}
    return {"id": _item_id("fc", answer, index), "type": "function_call", "status": "completed",
            "arguments": "".join(item.chunks), "call_id": ident("call", answer.seed, index, item.call_seed)[:29],
            "name": item.name}


def response_body(request: Mapping[str, Any], answer: Answer, *, final: bool = True) -> dict[str, Any]:
    """A Responses API object answering ``request`` (echoing its settings as the API does)."""
    model = str(request.get("model", ""))
    reasoning_model = model.startswith(REASONING_MODELS)
    asked = request.get("reasoning") or {}
    summary = asked.get("summary")
    text_config = dict(request.get("text") or {})
    text_config.setdefault("format", {"type": "text"})
    text_config.setdefault("verbosity", "medium")
    status = answer.status if final else "in_progress"
    return {
        "id": ident("resp", answer.seed),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "completed_at": CREATED + 2 if final and status == "completed" else None,
        "error": answer.error if final else None,
        "incomplete_details": ({"reason": answer.incomplete_reason}
                               if final and answer.status == "incomplete" else None),
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": SNAPSHOTS.get(model, model),
        "output": [final_item(item, answer, i) for i, item in enumerate(answer.items)] if final else [],
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": ({"effort": asked.get("effort", "medium"), "summary": "detailed" if summary == "auto" else summary}
                      if reasoning_model else {"effort": None, "summary": None}),
        "safety_identifier": None,
        "service_tier": "default",
        "store": request.get("store", True),
        "temperature": request.get("temperature", 1.0),
        "text": text_config,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": [{"description": None, **tool} for tool in request.get("tools", [])],
        "top_logprobs": 0,
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": answer.usage if final else None,
        "user": None,
        "metadata": {},
    }


# --- server-sent events ----------------------------------------------------------------------


class _Events:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, **fields, "sequence_number": len(self.events)})

    def sse(self) -> str:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in self.events)


def _obfuscation(text: str) -> str:
    """Padding characters, as the API adds to deltas (deterministic here)."""
    return hashlib.sha256(text.encode()).hexdigest()[: max(2, 12 - len(text))]


def stream_body(request: Mapping[str, Any], answer: Answer, *, cut_after: int | None = None,
                error_event: dict[str, Any] | None = None) -> str:
    """The SSE stream of ``answer``: created, in_progress, per item added/deltas/done, then
    ``response.completed`` (``incomplete``/``failed`` by ``answer.status``). ``cut_after`` stops the
    stream after that many items without a terminal event; ``error_event`` ends it with an ``error``."""
    ev = _Events()
    ev.add("response.created", response=response_body(request, answer, final=False))
    ev.add("response.in_progress", response=response_body(request, answer, final=False))
    for index, item in enumerate(answer.items):
        if cut_after is not None and index >= cut_after:
            return ev.sse()
        done = final_item(item, answer, index)
        if isinstance(item, Msg):
            _message_events(ev, item, done, index)
        elif isinstance(item, Think):
            _reasoning_events(ev, item, done, index)
        else:
            _call_events(ev, item, done, index)
    if error_event is not None:
        ev.add("error", **error_event)
        return ev.sse()
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete",
                "failed": "response.failed"}[answer.status]
    ev.add(terminal, response=response_body(request, answer))
    return ev.sse()


def _message_events(ev: _Events, item: Msg, done: dict[str, Any], index: int) -> None:
    item_id = done["id"]
    ev.add("response.output_item.added", item={**done, "status": "in_progress", "content": []}, output_index=index)
    empty = {"type": "refusal", "refusal": ""} if item.refusal else {
        "type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    ev.add("response.content_part.added", content_index=0, item_id=item_id, output_index=index, part=empty)
    for chunk in item.chunks:
        if item.refusal:
            ev.add("response.refusal.delta", content_index=0, delta=chunk, item_id=item_id, output_index=index)
        else:
            ev.add("response.output_text.delta", content_index=0, delta=chunk, item_id=item_id, logprobs=[],
                   obfuscation=_obfuscation(chunk), output_index=index)
    if item.refusal:
        ev.add("response.refusal.done", content_index=0, item_id=item_id, output_index=index, refusal=item.text)
    else:
        ev.add("response.output_text.done", content_index=0, item_id=item_id, logprobs=[], output_index=index,
               text=item.text)
    ev.add("response.content_part.done", content_index=0, item_id=item_id, output_index=index,
           part=done["content"][0])
    ev.add("response.output_item.done", item=done, output_index=index)


def _reasoning_events(ev: _Events, item: Think, done: dict[str, Any], index: int) -> None:
    item_id = done["id"]
    partial = done["encrypted_content"][:24]  # incomplete while in progress (see the SDK's docs)
    ev.add("response.output_item.added", item={**done, "encrypted_content": partial, "summary": []},
           output_index=index)
    for summary_index, part in enumerate(item.parts):
        ev.add("response.reasoning_summary_part.added", item_id=item_id, output_index=index,
               part={"type": "summary_text", "text": ""}, summary_index=summary_index)
        for chunk in part:
            ev.add("response.reasoning_summary_text.delta", delta=chunk, item_id=item_id,
                   obfuscation=_obfuscation(chunk), output_index=index, summary_index=summary_index)
        text = "".join(part)
        ev.add("response.reasoning_summary_text.done", item_id=item_id, output_index=index,
               summary_index=summary_index, text=text)
        ev.add("response.reasoning_summary_part.done", item_id=item_id, output_index=index,
               part={"type": "summary_text", "text": text}, summary_index=summary_index)
    ev.add("response.output_item.done", item=done, output_index=index)


def _call_events(ev: _Events, item: Call, done: dict[str, Any], index: int) -> None:
    item_id = done["id"]
    ev.add("response.output_item.added", item={**done, "status": "in_progress", "arguments": ""},
           output_index=index)
    for chunk in item.chunks:
        ev.add("response.function_call_arguments.delta", delta=chunk, item_id=item_id,
               obfuscation=_obfuscation(chunk), output_index=index)
    ev.add("response.function_call_arguments.done", arguments=done["arguments"], item_id=item_id, output_index=index)
    ev.add("response.output_item.done", item=done, output_index=index)


# --- other endpoints -------------------------------------------------------------------------


def float32_base64(values: Sequence[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def embeddings_body(model: str, vectors: Sequence[Sequence[float]], tokens: int, *, as_base64: bool) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i,
                  "embedding": float32_base64(v) if as_base64 else list(v)} for i, v in enumerate(vectors)],
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def images_body(image: bytes, *, output_format: str, size: str, quality: str,
                tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "created": CREATED,
        "background": "opaque",
        "data": [{"b64_json": base64.b64encode(image).decode("ascii")}],
        "output_format": output_format,
        "quality": quality,
        "size": size,
        "usage": {"input_tokens": tokens[0], "input_tokens_details": {"image_tokens": 0, "text_tokens": tokens[0]},
                  "output_tokens": tokens[1], "total_tokens": sum(tokens),
                  "output_tokens_details": {"image_tokens": tokens[1], "text_tokens": 0}},
    }


def decision_body(model: str, answers: Sequence[dict[str, Any]], tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "answers": list(answers),
        "model": model,
        "usage": {"input_tokens": tokens[0], "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
                  "output_tokens": tokens[1], "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": sum(tokens)},
    }


def models_body(ids: Sequence[str]) -> dict[str, Any]:
    return {"object": "list",
            "data": [{"id": i, "object": "model", "created": CREATED - 86400 * n, "owned_by": "system"}
                     for n, i in enumerate(ids)]}


def error_body(message: str, *, kind: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
