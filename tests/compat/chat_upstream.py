"""An emulated OpenAI-compatible server that implements only the Chat Completions API, served by
the loopback fault server (``tests.reliability.fault_server``).

Shapes (nothing invented): ``ChatCompletion`` / ``ChatCompletionChunk`` / ``Model`` /
``CreateEmbeddingResponse`` of the installed openai SDK (``openai/types/chat/chat_completion.py``,
``chat_completion_chunk.py``, ``model.py``, ``create_embedding_response.py``), laid out as the
recorded traffic shows them: an Ollama answer with ``message.reasoning`` and usage without
details (reference recording 14), a stream of ``tool_calls`` argument pieces keyed by ``index``,
``finish_reason`` in its own chunk, then a usage chunk with ``choices: []`` and ``[DONE]``
(recording 2), DeepSeek's ``reasoning_content`` deltas (recording 15). Paths it does not serve
(``/v1/responses``) get Go's ``404 page not found``, as Ollama answers an unknown route.

Every answer echoes the last user text (``echo: <text>``), with a ``reasoning`` field as Ollama
sends one for a reasoning model. With tools and no tool result yet it
calls the first tool (arguments: ``{"city": "Paris"}``); after a tool result it answers with the
result. A ``response_format`` gets a JSON object (valid for the schema: see :func:`sample`).
"""

from __future__ import annotations

import json
from typing import Any

from tests.reliability.fault_server import Behaviour, Request, json_response, respond, sse
from tests.reliability.upstreams import words

MODEL = "llama3.2"
CREATED = 1795939200
CITY = {"city": "Paris", "name": "Paris", "country": "France", "population": 2102650}
NOT_FOUND = respond(404, "404 page not found", content_type="text/plain; charset=utf-8")


def usage(prompt: int = 11, completion: int = 7) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def last_user_text(body: Any) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content or [] if part.get("type") == "text")
    return ""


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message the server gives for a request (see the module docstring)."""
    messages = body.get("messages") or []
    if body.get("tools") and messages[-1].get("role") != "tool" and body.get("tool_choice") != "none":
        name = body["tools"][0]["function"]["name"]
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_emulated_0", "type": "function",
                            "function": {"name": name, "arguments": json.dumps({"city": "Paris"})}}],
        }  # fmt: skip
    if messages and messages[-1].get("role") == "tool":
        return {"role": "assistant", "content": f"The tool said: {messages[-1]['content']}"}
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["schema"]
        return {"role": "assistant", "content": json.dumps(sample(schema, "", schema))}
    if response_format:
        return {"role": "assistant", "content": json.dumps(CITY)}
    text = last_user_text(body)
    return {"role": "assistant", "content": f"echo: {text}", "reasoning": f"The user wrote {len(text)} characters."}


def sample(schema: dict[str, Any], name: str, root: dict[str, Any]) -> Any:
    """A value valid for ``schema`` (a property named in :data:`CITY` takes its value there)."""
    if "$ref" in schema:
        target: Any = root
        for key in schema["$ref"].removeprefix("#/").split("/"):
            target = target[key]
        return sample(target, name, root)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return sample(schema[union][0], name, root)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {key: sample(value, key, root) for key, value in schema.get("properties", {}).items()}
    if kind == "array":
        return [sample(schema["items"], name, root)] if "items" in schema else []
    if kind in ("integer", "number"):
        return CITY.get(name, schema.get("minimum", 1))
    return {"boolean": True, "null": None}.get(kind, CITY.get(name, "Paris"))


def completion(body: dict[str, Any]) -> dict[str, Any]:
    message = answer(body)
    return {
        "id": "chatcmpl-emulated",
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model", MODEL),
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": usage(),
    }  # fmt: skip


def chunk(body: dict[str, Any], choices: list[dict[str, Any]], **more: Any) -> str:
    data = {"id": "chatcmpl-emulated", "object": "chat.completion.chunk", "created": CREATED,
            "model": body.get("model", MODEL), "choices": choices, **more}  # fmt: skip
    return f"data: {json.dumps(data)}\n\n"


def stream_events(body: dict[str, Any], *, finish: bool = True) -> list[str]:
    """The SSE blocks of a streamed answer (``finish=False``: no ``finish_reason`` chunk, no
    usage, no ``[DONE]``: a stream some server cut)."""
    message = answer(body)
    events = [chunk(body, [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    for call_index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": call_index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}  # fmt: skip
        events.append(chunk(body, [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]))
        arguments = call["function"]["arguments"]
        for piece in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
            delta = {"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}
            events.append(chunk(body, [{"index": 0, "delta": delta, "finish_reason": None}]))
    if message.get("reasoning"):  # as Ollama streams it: ``delta.reasoning`` before the content
        events.append(chunk(body, [{"index": 0, "delta": {"reasoning": message["reasoning"]}, "finish_reason": None}]))
    for word in words(message["content"]) if message.get("content") else []:
        events.append(chunk(body, [{"index": 0, "delta": {"content": word}, "finish_reason": None}]))
    if not finish:
        return events
    reason = "tool_calls" if message.get("tool_calls") else "stop"
    events.append(chunk(body, [{"index": 0, "delta": {}, "finish_reason": reason}]))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(chunk(body, [], usage=usage()))
    events.append("data: [DONE]\n\n")
    return events


def models() -> dict[str, Any]:
    return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": CREATED, "owned_by": "library"}]}


def embeddings(body: dict[str, Any]) -> dict[str, Any]:
    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [{"object": "embedding", "index": i, "embedding": [0.1 * (i + 1), 0.2, 0.3]} for i in range(len(inputs))]
    return {"object": "list", "data": data, "model": body.get("model", MODEL), "usage": usage(len(inputs), 0)}


def chat_completions_server(request: Request) -> Behaviour:
    """The fallback of a :class:`~tests.reliability.fault_server.FaultServer`: a server that
    implements only the Chat Completions API (and the model list and embeddings)."""
    if request.method == "GET" and request.path == "/v1/models":
        return json_response(200, models())
    if request.method == "POST" and request.path == "/v1/embeddings":
        return json_response(200, embeddings(request.json))
    if request.method == "POST" and request.path == "/v1/chat/completions":
        body = request.json
        return sse(stream_events(body)) if body.get("stream") else json_response(200, completion(body))
    return NOT_FOUND
