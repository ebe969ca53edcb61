"""Pure request mappers: llm-core requests → keyword arguments of the openai SDK calls.

One mapper (:func:`map_chat`) builds every Responses API call — chat, completion, tools, vision,
documents, structured output, streaming, batch lines and the decision fallback — so the rules live
once: ``store=False`` always, system text → ``instructions``, messages → input items
(here), tools and JSON formats (:mod:`core_openai_plugin.schemas`). Nothing here imports the SDK;
the provider passes the result to ``client.responses.create``, ``embeddings.create``,
``images.generate`` / ``images.edit`` and ``decisions.create``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core_openai_plugin.builtin import builtin_tools, includes
from core_openai_plugin.models import fact
from core_openai_plugin.schemas import function_tool, mentions_json, text_format, tool_choice
from llm_core.config import check_names
from llm_core.errors import InvalidInputError
from llm_core.media import format_of, sniff_mime
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart, split_system
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest, ThinkingOptions
from llm_core.specs import ModelInfo

PROVIDER = "openai"
#: Metadata keys under which parsed responses keep items for stateless replay: reasoning items;
#: other output items (built-in tool runs, as sent) and the order of both (their ids).
REASONING_ITEMS = "reasoning_items"
OUTPUT_ITEMS = "output_items"
OUTPUT_ORDER = "output_order"
ENCRYPTED_REASONING = "reasoning.encrypted_content"

#: Request options sent as they are (per call, or as provider defaults).
PASSTHROUGH_OPTIONS = frozenset(
    {
        "parallel_tool_calls",
        "service_tier",
        "safety_identifier",
        "prompt_cache_key",
        "metadata",
        "truncation",
        "max_tool_calls",
        "top_logprobs",
        "extra_body",
        "extra_headers",
        "extra_query",
    }
)
#: Request options the mapper interprets.
MAPPED_OPTIONS = frozenset({"verbosity", "image_detail"})
CHAT_OPTIONS = PASSTHROUGH_OPTIONS | MAPPED_OPTIONS
#: Sampling options the Responses API does not have (name → what it is), refused before sending.
REFUSED_SAMPLING = {"stop": "stop sequences"}
EMBEDDING_OPTIONS = frozenset({"encoding_format", "user", "extra_body", "extra_headers", "extra_query"})
IMAGE_OPTIONS = frozenset(
    {
        "background",
        "moderation",
        "output_compression",
        "input_fidelity",
        "safety_identifier",
        "user",
        "extra_body",
        "extra_headers",
        "extra_query",
    }
)

_SIZES = {"1:1": "1024x1024", "3:2": "1536x1024", "2:3": "1024x1536"}
_IMAGE_FORMATS = {"png": "png", "jpeg": "jpeg", "webp": "webp"}


def check_options(options: Mapping[str, Any], known: frozenset[str], what: str) -> None:
    """Refuse options the call does not know (typos would otherwise be silently dropped)."""
    check_names(options, known, what=f"{what} option", where=" for OpenAI", provider=PROVIDER, error=InvalidInputError)


def passthrough(payload: dict[str, Any], options: Mapping[str, Any], names: frozenset[str]) -> None:
    for name in sorted(names & set(options)):
        if options[name] is not None:
            payload[name] = options[name]


# --- Responses API ---------------------------------------------------------------------------


def map_chat(request: ChatRequest, model: ModelInfo | None, *, strict_sampling: bool = True) -> dict[str, Any]:
    """Keyword arguments of ``responses.create`` for ``request``.

    ``model`` is the catalogue entry (``None`` for a model the catalogue does not know: then no
    family rule is assumed). ``request.options`` holds per-call options (see ``CHAT_OPTIONS``).
    Optional fields are sent only when they carry a value.
    """
    options = request.options
    check_options(options, CHAT_OPTIONS, "chat")
    instructions, turns = split_system(request.messages)
    payload: dict[str, Any] = {
        "model": request.model,
        "input": chat_input(turns, detail=options.get("image_detail") or "auto"),
        "store": False,
    }
    if instructions:
        payload["instructions"] = instructions
    reasoning_model = fact(model, "reasoning") is True
    _sampling(payload, request, reasoning_model and strict_sampling)
    for name, what in REFUSED_SAMPLING.items():
        if getattr(request, name):
            raise InvalidInputError(f"the OpenAI Responses API has no {what}: remove {name}=...", provider=PROVIDER)
    if request.max_tokens is not None:
        payload["max_output_tokens"] = request.max_tokens
    reasoning = reasoning_config(request.thinking)
    if reasoning:
        payload["reasoning"] = reasoning
    include = [ENCRYPTED_REASONING] if reasoning_model or (model is None and request.thinking is not None) else []
    include += includes(request)
    if include:
        payload["include"] = include
    tools = [function_tool(tool) for tool in request.tools or ()] + builtin_tools(request, reasoning)
    if tools:
        payload["tools"] = tools
    if request.tool_choice is not None:
        payload["tool_choice"] = tool_choice(request.tool_choice, request.tools or ())
    text: dict[str, Any] = {}
    if options.get("verbosity") is not None:
        text["verbosity"] = options["verbosity"]
    if request.json_mode:
        text["format"] = text_format(request.response_schema)
        if text["format"]["type"] == "json_object" and not mentions_json(payload):
            # JSON mode requires the word "JSON" in the input; say it when the caller did not
            payload["instructions"] = "\n\n".join(filter(None, [instructions, "Answer in JSON."]))
    if text:
        payload["text"] = text
    passthrough(payload, options, PASSTHROUGH_OPTIONS)
    return payload


#: The keys of a :func:`map_chat` payload that ``responses.input_tokens.count`` takes (its
#: ``InputTokenCountParams``, and the SDK's per-call ``extra_*``): what the model reads as input.
COUNT_TOKENS_KEYS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "reasoning",
        "text",
        "parallel_tool_calls",
        "truncation",
        "extra_body",
        "extra_headers",
        "extra_query",
    }
)


def map_count_tokens(chat_payload: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``responses.input_tokens.count``: the chat payload of the same request
    (so the counted input is the one a chat would send), less what only shapes the answer or its
    bookkeeping (``store``, ``include``, sampling, ``max_output_tokens``, ``service_tier``, ...)."""
    return {key: value for key, value in chat_payload.items() if key in COUNT_TOKENS_KEYS}


