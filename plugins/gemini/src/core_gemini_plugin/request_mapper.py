"""Pure mapping of llm-core requests to google-genai call arguments: one entry point per call
(chat, embeddings, Gemini images, Imagen), with the config, thinking, tool and schema rules here
and the conversation's ``contents`` from :mod:`core_gemini_plugin.contents`.

Every function returns plain dicts in the shapes the SDK accepts (``ContentDict``,
``GenerateContentConfigDict`` …), so nothing here imports the SDK and the sync and async paths
send exactly the same request. Inputs are never mutated.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from core_gemini_plugin.contents import map_contents
from core_gemini_plugin.grounding import builtin_tools
from core_gemini_plugin.models import thinking_style
from llm_core.config import check_names
from llm_core.errors import InvalidInputError
from llm_core.messages import Role, split_system
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest, ThinkingOptions
from llm_core.tools import ToolSpec

PROVIDER = "gemini"
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
    tools = builtin_tools(request)
    if request.tools:
        tools.insert(0, {"function_declarations": [function_declaration(t) for t in request.tools]})
        if request.tool_choice:
            config["tool_config"] = tool_config(request.tool_choice, request.tools)
    elif request.tool_choice:
        raise InvalidInputError("tool_choice needs tools", provider=PROVIDER)
    if tools:
        config["tools"] = tools
    config.update(_known_options(request.options, CHAT_OPTIONS, "chat"))
    payload: dict[str, Any] = {"model": request.model, "contents": contents}
    if config:
        payload["config"] = config
    return payload


#: What the caller asked for, by the ``generate_content`` config key it became (for messages).
_CONFIG_ORIGIN = {
    "system_instruction": "system",
    "tools": "tools",
    "tool_config": "tool_choice",
    "thinking_config": "thinking",
    "max_output_tokens": "max_tokens",
    "stop_sequences": "stop",
    "response_mime_type": "a JSON answer",
    "response_json_schema": "a JSON answer",
}


#: ``GenerationConfig``'s fields (google-genai 3.6): what Vertex AI's countTokens takes of a chat's
#: ``GenerateContentConfig`` as its ``generation_config``.
_GENERATION_FIELDS = frozenset(
    {
        "temperature", "top_p", "top_k", "candidate_count", "max_output_tokens", "stop_sequences", "seed",
        "presence_penalty", "frequency_penalty", "response_logprobs", "logprobs", "response_mime_type",
        "response_schema", "response_json_schema", "response_modalities", "media_resolution", "thinking_config",
        "speech_config", "routing_config", "model_selection_config", "audio_timestamp",
    }
)  # fmt: skip


def map_count_tokens_request(request: ChatRequest, *, vertexai: bool = False) -> dict[str, Any]:
    """``count_tokens`` arguments: the ``model`` and ``contents`` of the chat request.

    On the Gemini Developer API the SDK sends nothing but the contents: it raises for
    ``CountTokensConfig.system_instruction``, ``tools`` and ``generation_config`` outside Vertex AI.
    A request that needs any of them (a system text, tools, thinking, sampling or output settings)
    would be counted without them, so it is refused here, before anything is sent, naming what to
    leave out. On Vertex AI (``vertexai``) they are counted; what ``CountTokensConfig`` has no
    place for (``tool_choice``, safety settings, a cached content) is refused the same way.
    """
    payload = map_chat_request(request)
    config = payload.pop("config", {})
    if vertexai and config:
        counted = {key: config.pop(key) for key in ("system_instruction", "tools") if key in config}
        generation = {key: config.pop(key) for key in list(config) if key in _GENERATION_FIELDS}
        if generation:
            counted["generation_config"] = generation
        payload["config"] = counted
    if config:
        given = sorted({_CONFIG_ORIGIN.get(key, key) for key in config})
        where = (
            "on Vertex AI (countTokens takes the system text, tools and generation settings only)"
            if vertexai
            else "on the Gemini Developer API (system instructions, tools and generation settings in countTokens "
            "are Vertex AI only)"
        )
        raise InvalidInputError(
            f"Gemini counts only the messages: {', '.join(given)} cannot be counted {where}; leave "
            f"{'it' if len(given) == 1 else 'them'} out",
            provider=PROVIDER,
        )
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


def _known_options(options: Mapping[str, Any], allowed: frozenset[str], what: str) -> dict[str, Any]:
    check_names(
        options, allowed, what=f"{what} option", where=" for Gemini", provider=PROVIDER, error=InvalidInputError
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
    """``generate_content`` arguments for a Gemini image model: ``response_modalities=["IMAGE"]``.

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
    """``generate_images`` arguments for Imagen: ``output_mime_type`` is the requested type."""
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
