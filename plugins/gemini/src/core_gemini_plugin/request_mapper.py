"""Pure mapping of llm-core requests to google-genai call arguments.

Every function returns plain dicts in the shapes the SDK accepts (``ContentDict``,
``GenerateContentConfigDict`` …), so nothing here imports the SDK and the sync and async paths
send exactly the same request. Inputs are never mutated (SPEC §2.3).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from core_gemini_plugin.models import thinking_style
from llm_core.errors import InvalidInputError
from llm_core.media import sniff_mime
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart, split_system
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest, ThinkingOptions
from llm_core.tools import ToolSpec

PROVIDER = "gemini"
#: Gemini limits a whole request to 20 MB; inline bytes travel base64-encoded (4/3 larger).
MAX_INLINE_BYTES = 15 * 1024 * 1024

#: Extra ``chat_completion`` options passed to ``GenerateContentConfig`` unchanged.
CHAT_OPTIONS = frozenset(
    {
        "top_k",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "safety_settings",
        "cached_content",
        "media_resolution",
    }
)
EMBEDDING_TASK_TYPES = frozenset(
    {
        "SEMANTIC_SIMILARITY",
        "CLASSIFICATION",
        "CLUSTERING",
        "RETRIEVAL_DOCUMENT",
        "RETRIEVAL_QUERY",
        "QUESTION_ANSWERING",
        "FACT_VERIFICATION",
        "CODE_RETRIEVAL_QUERY",
    }
)
EMBEDDING_OPTIONS = frozenset({"title"})
IMAGE_SIZES = ("1K", "2K", "4K")
ASPECT_RATIOS = ("1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9")
IMAGEN_OPTIONS = frozenset(
    {
        "seed",
        "negative_prompt",
        "person_generation",
        "safety_filter_level",
        "add_watermark",
        "enhance_prompt",
        "output_compression_quality",
        "guidance_scale",
        "language",
        "include_rai_reason",
    }
)
TOOL_CHOICE_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


# -- tool results (SPEC §2) ---------------------------------------------------------------


def tool_result_object(output: str) -> dict[str, Any]:
    """The ``functionResponse.response`` object for a tool's output string (SPEC §2.2).

    A JSON object is sent as it is, a JSON list as ``{"0": …, "1": …}``, anything else
    (scalars, JSON strings, text that is not JSON) as ``{"result": <the original string>}``.
    """
    try:
        value = json.loads(output, parse_constant=_not_json, parse_float=_finite)
    except ValueError:
        return {"result": output}
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    return {"result": output}


def _not_json(constant: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity``: Python's json reads them, JSON has no such values."""
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    """A JSON number; one beyond a double's range (``1e999``) would reach the wire as Infinity."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is beyond a double's range")
    return value


def _object(value: object, what: str = "tool call arguments") -> dict[str, Any]:
    """A deep copy as a JSON object, so the caller's data stay untouched (SPEC §2): empty → ``{}``,
    a list → ``{"0": …, "1": …}``; anything else, or a value JSON cannot carry, is refused."""
    if isinstance(value, list):
        value = {str(index): item for index, item in enumerate(value)}
    elif value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a JSON object, not {type(value).__name__}", provider=PROVIDER)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} are not JSON: {exc}", provider=PROVIDER) from None
    return copy.deepcopy(dict(value))


# -- chat -----------------------------------------------------------------------------------


def map_chat_request(request: ChatRequest) -> dict[str, Any]:
    """``generate_content`` arguments: ``{"model", "contents"}`` and ``"config"`` when it has a field.

    A conversation of one plain user text is sent as that string: the SDK turns
    ``contents="Hi"`` into ``[{"role": "user", "parts": [{"text": "Hi"}]}]`` itself
    (``_transformers.t_contents``), so the wire body is the same as for the list.
    """
    system, turns = split_system(request.messages)
    contents: str | list[dict[str, Any]]
    if len(turns) == 1 and turns[0].role is Role.USER and isinstance(turns[0].content, str) and turns[0].content:
        contents = turns[0].content
    else:
        contents = map_contents(turns)
    config: dict[str, Any] = {}
    if system:
        config["system_instruction"] = system
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["top_p"] = request.top_p
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if request.stop:
        config["stop_sequences"] = list(request.stop)
    if request.json_mode:
        config["response_mime_type"] = "application/json"
        schema = response_json_schema(request.response_schema)
        if schema is not None:
            config["response_json_schema"] = schema
    if request.thinking is not None:
        config["thinking_config"] = map_thinking(request.thinking, request.model)
    if request.tools:
        config["tools"] = [{"function_declarations": [function_declaration(t) for t in request.tools]}]
        if request.tool_choice:
            config["tool_config"] = tool_config(request.tool_choice, request.tools)
    elif request.tool_choice:
        raise InvalidInputError("tool_choice needs tools", provider=PROVIDER)
    config.update(_known_options(request.options, CHAT_OPTIONS, "chat"))
    payload: dict[str, Any] = {"model": request.model, "contents": contents}
    if config:
        payload["config"] = config
    return payload


def response_json_schema(schema: Any) -> dict[str, Any] | None:
    """The JSON schema for ``response_json_schema``: a Pydantic model's schema, a dict, or none."""
    if schema is None:
        return None
    if isinstance(schema, dict):
        return copy.deepcopy(schema)
    json_schema: dict[str, Any] = schema.model_json_schema()
    return json_schema