def chat_input(turns: Sequence[ChatMessage], *, detail: str = "auto") -> str | list[dict[str, Any]]:
    """The ``input`` of a Responses call: a conversation of one plain user text is that text.

    The API documents a string ``input`` as "equivalent to a text input with the user role", so
    ``"Hi"`` and ``[{"role": "user", "content": "Hi"}]`` mean the same; the string is what the
    SDK's own README sends. Any other conversation becomes input items.
    """
    if len(turns) == 1:
        (only,) = turns
        if only.role is Role.USER and isinstance(only.content, str) and not only.model_extra:
            return only.content
    return input_items(turns, detail=detail)


def _sampling(payload: dict[str, Any], request: ChatRequest, refuse: bool) -> None:
    given = [name for name in ("temperature", "top_p") if getattr(request, name) is not None]
    if given and refuse:
        raise InvalidInputError(
            f"{request.model} is an OpenAI reasoning model and the API rejects {' and '.join(given)} for it; "
            "leave them out (steer with thinking={'level': ...}) or use a non-reasoning model such as gpt-4.1 "
            "(provider option strict_sampling=False sends them anyway)",
            provider=PROVIDER,
        )
    for name in given:
        payload[name] = getattr(request, name)  # 0.0 is a value, not "unset"


def reasoning_config(thinking: ThinkingOptions | None) -> dict[str, Any] | None:
    """``reasoning`` from thinking options: ``level`` → ``effort``; a summary when thoughts are wanted.

    ``budget`` has no OpenAI counterpart and is ignored (documented).
    """
    if thinking is None:
        return None
    config: dict[str, Any] = {}
    if thinking.level is not None:
        config["effort"] = thinking.level
    summary = thinking.summary or ("auto" if thinking.include_thoughts else None)
    if summary is not None:
        config["summary"] = summary
    return config or None


