"""Response bodies the loopback server sends, modelled on real Gemini and OpenAI traffic.

Shapes follow the reference recordings (pydantic-ai's cassettes of the real services) and the
installed SDK types (``google.genai.types.GenerateContentResponse``,
``openai.types.responses.Response`` and the ``response.*`` stream events): the same field names,
the optional fields the services really send, usage blocks, and the SSE framing each service uses
(Gemini: ``data: {...}`` blocks separated by CRLF CRLF; OpenAI: ``event:`` + ``data:`` lines).
Bodies are rendered once per model and cached; the server only copies bytes.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

ANSWER = (
    "A provider registry lets an application ask for what it needs, such as vision and "
    "streaming, and get back a provider that can do it. Plugins declare their capabilities "
    "up front, so choosing one costs nothing until the first real call."
)
PROMPT_TOKENS = 14
ANSWER_TOKENS = 41
THOUGHT_TOKENS = 0

#: Words a streamed answer cycles through (one or two words per delta, as real streams send).
_WORDS = ANSWER.split(" ")


def delta_texts(count: int) -> list[str]:
    """``count`` short text deltas (the first without a leading space, like a real stream)."""
    out = []
    for i in range(count):
        word = _WORDS[i % len(_WORDS)]
        out.append(word if i == 0 else " " + word)
    return out


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# -- Gemini (generativelanguage.googleapis.com, API version v1) ------------------------------


def _gemini_usage(candidates: int | None) -> dict[str, Any]:
    usage: dict[str, Any] = {"promptTokenCount": PROMPT_TOKENS}
    if candidates is not None:
        usage["candidatesTokenCount"] = candidates
    usage["totalTokenCount"] = PROMPT_TOKENS + (candidates or 0)
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": PROMPT_TOKENS}]
    return usage


@lru_cache(maxsize=32)
def gemini_generate(model: str) -> bytes:
    """``POST /v1/models/{model}:generateContent`` → one GenerateContentResponse."""
    return _dumps(
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": ANSWER}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": _gemini_usage(ANSWER_TOKENS),
            "modelVersion": model,
            "responseId": "bzlXaa_EE_aHqtsPi_zw8Ao",
        }
    )


@lru_cache(maxsize=32)
def gemini_stream_events(model: str, deltas: int) -> tuple[bytes, ...]:
    """``:streamGenerateContent?alt=sse`` → one ``data:`` block per chunk, each one text delta."""
    events = []
    texts = delta_texts(deltas)
    for index, text in enumerate(texts):
        last = index == len(texts) - 1
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if last:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        chunk = {
            "candidates": [candidate],
            "usageMetadata": _gemini_usage(deltas if last else None),
            "modelVersion": model,
            "responseId": "w1peaMz6INOvnvgPgYfPiQY",
        }
        events.append(b"data: " + _dumps(chunk) + b"\r\n\r\n")
    return tuple(events)


# -- OpenAI Responses API (POST /v1/responses) -------------------------------------------------

_RESPONSE_ID = "resp_68c2e8c147ac819491bcd667055eadbc02e845978fbbb592"
_MESSAGE_ID = "msg_68c2e8c26114819489dae5b59fceb7bf02e845978fbbb592"


def _openai_usage(output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": PROMPT_TOKENS,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": PROMPT_TOKENS + output_tokens,
    }


def _openai_response(model: str, *, status: str, text: str | None, output_tokens: int | None) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if text is not None:
        output.append(
            {
                "id": _MESSAGE_ID,
                "type": "message",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
                "role": "assistant",
            }
        )
    return {
        "id": _RESPONSE_ID,
        "object": "response",
        "created_at": 1757604033,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _openai_usage(output_tokens) if output_tokens is not None else None,
        "user": None,
        "metadata": {},
    }


@lru_cache(maxsize=32)
def openai_response(model: str) -> bytes:
    """``POST /v1/responses`` (``stream`` false) → one Response object."""
    return _dumps(_openai_response(model, status="completed", text=ANSWER, output_tokens=ANSWER_TOKENS))


@lru_cache(maxsize=32)
def openai_stream_events(model: str, deltas: int) -> tuple[bytes, ...]:
    """``POST /v1/responses`` (``stream`` true) → the event sequence of a text answer:
    created, in_progress, output_item.added, content_part.added, ``deltas`` times
    output_text.delta, output_text.done, content_part.done, output_item.done, completed."""
    texts = delta_texts(deltas)
    full = "".join(texts)
    seq = iter(range(1_000_000))
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": _openai_response(model, status="in_progress", text=None, output_tokens=None),
        },
        {
            "type": "response.in_progress",
            "sequence_number": next(seq),
            "response": _openai_response(model, status="in_progress", text=None, output_tokens=None),
        },
        {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": {"id": _MESSAGE_ID, "type": "message", "status": "in_progress", "content": [], "role": "assistant"},
        },
        {
            "type": "response.content_part.added",
            "sequence_number": next(seq),
            "item_id": _MESSAGE_ID,
            "output_index": 0,
            "content_index": 0,
            "part": part,
        },
    ]
    for text in texts:
        events.append(
            {
                "type": "response.output_text.delta",
                "sequence_number": next(seq),
                "item_id": _MESSAGE_ID,
                "output_index": 0,
                "content_index": 0,
                "delta": text,
                "logprobs": [],
            }
        )
    events += [
        {
            "type": "response.output_text.done",
            "sequence_number": next(seq),
            "item_id": _MESSAGE_ID,
            "output_index": 0,
            "content_index": 0,
            "text": full,
            "logprobs": [],
        },
        {
            "type": "response.content_part.done",
            "sequence_number": next(seq),
            "item_id": _MESSAGE_ID,
            "output_index": 0,
            "content_index": 0,
            "part": {**part, "text": full},
        },
        {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": {
                "id": _MESSAGE_ID,
                "type": "message",
                "status": "completed",
                "content": [{**part, "text": full}],
                "role": "assistant",
            },
        },
        {
            "type": "response.completed",
            "sequence_number": next(seq),
            "response": _openai_response(model, status="completed", text=full, output_tokens=deltas),
        },
    ]
    return tuple(b"event: " + e["type"].encode() + b"\ndata: " + _dumps(e) + b"\n\n" for e in events)


# -- OpenAI Chat Completions (POST /v1/chat/completions, as OpenAI and compatible servers answer) ---
# ``openai.types.chat.ChatCompletion`` / ``ChatCompletionChunk``, laid out as the reference
# recordings of api.openai.com show them: ``message`` with ``refusal`` and ``annotations``, usage
# with token details; a stream of ``data:`` chunks (the first with the role, one per delta, the
# ``finish_reason`` in a chunk of its own, then the usage chunk with ``choices: []``, then
# ``data: [DONE]``).

_CHAT_ID = "chatcmpl-BJjf61mLb9z5H45ClJzbx0UWKwjo1"


def _chat_usage(completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": completion_tokens,
        "total_tokens": PROMPT_TOKENS + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chunk(model: str, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    chunk = {
        "id": _CHAT_ID,
        "object": "chat.completion.chunk",
        "created": 1744043456,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_898ac29719",
        "choices": choices,
        "usage": usage,
    }
    return b"data: " + _dumps(chunk) + b"\n\n"


@lru_cache(maxsize=8)
def openai_chat_completion(model: str) -> bytes:
    """A ``ChatCompletion`` with :data:`ANSWER`."""
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER, "refusal": None, "annotations": []}
    return _dumps(
        {
            "id": _CHAT_ID,
            "object": "chat.completion",
            "created": 1744043456,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
            "usage": _chat_usage(ANSWER_TOKENS),
            "service_tier": "default",
            "system_fingerprint": "fp_898ac29719",
        }
    )


def openai_chat_stream_events(model: str, deltas: int) -> tuple[bytes, ...]:
    """A Chat Completions stream of ``deltas`` text deltas and the usage chunk."""
    first = {
        "index": 0,
        "delta": {"role": "assistant", "content": "", "refusal": None},
        "logprobs": None,
        "finish_reason": None,
    }
    texts = [
        _chunk(model, [{"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}])
        for text in delta_texts(deltas)
    ]
    done = _chunk(model, [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}])
    return (_chunk(model, [first]), *texts, done, _chunk(model, [], _chat_usage(deltas)), b"data: [DONE]\n\n")
