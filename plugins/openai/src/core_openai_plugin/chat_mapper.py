"""The pure request mapper of the Chat Completions dialect: a :class:`ChatRequest` → keyword
arguments of ``client.chat.completions.create`` (the openai SDK's ``CompletionCreateParams``).

One mapper for chat, completion, tools, vision, documents, JSON answers, streams and the decision
fallback, as :func:`core_openai_plugin.request_mapper.map_chat` is for the Responses API. Tools and
JSON schemas are made by :mod:`core_openai_plugin.schemas` (the same strict-schema rules) and put
in the Chat Completions shapes. What a server does differently (its :class:`Quirks`) comes from the
endpoint's preset. Nothing here imports the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from core_openai_plugin.request_mapper import image_url
from core_openai_plugin.schemas import function_tool, text_format
from llm_core.builtin_tools import WebSearch
from llm_core.config import check_names
from llm_core.errors import InvalidInputError
from llm_core.media import format_of, sniff_mime
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart
from llm_core.requests import ChatRequest

#: Metadata key of an assistant answer: the reasoning fields a server sent with it
#: (``reasoning_content``, ``reasoning_details``, ``extra_content``), sent back with that turn
#: (DeepSeek requires ``reasoning_content`` in tool loops; OpenRouter takes ``reasoning_details``
#: back; Gemini's compatibility layer puts its thought signature in ``extra_content``).
REASONING_REPLAY = "reasoning_replay"
#: The reasoning fields of a message that go back to the server with its turn.
REPLAYED_FIELDS = ("reasoning_content", "reasoning_details", "extra_content")

#: Request fields of ``CompletionCreateParams`` sent as given (per call, or as endpoint defaults).
PASSTHROUGH_OPTIONS = frozenset(
    {
        "parallel_tool_calls",
        "seed",
        "user",
        "service_tier",
        "metadata",
        "logprobs",
        "top_logprobs",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "reasoning_effort",
        "extra_body",
        "extra_headers",
        "extra_query",
    }
)
#: Options the mapper interprets.
MAPPED_OPTIONS = frozenset({"image_detail"})
CHAT_OPTIONS = PASSTHROUGH_OPTIONS | MAPPED_OPTIONS


class Quirks(BaseModel):
    """What a Chat Completions server needs beyond the common request (from its preset).

    ``max_tokens_field``: ``max_completion_tokens`` (OpenAI, which refuses ``max_tokens`` for
    reasoning models) or ``max_tokens`` (what every compatible server reads).
    ``stream_usage``: send ``stream_options.include_usage`` (usage in the last chunk).
    ``json_schema``: the server honours ``response_format`` ``json_schema``; else a schema
    request is refused before sending. ``json_schema_with_tools``: it honours it together with
    tools. ``documents``: it reads ``file`` parts (PDFs). Each is also a setting of the endpoint
    (``[providers.NAME] json_schema_with_tools = false``), over its preset's value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_tokens_field: str = "max_tokens"
    stream_usage: bool = True
    json_schema: bool = True
    json_schema_with_tools: bool = True
    documents: bool = False


def map_chat_completion(request: ChatRequest, quirks: Quirks, *, endpoint: str) -> dict[str, Any]:
    """Keyword arguments of ``chat.completions.create`` for ``request`` (``stream=True`` and
    ``stream_options`` are added by the provider's stream send). ``endpoint`` names the provider in
    errors. Optional fields are sent only when they carry a value."""
    options = request.options
    check_names(
        options, CHAT_OPTIONS, what="chat option", where=f" for {endpoint}", provider=endpoint, error=InvalidInputError
    )
    detail = options.get("image_detail") or "auto"
    payload: dict[str, Any] = {
        "model": request.model,
        "messages": [
            message
            for index, turn in enumerate(request.messages)
            for message in _messages(turn, index, detail, quirks, endpoint)
        ],
    }
    for name in ("temperature", "top_p"):
        if getattr(request, name) is not None:
            payload[name] = getattr(request, name)  # 0.0 is a value
    if request.stop:
        payload["stop"] = list(request.stop)
    if request.max_tokens is not None:
        payload[quirks.max_tokens_field] = request.max_tokens
    if request.thinking is not None and request.thinking.level is not None:
        payload["reasoning_effort"] = request.thinking.level
    if request.tools:
        payload["tools"] = [_tool(function_tool(tool)) for tool in request.tools]
    if request.tool_choice is not None:
        payload["tool_choice"] = _tool_choice(request, endpoint)
    if request.builtin_tools:
        payload["web_search_options"] = web_search_options(request, endpoint)
    if request.json_mode:
        payload["response_format"] = _response_format(request, quirks, endpoint)
        if payload["response_format"]["type"] == "json_object" and not _mentions_json(payload["messages"]):
            # JSON mode requires the word "JSON" in the messages (OpenAI refuses the call without it)
            payload["messages"].insert(0, {"role": "system", "content": "Answer in JSON."})
    for name in sorted(PASSTHROUGH_OPTIONS & set(options)):
        if options[name] is not None:
            payload[name] = options[name]
    return payload