def map_thinking(options: ThinkingOptions, model: str) -> dict[str, Any]:
    """``thinking_config``: include-thoughts flag, budget (2.5) or level (3 and later)."""
    if options.budget is not None and options.level is not None:
        raise InvalidInputError("give either a thinking budget or a thinking level, not both", provider=PROVIDER)
    if options.level is not None and thinking_style(model) == "budget":
        raise InvalidInputError(f"model {model!r} takes a thinking budget, not a thinking level", provider=PROVIDER)
    config: dict[str, Any] = {"include_thoughts": options.include_thoughts}
    if options.budget is not None:
        config["thinking_budget"] = options.budget
    if options.level is not None:
        config["thinking_level"] = options.level.upper()
    return config


def function_declaration(tool: ToolSpec) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name, "parameters_json_schema": copy.deepcopy(tool.parameters)}
    if tool.description:
        declaration["description"] = tool.description
    return declaration


def tool_config(choice: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """``auto``/``none``/``required`` → AUTO/NONE/ANY; a tool name → ANY restricted to it."""
    mode = TOOL_CHOICE_MODES.get(choice.lower())
    if mode is not None:
        return {"function_calling_config": {"mode": mode}}
    if choice not in {t.name for t in tools}:
        raise InvalidInputError(
            f"tool_choice {choice!r} is not auto, none, required or one of the given tools", provider=PROVIDER
        )
    return {"function_calling_config": {"mode": "ANY", "allowed_function_names": [choice]}}


def map_contents(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Conversation turns → ``contents``. Consecutive tool results share one user turn."""
    calls = {call.id: call.name for m in messages for call in m.tool_calls or ()}
    contents: list[dict[str, Any]] = []
    inline_total = 0
    for index, message in enumerate(messages):
        if message.role is Role.TOOL:
            part = {"function_response": _function_response(message, calls, index)}
            if contents and contents[-1].get("_tool_results"):
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part], "_tool_results": True})
            continue
        if message.role is Role.ASSISTANT:
            parts = _assistant_parts(message)
            if parts:
                contents.append({"role": "model", "parts": parts})
            continue
        given = message.content
        if isinstance(given, str):
            parts = [{"text": given}] if given else []
        else:
            parts = [_content_part(p) for p in given]
            inline_total += sum(p.size for p in given if not isinstance(p, TextPart))
        if not parts:
            raise InvalidInputError(f"message {index} ({message.role.value}) has no content", provider=PROVIDER)
        contents.append({"role": "user", "parts": parts})
    if inline_total > MAX_INLINE_BYTES:
        raise InvalidInputError(
            f"inline images and documents total {inline_total:,} bytes; Gemini accepts at most "
            f"{MAX_INLINE_BYTES:,} bytes of inline data per request",
            provider=PROVIDER,
        )
    for content in contents:
        content.pop("_tool_results", None)
    return contents


def _function_response(message: ChatMessage, calls: Mapping[str, str], index: int) -> dict[str, Any]:
    name = calls.get(message.tool_call_id or "") or message.name
    if not name:
        raise InvalidInputError(
            f"tool result {index} matches no earlier tool call: give the tool's name", provider=PROVIDER
        )
    response: dict[str, Any] = {"name": name, "response": tool_result_object(message.text)}
    if message.tool_call_id:
        response = {"id": message.tool_call_id, **response}
    return response


def _content_part(part: TextPart | ImagePart | DocumentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    mime = part.mime_type or (sniff_mime(part.data) if part.data is not None else None)
    if part.data is not None:
        return {"inline_data": {"data": part.data, "mime_type": mime}}
    return {"file_data": {"file_uri": part.url, "mime_type": mime}}


def _assistant_parts(message: ChatMessage) -> list[dict[str, Any]]:
    """The model turn: replayed exactly from saved Gemini parts when the message carries them
    (``metadata["gemini_parts"]``), else rebuilt from its text and tool calls."""
    replay = message.metadata.get("gemini_parts")
    if replay:
        return [replay_part(p) for p in replay]
    signatures = {
        s["tool_call_id"]: s["signature"]
        for s in message.metadata.get("thought_signatures", ())
        if isinstance(s, Mapping) and s.get("tool_call_id")
    }
    text_signature = next(
        (
            s["signature"]
            for s in message.metadata.get("thought_signatures", ())
            if isinstance(s, Mapping) and s.get("kind") == "text"
        ),
        None,
    )
    parts = [_content_part(p) for p in message.parts]
    if text_signature and parts and "text" in parts[0]:
        parts[0]["thought_signature"] = decode_signature(text_signature)
    for call in message.tool_calls or ():
        part: dict[str, Any] = {"function_call": {"id": call.id, "name": call.name, "args": _object(call.arguments)}}
        if call.id in signatures:
            part["thought_signature"] = decode_signature(signatures[call.id])
        parts.append(part)
    return parts


def replay_part(saved: Mapping[str, Any]) -> dict[str, Any]:
    """A saved part (see ``response_parser.replay_parts``) as a part to send back."""
    if not isinstance(saved, Mapping) or not isinstance(saved.get("function_call", {}), Mapping):
        raise InvalidInputError(f"a saved Gemini part must be an object, not {saved!r:.80}", provider=PROVIDER)
    part: dict[str, Any] = {}
    if "text" in saved:
        part["text"] = saved["text"]
    if saved.get("thought") is True:
        part["thought"] = True
    if "function_call" in saved:
        call = saved["function_call"]
        args = _object(call.get("args"), "the args of a saved Gemini function_call part")
        part["function_call"] = {**{k: call[k] for k in ("id", "name") if k in call}, "args": args}
    if "inline_data" in saved:
        blob = saved["inline_data"]
        part["inline_data"] = {"data": base64.b64decode(blob["data"]), "mime_type": blob.get("mime_type")}
    if saved.get("thought_signature"):
        part["thought_signature"] = decode_signature(saved["thought_signature"])
    if not part:
        raise InvalidInputError(f"saved Gemini part {dict(saved)!r} has nothing to send", provider=PROVIDER)
    return part


def decode_signature(value: str) -> bytes:
    """A thought signature kept as base64 text (standard or URL-safe) back to bytes."""
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise InvalidInputError("a saved thought signature is not base64 text", provider=PROVIDER) from exc


def _known_options(options: Mapping[str, Any], allowed: frozenset[str], what: str) -> dict[str, Any]:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InvalidInputError(
            f"unknown {what} option(s) {unknown} for Gemini; supported: {sorted(allowed)}", provider=PROVIDER
        )
    return {k: copy.deepcopy(v) for k, v in options.items()}


# -- embeddings -----------------------------------------------------------------------------


def map_embedding_request(request: EmbeddingRequest) -> dict[str, Any]:
    """``embed_content`` arguments: one content per input (``batchEmbedContents``)."""
    config: dict[str, Any] = {}
    if request.task_type is not None:
        task = request.task_type.upper()
        if task not in EMBEDDING_TASK_TYPES:
            raise InvalidInputError(
                f"unknown embedding task_type {request.task_type!r}; use one of {sorted(EMBEDDING_TASK_TYPES)}",
                provider=PROVIDER,
            )
        config["task_type"] = task
    if request.dimensions is not None:
        config["output_dimensionality"] = request.dimensions
    config.update(_known_options(request.options, EMBEDDING_OPTIONS, "embedding"))
    return {"model": request.model, "contents": list(request.inputs), "config": config}


# -- images -----------------------------------------------------------------------------------


def map_image_request(request: ImageRequest) -> dict[str, Any]:
    """``generate_content`` with ``response_modalities=["IMAGE"]`` (SPEC §4.5).

    One user turn: the prompt, then one inline-data part per input image. The requested MIME
    type is not sent (the Gemini API has no output MIME type); it is the fallback when the
    answer carries none.
    """
    if request.quality is not None:
        raise InvalidInputError("Gemini image models take no quality setting", provider=PROVIDER)
    _known_options(request.options, frozenset(), "image")
    parts: list[dict[str, Any]] = [{"text": request.prompt}]
    parts.extend({"inline_data": {"data": image.data, "mime_type": image.mime_type}} for image in request.input_images)
    config: dict[str, Any] = {"response_modalities": ["IMAGE"]}
    image_config: dict[str, Any] = {}
    if request.aspect_ratio is not None:
        image_config["aspect_ratio"] = _aspect_ratio(request.aspect_ratio)
    if request.size is not None:
        size = request.size.upper()
        if size not in IMAGE_SIZES:
            raise InvalidInputError(
                f"image size {request.size!r} is not one of {', '.join(IMAGE_SIZES)}", provider=PROVIDER
            )
        image_config["image_size"] = size
    if image_config:
        config["image_config"] = image_config
    return {"model": request.model, "contents": [{"role": "user", "parts": parts}], "config": config}


def map_imagen_request(request: ImageRequest) -> dict[str, Any]:
    """``generate_images`` arguments (SPEC §4.6): ``output_mime_type`` is the requested type."""
    if request.input_images:
        raise InvalidInputError("Imagen takes no input images; use a Gemini image model", provider=PROVIDER)
    if request.quality is not None:
        raise InvalidInputError("Imagen takes no quality setting", provider=PROVIDER)
    config: dict[str, Any] = {"output_mime_type": request.mime_type}
    if request.aspect_ratio is not None:
        config["aspect_ratio"] = _aspect_ratio(request.aspect_ratio)
    if request.size is not None:
        size = request.size.upper()
        if size not in ("1K", "2K"):
            raise InvalidInputError(f"Imagen image size {request.size!r} is not 1K or 2K", provider=PROVIDER)
        config["image_size"] = size
    config.update(_known_options(request.options, IMAGEN_OPTIONS, "Imagen"))
    return {"model": request.model, "prompt": request.prompt, "config": config}


def _aspect_ratio(value: str) -> str:
    if value not in ASPECT_RATIOS:
        raise InvalidInputError(f"aspect ratio {value!r} is not one of {', '.join(ASPECT_RATIOS)}", provider=PROVIDER)
    return value