def input_items(turns: Sequence[ChatMessage], *, detail: str = "auto") -> list[dict[str, Any]]:
    """Conversation turns (system text already split off) → Responses input items. A custom
    tool's call goes back as ``custom_tool_call``, its result as ``custom_tool_call_output``."""
    items: list[dict[str, Any]] = []
    custom: set[str] = set()
    for index, message in enumerate(turns):
        if message.role is Role.USER:
            items.append(_message("user", user_content(message, detail), message))
        elif message.role is Role.ASSISTANT:
            items.extend(replay_items(message.metadata))
            text = _assistant_text(message, index)
            if text:
                items.append(_message("assistant", text, message))
            for call in message.tool_calls or ():
                if call.is_custom:
                    custom.add(call.id)
                    items.append(
                        {"type": "custom_tool_call", "call_id": call.id, "name": call.name, "input": call.input}
                    )
                    continue
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": _arguments(call.arguments, index),
                    }
                )
        elif message.role is Role.TOOL:
            if not message.tool_call_id:
                raise InvalidInputError(
                    f"message {index}: OpenAI needs the tool_call_id of the call this result answers",
                    provider=PROVIDER,
                )
            kind = "custom_tool_call_output" if message.tool_call_id in custom else "function_call_output"
            items.append({"type": kind, "call_id": message.tool_call_id, "output": message.text})
    return items


def _arguments(arguments: Mapping[str, Any], index: int) -> str:
    """A replayed call's arguments as JSON text; ``NaN``/``Infinity`` have no JSON form."""
    try:
        return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        message = f"message {index}: tool call arguments are not JSON: {exc}"
        raise InvalidInputError(message, provider=PROVIDER) from None


def _message(role: str, content: str | list[dict[str, Any]], message: ChatMessage) -> dict[str, Any]:
    item: dict[str, Any] = {"role": role, "content": content}
    # extra keys of plain mappings (e.g. an assistant ``phase``) are provider-specific: keep them
    item.update(message.model_extra or {})
    return item


def _assistant_text(message: ChatMessage, index: int) -> str:
    if any(not isinstance(part, TextPart) for part in message.parts):
        raise InvalidInputError(f"message {index}: assistant turns can only hold text", provider=PROVIDER)
    return message.text


def user_content(message: ChatMessage, detail: str = "auto") -> str | list[dict[str, Any]]:
    """A user turn's content: a plain string, or typed parts for images and documents."""
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "input_image", "image_url": image_url(part), "detail": detail})
        else:
            parts.append(input_file(part))
    return parts


def _mime(part: ImagePart | DocumentPart, fallback: str) -> str:
    mime = part.mime_type or (sniff_mime(part.data) if part.data is not None else None) or fallback
    return "image/jpeg" if mime.lower() == "image/jpg" else mime


def image_url(part: ImagePart) -> str:
    """An image part as a URL: its own http(s) URL, or a base64 ``data:`` URL."""
    if part.url is not None:
        return part.url
    return f"data:{_mime(part, 'image/png')};base64,{part.base64()}"


def input_file(part: DocumentPart) -> dict[str, Any]:
    """A document part as an ``input_file`` item (inline base64 ``file_data`` or ``file_url``)."""
    if part.url is not None:
        return {"type": "input_file", "file_url": part.url}
    mime = _mime(part, "application/pdf")
    name = part.name or f"document.{format_of(mime)}"
    return {"type": "input_file", "filename": name, "file_data": f"data:{mime};base64,{part.base64()}"}