def web_search_options(request: ChatRequest, endpoint: str) -> dict[str, Any]:
    """``web_search_options``: the one built-in tool of the Chat Completions API (its search
    models, such as ``gpt-4o-search-preview``, search the web for every answer); any other tool,
    or a setting it has no field for, is refused before sending."""
    tools = request.builtin_tools or []
    other = [tool.type for tool in tools if not isinstance(tool, WebSearch)]
    if other:
        raise InvalidInputError(
            f"the Chat Completions API runs no {', '.join(other)} tool: use the Responses API for it",
            provider=endpoint,
        )
    (search,) = tools
    if isinstance(search, WebSearch) and search.allowed_domains:
        raise InvalidInputError("Chat Completions web search takes no allowed_domains", provider=endpoint)
    size = search.context_size if isinstance(search, WebSearch) else None
    return {"search_context_size": size} if size else {}


def _tool(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses function tool (``schemas.function_tool``) in the Chat Completions shape:
    ``{"type": "function", "function": {name, description, parameters, strict}}``."""
    return {"type": "function", "function": {key: value for key, value in spec.items() if key != "type"}}


def _tool_choice(request: ChatRequest, endpoint: str) -> str | dict[str, Any]:
    choice = request.tool_choice or "auto"
    if choice in ("auto", "none", "required"):
        return choice
    if choice not in {tool.name for tool in request.tools or ()}:
        raise InvalidInputError(
            f"tool_choice {choice!r} is neither auto, none, required nor one of the tools", provider=endpoint
        )
    return {"type": "function", "function": {"name": choice}}


def _response_format(request: ChatRequest, quirks: Quirks, endpoint: str) -> dict[str, Any]:
    """``response_format``: ``json_schema`` (name, schema, strict) for a schema, else ``json_object``."""
    text = text_format(request.response_schema)
    if text["type"] == "json_object":
        return text
    if not quirks.json_schema or (request.tools and not quirks.json_schema_with_tools):
        with_tools = " together with tools" if quirks.json_schema else ""
        raise InvalidInputError(
            f"{endpoint} does not honour a JSON schema{with_tools} (response_format json_schema): "
            "call generate_json without a schema (JSON mode), or without tools",
            provider=endpoint,
        )
    return {"type": "json_schema", "json_schema": {key: text[key] for key in ("name", "schema", "strict")}}


def _mentions_json(messages: Sequence[Mapping[str, Any]]) -> bool:
    for message in messages:
        content = message.get("content")
        parts = [{"text": content}] if isinstance(content, str) else content or []
        if any("json" in str(part.get("text", "")).lower() for part in parts):
            return True
    return False


def _messages(message: ChatMessage, index: int, detail: str, quirks: Quirks, endpoint: str) -> list[dict[str, Any]]:
    """One conversation turn as Chat Completions messages (a message's extra keys kept)."""
    extra = dict(message.model_extra or {})
    if message.role is Role.SYSTEM:
        return [{"role": "system", "content": message.text, **extra}]
    if message.role is Role.USER:
        return [{"role": "user", "content": _user_content(message, detail, quirks, endpoint), **extra}]
    if message.role is Role.TOOL:
        if not message.tool_call_id:
            raise InvalidInputError(
                f"message {index}: a tool result needs the tool_call_id of the call it answers", provider=endpoint
            )
        return [{"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text, **extra}]
    if any(not isinstance(part, TextPart) for part in message.parts):
        raise InvalidInputError(f"message {index}: assistant turns can only hold text", provider=endpoint)
    turn: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        turn["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments(call.arguments, index, endpoint)},
            }
            for call in message.tool_calls
        ]
    replay = message.metadata.get(REASONING_REPLAY)
    if isinstance(replay, Mapping):
        turn.update({name: replay[name] for name in REPLAYED_FIELDS if name in replay})
    turn.update(extra)
    return [turn]


def _arguments(arguments: Mapping[str, Any], index: int, endpoint: str) -> str:
    try:
        return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"message {index}: tool call arguments are not JSON: {exc}", provider=endpoint
        ) from None


def _user_content(message: ChatMessage, detail: str, quirks: Quirks, endpoint: str) -> str | list[dict[str, Any]]:
    """A user turn: a plain string, or ``text`` / ``image_url`` / ``file`` parts."""
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "image_url", "image_url": {"url": image_url(part), "detail": detail}})
        else:
            parts.append(_file(part, quirks, endpoint))
    return parts


def _file(part: DocumentPart, quirks: Quirks, endpoint: str) -> dict[str, Any]:
    """A document as a ``file`` part (``{"file": {"filename", "file_data"}}``, inline base64 only:
    the Chat Completions API takes no document URL)."""
    if not quirks.documents:
        raise InvalidInputError(f"{endpoint} does not read documents (file parts)", provider=endpoint)
    if part.url is not None:
        raise InvalidInputError(
            "the Chat Completions API takes documents inline, not by URL: pass the bytes", provider=endpoint
        )
    mime = part.mime_type or (sniff_mime(part.data) if part.data is not None else None) or "application/pdf"
    name = part.name or f"document.{format_of(mime)}"
    return {"type": "file", "file": {"filename": name, "file_data": f"data:{mime};base64,{part.base64()}"}}
