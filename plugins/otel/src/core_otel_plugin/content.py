"""Opt-in content capture: messages as the GenAI semantic conventions (v1.41) shape them.

Off unless the application opts in (``OtelObserver(capture_content=True)``, or the
instrumentations' switch ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``). Values follow
the conventions' JSON schemas (``gen-ai-input-messages.json``, ``gen-ai-output-messages.json``,
``gen-ai-system-instructions.json``, ``gen-ai-tool-definitions.json``), recorded on spans as
JSON strings, as the conventions allow where structured attributes are not supported.

Nothing binary goes into an attribute: inline images and documents become a part of type
``llm_core.omitted_blob`` with their modality, MIME type and size (the conventions' ``blob``
part would need the base64 bytes); a URL part keeps scheme, host and path only (a query string
may carry a signature). Message metadata (provider replay data), call options and settings are
never serialised.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

#: The content-capture switch of the OpenTelemetry GenAI instrumentations.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: Values that turn capture on: the old boolean, and the span modes of the newer enum
#: (``EVENT_ONLY`` and ``NO_CONTENT`` leave spans without content; this plugin emits no events).
CAPTURE_ON = frozenset({"true", "span_only", "span_and_event"})
#: llm-core finish reasons as the conventions' output schema names them.
FINISH_REASONS = {"tool_calls": "tool_call"}
#: The part type of binary content left out (not a conventions name).
OMITTED_BLOB = "llm_core.omitted_blob"


def capture_from_environment() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content on spans."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in CAPTURE_ON


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def request_attributes(request: Any) -> dict[str, str]:
    """``gen_ai.system_instructions``, ``gen_ai.input.messages`` and ``gen_ai.tool.definitions``
    of a chat-style request (other requests give none)."""
    messages = getattr(request, "messages", None)
    if not isinstance(messages, list):
        return {}
    system = [part for m in messages if _role(m) == "system" for part in _parts(m)]
    history = [_message(m) for m in messages if _role(m) != "system"]
    found = {"gen_ai.input.messages": dumps(history)}
    if system:
        found["gen_ai.system_instructions"] = dumps(system)
    # name and type only: the conventions advise against descriptions and schemas by default
    tools = [
        {"type": getattr(tool, "kind", "function"), "name": tool.name} for tool in getattr(request, "tools", None) or ()
    ]
    tools += [{"type": tool.type} for tool in getattr(request, "builtin_tools", None) or ()]  # run by the provider
    if tools:
        found["gen_ai.tool.definitions"] = dumps(tools)
    return found


def response_attributes(response: Any) -> dict[str, str]:
    """``gen_ai.output.messages`` of a chat-style response (one message: llm-core asks for one
    candidate); other responses give none."""
    if response is None or not hasattr(response, "content") or not hasattr(response, "finish_reason"):
        return {}
    parts: list[dict[str, Any]] = []
    if getattr(response, "thinking", None):
        parts.append({"type": "reasoning", "content": response.thinking})
    if response.content:
        parts.append({"type": "text", "content": response.content})
    parts.extend(_tool_call(call) for call in response.tool_calls or ())
    reason = FINISH_REASONS.get(response.finish_reason, response.finish_reason)
    return {"gen_ai.output.messages": dumps([{"role": "assistant", "parts": parts, "finish_reason": reason}])}


def tool_arguments(call: Any) -> str:
    return dumps(getattr(call, "arguments", {}))


def tool_result(text: str) -> str:
    """The tool's output as JSON: it is JSON already unless the tool returned plain text."""
    try:
        json.loads(text)
    except ValueError:
        return dumps(text)
    return text


def _role(message: Any) -> str:
    role = getattr(message, "role", "")
    return str(getattr(role, "value", role))


def _message(message: Any) -> dict[str, Any]:
    role = _role(message)
    parts = _parts(message)
    if role == "tool":
        parts = [{"type": "tool_call_response", "id": message.tool_call_id, "response": message.text}]
    parts.extend(_tool_call(call) for call in getattr(message, "tool_calls", None) or ())
    found: dict[str, Any] = {"role": role, "parts": parts}
    if getattr(message, "name", None) and role != "tool":
        found["name"] = message.name
    return found


def _parts(message: Any) -> list[dict[str, Any]]:
    return [_part(part) for part in _content(message)]


def _content(message: Any) -> Iterable[Any]:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return [_Text(content)] if content else []
    parts: Iterable[Any] = content
    return parts


class _Text:
    type = "text"

    def __init__(self, text: str) -> None:
        self.text = text


def _part(part: Any) -> dict[str, Any]:
    if part.type == "text":
        return {"type": "text", "content": part.text}
    modality = "image" if part.type == "image" else part.type
    mime = part.mime_type
    url = getattr(part, "url", None)
    if url and not url.lower().startswith("data:"):
        pieces = urlsplit(url)
        host = pieces.hostname or ""
        return {"type": "uri", "modality": modality, "mime_type": mime, "uri": f"{pieces.scheme}://{host}{pieces.path}"}
    size = part.size if part.data is not None else len(url or "")
    return {"type": OMITTED_BLOB, "modality": modality, "mime_type": mime, "size": size}


def _tool_call(call: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