def replay_items(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What an assistant turn's metadata holds for replay (``store=False``: the API keeps
    nothing): its reasoning items and its other output items (built-in tool runs), in the order
    the answer gave them."""
    reasoning = replay_reasoning(metadata.get(REASONING_ITEMS))
    others = metadata.get(OUTPUT_ITEMS) or []
    if not isinstance(others, list) or not all(isinstance(item, Mapping) for item in others):
        raise InvalidInputError(f"metadata[{OUTPUT_ITEMS!r}] must be a list of output items", provider=PROVIDER)
    replayed = reasoning + [dict(item) for item in others]
    order = metadata.get(OUTPUT_ORDER)
    if isinstance(order, list):
        position = {item_id: place for place, item_id in enumerate(order)}
        replayed.sort(key=lambda item: position.get(item.get("id"), len(position)))  # stable: unknown ids last
    return replayed


def replay_reasoning(items: object) -> list[dict[str, Any]]:
    """Reasoning items saved in an assistant turn's metadata, ready to send back (``store=False``)."""
    if not items:
        return []
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise InvalidInputError(f"metadata[{REASONING_ITEMS!r}] must be a list of reasoning items", provider=PROVIDER)
    replay: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") != "reasoning" or not item.get("id"):
            raise InvalidInputError("a replayed reasoning item needs type 'reasoning' and its id", provider=PROVIDER)
        kept = {key: item[key] for key in ("type", "id", "summary", "content", "encrypted_content") if key in item}
        kept.setdefault("summary", [])
        replay.append(kept)
    return replay


# --- Embeddings ------------------------------------------------------------------------------


def map_embedding(request: EmbeddingRequest, model: ModelInfo | None) -> dict[str, Any]:
    """Keyword arguments of ``embeddings.create``. ``task_type`` has no OpenAI counterpart (ignored)."""
    check_options(request.options, EMBEDDING_OPTIONS, "embedding")
    payload: dict[str, Any] = {"model": request.model, "input": list(request.inputs)}
    if request.dimensions is not None:
        if fact(model, "dimensions", True) is False:
            raise InvalidInputError(f"{request.model} has a fixed size: leave dimensions out", provider=PROVIDER)
        limit = fact(model, "max_dimensions")
        if limit is not None and request.dimensions > limit:
            raise InvalidInputError(
                f"{request.model} gives at most {limit} dimensions, not {request.dimensions}", provider=PROVIDER
            )
        payload["dimensions"] = request.dimensions
    encoding = request.options.get("encoding_format")
    if encoding not in (None, "float", "base64"):
        raise InvalidInputError("encoding_format must be 'float' or 'base64'", provider=PROVIDER)
    passthrough(payload, request.options, EMBEDDING_OPTIONS)
    return payload


# --- Images ----------------------------------------------------------------------------------


def map_image(request: ImageRequest, model: ModelInfo | None) -> dict[str, Any]:
    """Keyword arguments of ``images.generate``, or of ``images.edit`` when input images are given
    (then the payload carries ``image``: a list of ``(filename, bytes, mime_type)`` files)."""
    check_options(request.options, IMAGE_OPTIONS, "image")
    payload: dict[str, Any] = {"model": request.model, "prompt": request.prompt}
    if request.input_images:
        payload["image"] = [
            (f"image-{index}.{format_of(part.mime_type or 'image/png')}", part.data, part.mime_type)
            for index, part in enumerate(request.input_images, start=1)
        ]
    size = request.size or (_aspect_size(request.aspect_ratio) if request.aspect_ratio else None)
    if size is not None:
        payload["size"] = size
    if request.quality is not None:
        payload["quality"] = request.quality
    output_format = _IMAGE_FORMATS.get(format_of(request.mime_type))
    if output_format is None:
        raise InvalidInputError(f"OpenAI images come as PNG, JPEG or WebP, not {request.mime_type}", provider=PROVIDER)
    if fact(model, "gpt_image", request.model.startswith("gpt-image")):
        payload["output_format"] = output_format
    else:  # DALL·E-style models on compatible servers answer with URLs unless asked for base64
        payload["response_format"] = "b64_json"
    passthrough(payload, request.options, IMAGE_OPTIONS)
    return payload


def _aspect_size(ratio: str) -> str:
    size = _SIZES.get(ratio.replace(" ", ""))
    if size is None:
        raise InvalidInputError(
            f"OpenAI image sizes cover the aspect ratios {', '.join(_SIZES)}, not {ratio!r}; "
            "or pass size='WIDTHxHEIGHT'",
            provider=PROVIDER,
        )
    return size
