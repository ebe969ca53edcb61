"""Pure parsing of google-genai responses into llm-core results.

Text and thinking: only the first candidate is read, ``thought is True`` parts are
native thinking, the visible text goes once through ``<think>`` extraction
(:func:`llm_core.thinking.split_text_parts`). Thought signatures and the model's parts are kept
in ``metadata`` so that the next turn can send them back unchanged (Gemini rejects a tool-call turn without them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from core_gemini_plugin.errors import reads_answer
from core_gemini_plugin.grounding import builtin_results
from core_gemini_plugin.parts import PartLog
from core_gemini_plugin.usage import usage_from
from llm_core.errors import ContentFilteredError, InvalidResponseError
from llm_core.messages import ChatMessage, Role
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest
from llm_core.responses import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    CompletionResponse,
    EmbeddingResponse,
    ImageResponse,
    TokenCount,
    Usage,
)
from llm_core.streaming import StreamMetadata
from llm_core.thinking import split_text_parts

if TYPE_CHECKING:
    from google.genai import types

PROVIDER = "gemini"
#: Finish reasons that mean the provider's filters stopped the answer (finish reason ``content_filter``).
BLOCKING_FINISH_REASONS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)


# -- small pieces shared with the stream parser ----------------------------------------------


#: Gemini finish reason names → the common vocabulary; any other name is kept in lower case.
_FINISH_BY_NAME: dict[str | None, str] = {
    None: FINISH_STOP,
    "FINISH_REASON_UNSPECIFIED": FINISH_STOP,
    "STOP": FINISH_STOP,
    "MAX_TOKENS": FINISH_LENGTH,
    **dict.fromkeys(BLOCKING_FINISH_REASONS, FINISH_CONTENT_FILTER),
}


def enum_name(value: Any) -> str | None:
    """``FinishReason.STOP`` / ``"STOP"`` → ``"STOP"``; unset → ``None``."""
    if value is None:
        return None
    name = value.value if isinstance(value, Enum) else value
    return str(name).upper() or None


def finish_reason(raw: Any, *, has_tool_calls: bool = False) -> str:
    """Gemini's finish reason in the common vocabulary: ``stop``, ``length``, ``content_filter``,
    ``tool_calls``, else lower-cased."""
    return _finish_from_name(enum_name(raw), has_tool_calls)


def _finish_from_name(name: str | None, has_tool_calls: bool) -> str:
    common = _FINISH_BY_NAME.get(name)
    if common is None:
        assert name is not None
        return name.lower()
    return FINISH_TOOL_CALLS if has_tool_calls and common is FINISH_STOP else common


def raise_if_prompt_blocked(response: types.GenerateContentResponse) -> None:
    """A prompt the safety system blocked (no candidates, ``promptFeedback.blockReason``)."""
    feedback = response.prompt_feedback
    reason = enum_name(feedback.block_reason) if feedback is not None else None
    if feedback is not None and reason and reason != "BLOCKED_REASON_UNSPECIFIED":
        detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
        raise ContentFilteredError(f"Gemini blocked the prompt ({reason}){detail}", provider=PROVIDER)


def first_candidate(response: types.GenerateContentResponse) -> types.Candidate:
    """The first candidate of an answer; a body without a usable one raises.

    The SDK turns a ``candidates`` value that is not a list of objects (a string, an object,
    ``[null]``) into empty candidates, so an empty first candidate means a malformed body.
    """
    if not response.candidates:
        raise InvalidResponseError(
            "Gemini's answer has no candidates (and no prompt feedback saying why): not a generateContent answer",
            provider=PROVIDER,
        )
    candidate = response.candidates[0]
    if candidate.content is None and candidate.finish_reason is None:
        raise InvalidResponseError(
            "Gemini's first candidate has neither content nor a finish reason "
            "(candidates must be a list of candidate objects)",
            provider=PROVIDER,
        )
    return candidate


def check_has_output(parts_seen: bool, finish: str | None) -> None:
    """An answer that ended normally (or at max tokens) without a single part is no answer."""
    if parts_seen or finish in BLOCKING_FINISH_REASONS:
        return
    if finish == "MAX_TOKENS":
        raise InvalidResponseError(
            "Gemini stopped at max_output_tokens before any output: raise max_tokens", provider=PROVIDER
        )
    if finish in (None, "STOP", "FINISH_REASON_UNSPECIFIED"):
        raise InvalidResponseError(
            f"Gemini's answer finished ({finish or 'no reason'}) without any content part", provider=PROVIDER
        )


def first_parts(response: types.GenerateContentResponse) -> list[types.Part]:
    candidates = response.candidates or []
    content = candidates[0].content if candidates else None
    return list(content.parts or []) if content is not None else []


def text_parts(parts: Iterable[types.Part]) -> list[tuple[str, bool]]:
    """``(text, is_thought)`` for every part whose ``text`` is a string (thought only when exactly ``True``)."""
    return [(p.text, p.thought is True) for p in parts if isinstance(p.text, str)]


# -- chat ---------------------------------------------------------------------------------------


@reads_answer
def parse_chat_response(raw: types.GenerateContentResponse, request: ChatRequest) -> CompletionResponse:
    """A ``generate_content`` response → :class:`CompletionResponse`: text, thinking,
    thought signatures, tool calls; a blocked prompt or a body that is no answer raises."""
    raise_if_prompt_blocked(raw)
    candidate = first_candidate(raw)
    parts = first_parts(raw)
    reason = enum_name(candidate.finish_reason)
    check_has_output(bool(parts), reason)
    texts = text_parts(parts)
    if request.json_mode:  # the model's JSON as written: <think> extraction is for chat text only
        content = "".join(text for text, thought in texts if not thought)
        thinking = "".join(text for text, thought in texts if thought) or None
    else:
        content, thinking = split_text_parts(texts)
    log = PartLog(raw.response_id)
    for part in parts:
        log.add(part)
    citations, calls, grounded, uses = builtin_results(candidate, log.parts, content, request.model)
    metadata: dict[str, Any] = {
        "model_version": raw.model_version,
        "finish_reason": reason,
        **log.replay_metadata(),
        **grounded,
    }
    if candidate.finish_message:
        metadata["finish_message"] = candidate.finish_message
    if candidate.safety_ratings:
        metadata["safety_ratings"] = [r.model_dump(mode="json", exclude_none=True) for r in candidate.safety_ratings]
    tool_calls = log.tool_calls or None
    return CompletionResponse(
        content=content,
        thinking=thinking,
        model=raw.model_version or request.model,
        provider=PROVIDER,
        usage=usage_from(raw.usage_metadata, uses or None),
        response_id=raw.response_id,
        finish_reason=_finish_from_name(reason, tool_calls is not None),
        tool_calls=tool_calls,
        citations=citations or None,
        builtin_tool_calls=calls or None,
        metadata=metadata,
    )


def assistant_message(response: CompletionResponse | StreamMetadata, text: str | None = None) -> ChatMessage:
    """The assistant turn to put back into the conversation, with the Gemini parts and thought
    signatures that the next request must replay (tool loops on thinking models need them).

    For a stream pass its final :class:`StreamMetadata` and the streamed response text.
    """
    if isinstance(response, CompletionResponse):
        content, calls, source = response.content, response.tool_calls, response.metadata
    else:
        content, calls, source = text or "", response.tool_calls, response.extra
    metadata = {k: source[k] for k in ("gemini_parts", "thought_signatures") if k in source}
    return ChatMessage(role=Role.ASSISTANT, content=content, tool_calls=calls or None, metadata=metadata)


# -- token counting --------------------------------------------------------------------------


@reads_answer
def parse_count_tokens(raw: types.CountTokensResponse, request: ChatRequest) -> TokenCount:
    """``totalTokens`` (and ``cachedContentTokenCount``) of a ``countTokens`` answer.

    The SDK leaves a missing count as ``None``; that is no answer, never a count of 0.
    """
    total, cached = raw.total_tokens, raw.cached_content_token_count
    if not _is_count(total):
        raise InvalidResponseError(
            f"Gemini's countTokens answer has no valid totalTokens (got {total!r})", provider=PROVIDER
        )
    if cached is not None and not _is_count(cached):
        raise InvalidResponseError(
            f"Gemini's countTokens answer has an invalid cachedContentTokenCount ({cached!r})", provider=PROVIDER
        )
    return TokenCount(input_tokens=total, model=request.model, provider=PROVIDER, cached_tokens=cached)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# -- embeddings ------------------------------------------------------------------------------


@reads_answer
def parse_embedding_response(raw: types.EmbedContentResponse, request: EmbeddingRequest) -> EmbeddingResponse:
    vectors = [list(e.values or []) for e in raw.embeddings or []]
    if len(vectors) != len(request.inputs) or any(not v for v in vectors):
        raise InvalidResponseError(
            f"Gemini returned {len(vectors)} embeddings for {len(request.inputs)} inputs", provider=PROVIDER
        )
    usage = Usage()
    if raw.usage_metadata is not None:
        usage = Usage(
            prompt_tokens=raw.usage_metadata.prompt_token_count or 0,
            total_tokens=raw.usage_metadata.total_token_count or 0,
        )
    metadata: dict[str, Any] = {}
    if raw.truncated is not None:
        metadata["truncated"] = raw.truncated
    return EmbeddingResponse(vectors=vectors, model=request.model, provider=PROVIDER, usage=usage, metadata=metadata)


# -- images ----------------------------------------------------------------------------------


@reads_answer
def parse_image_response(raw: types.GenerateContentResponse, request: ImageRequest) -> ImageResponse:
    """The first inline-data image; its MIME type, else the requested one."""
    raise_if_prompt_blocked(raw)
    parts = first_parts(raw)
    for part in parts:
        blob = part.inline_data
        if blob is None or not blob.data:
            continue
        if blob.mime_type and not blob.mime_type.startswith("image/"):
            continue
        text = "".join(t for t, thought in text_parts(parts) if not thought)
        return ImageResponse(
            data=blob.data,
            mime_type=blob.mime_type or request.mime_type,
            model=raw.model_version or request.model,
            provider=PROVIDER,
            usage=usage_from(raw.usage_metadata),
            response_id=raw.response_id,
            metadata={"text": text or None},
        )
    reason = enum_name(raw.candidates[0].finish_reason) if raw.candidates else None
    text = "".join(t for t, thought in text_parts(parts) if not thought)
    if reason in BLOCKING_FINISH_REASONS:
        raise ContentFilteredError(f"Gemini's filters stopped the image ({reason})", provider=PROVIDER)
    said = f"; it answered: {text[:200]!r}" if text else ""
    raise InvalidResponseError(
        f"Gemini returned no image (finish reason {reason or 'none'}){said}", provider=PROVIDER, raw=text or None
    )


@reads_answer
def parse_imagen_response(raw: types.GenerateImagesResponse, request: ImageRequest) -> ImageResponse:
    """The first generated image, with the requested MIME type when Imagen names none."""
    images: Sequence[types.GeneratedImage] = raw.generated_images or []
    for generated in images:
        image = generated.image
        if image is not None and image.image_bytes:
            return ImageResponse(
                data=image.image_bytes,
                mime_type=image.mime_type or request.mime_type,
                model=request.model,
                provider=PROVIDER,
                revised_prompt=generated.enhanced_prompt,
            )
    reasons = [g.rai_filtered_reason for g in images if g.rai_filtered_reason]
    if reasons:
        raise ContentFilteredError(f"Imagen filtered the image: {reasons[0]}", provider=PROVIDER)
    raise InvalidResponseError("Imagen returned no image", provider=PROVIDER)
