"""Pure response parsers: openai SDK results → llm-core responses.

The functions read SDK objects by attribute only (``TYPE_CHECKING`` imports), so they also accept
objects built by ``model_construct`` and tolerate fields the SDK does not know.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core_openai_plugin.builtin import (
    ANNOTATIONS,
    builtin_call,
    citations,
    generated_image,
    other_annotations,
    tool_uses,
)
from core_openai_plugin.errors import describe, error_from_code, reads_answer
from core_openai_plugin.request_mapper import OUTPUT_ITEMS, OUTPUT_ORDER, REASONING_ITEMS
from core_openai_plugin.usage import usage_from
from llm_core.builtin_tools import BuiltinToolCall, Citation
from llm_core.errors import InvalidResponseError
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
from llm_core.tools import ToolCall

if TYPE_CHECKING:
    from openai.types import CreateEmbeddingResponse, ImagesResponse
    from openai.types.responses import Response

PROVIDER = "openai"
#: Metadata keys of a chat answer besides the replayed items (``OUTPUT_ITEMS``: output items other
#: than messages, reasoning, function and custom calls and images, as the API sent them, every
#: key; built-in tool runs are also typed in ``builtin_tool_calls``): images of the
#: image-generation tool (:class:`ImageResponse`).
IMAGES = "images"


def dump(obj: Any) -> dict[str, Any]:
    """An SDK object as a plain JSON-ready dict (unset fields left out). Values the SDK's types
    do not know (a web search source of ``type: api``) are kept as sent, without a warning."""
    if isinstance(obj, Mapping):
        return dict(obj)
    result: dict[str, Any] = obj.model_dump(mode="json", exclude_unset=True, by_alias=True, warnings=False)
    return result


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def custom_call(item: Any) -> ToolCall:
    """A ``custom_tool_call`` item (a freeform tool, ``ResponseCustomToolCall``): its text input."""
    data = dump(item)
    text = data.get("input")
    if not isinstance(text, str):
        raise InvalidResponseError(f"OpenAI's custom tool call has input {describe(text)}, not text", provider=PROVIDER)
    return ToolCall(id=str(data.get("call_id", "")), name=str(data.get("name", "")), input=text)


def tool_call(call_id: str, name: str, arguments: str | None) -> ToolCall:
    """A function call with its JSON arguments decoded; bad JSON (``NaN``/``Infinity`` included,
    which Python's json would read) is an invalid response."""
    try:
        decoded = json.loads(arguments, parse_constant=_not_json) if arguments else {}
        return ToolCall(id=call_id, name=name, arguments=decoded)
    except ValueError as exc:
        raise InvalidResponseError(
            f"OpenAI sent unusable arguments for tool {name!r}: {exc}", provider=PROVIDER, raw=arguments
        ) from exc
    except RecursionError as exc:  # json's decoder recurses once a level: thousands of levels exhaust it
        raise InvalidResponseError(
            f"OpenAI sent arguments for tool {name!r} nested too deep to decode", provider=PROVIDER
        ) from exc


def finish_reason(status: str | None, incomplete_reason: str | None, *, has_calls: bool, refused: bool) -> str:
    """The common finish vocabulary: ``length`` for max_output_tokens, ``content_filter`` for a
    filtered or refused answer, ``tool_calls`` when functions were called, else ``stop``."""
    if status == "incomplete":
        if incomplete_reason in (None, "max_output_tokens"):
            return FINISH_LENGTH
        if incomplete_reason == "content_filter":
            return FINISH_CONTENT_FILTER
        return str(incomplete_reason).lower()
    if refused:
        return FINISH_CONTENT_FILTER
    if has_calls:
        return FINISH_TOOL_CALLS
    return FINISH_STOP


def reasoning_item(item: Any) -> dict[str, Any]:
    """A reasoning output item as kept for replay: id, summary and the encrypted content."""
    data = dump(item)
    return {
        key: data[key] for key in ("type", "id", "summary", "content", "encrypted_content") if data.get(key) is not None
    }


def reasoning_texts(item: Any) -> list[str]:
    """Summary texts of a reasoning item (raw ``reasoning_text`` content when there is no summary,
    as OpenAI-compatible servers running open-weight models send)."""
    summaries = [part.text for part in getattr(item, "summary", None) or () if getattr(part, "text", "")]
    if summaries:
        return summaries
    return [part.text for part in getattr(item, "content", None) or () if getattr(part, "text", "")]


class _Output:
    """What the output items of one answer carry, read in order."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.texts: list[str] = []
        self.refusals: list[str] = []
        self.thinking: list[str] = []
        self.reasoning: list[dict[str, Any]] = []
        self.calls: list[ToolCall] = []
        self.images: list[ImageResponse] = []
        self.other: list[dict[str, Any]] = []
        self.builtin: list[BuiltinToolCall] = []
        self.citations: list[Citation] = []
        self.annotations: list[dict[str, Any]] = []
        self.order: list[str] = []

    def read(self, items: object) -> None:
        if not isinstance(items, list):
            raise InvalidResponseError(f"OpenAI's response output is {describe(items)}, not a list", provider=PROVIDER)
        for index, item in enumerate(items):
            if not isinstance(item, BaseModel | Mapping):
                raise InvalidResponseError(
                    f"OpenAI's output item {index} is {describe(item)}, not an object", provider=PROVIDER
                )
            self.add(item, index)

    def add(self, item: Any, index: int) -> None:
        kind = getattr(item, "type", None)
        if kind == "message":
            self._message(getattr(item, "content", None), index)
        elif kind == "reasoning":
            self.thinking.extend(reasoning_texts(item))
            self.reasoning.append(reasoning_item(item))
            self.order.append(str(getattr(item, "id", "")))
        elif kind == "function_call":
            name, arguments = str(getattr(item, "name", "")), getattr(item, "arguments", None)
            self.calls.append(tool_call(str(getattr(item, "call_id", "")), name, arguments))
        elif kind == "custom_tool_call":
            self.calls.append(custom_call(item))
        elif kind == "image_generation_call":  # every key of the item is in the image
            self.images.append(generated_image(dump(item), self.model))
            self.builtin.append(
                BuiltinToolCall(
                    tool="image_generation", id=getattr(item, "id", None), status=getattr(item, "status", None)
                )
            )
        else:
            self.keep(dump(item))

    def keep(self, data: dict[str, Any]) -> None:
        """An item no typed field holds (web search, code interpreter, MCP …): kept as sent, with
        every key, never dropped (and replayed in a later turn); a built-in tool's run is also typed."""
        call = builtin_call(data)
        if call is not None:
            self.builtin.append(call)
        self.other.append(data)
        self.order.append(str(data.get("id", "")))

    def _message(self, parts: object, index: int) -> None:
        if not isinstance(parts, list):
            raise InvalidResponseError(
                f"OpenAI's message (output item {index}) has content {describe(parts)}, not a list of parts",
                provider=PROVIDER,
            )
        for part in parts:
            kind = getattr(part, "type", None)
            if kind == "output_text" and isinstance(getattr(part, "text", None), str):
                if getattr(part, "annotations", None):  # most answers have none: no dump for them
                    data = dump(part)
                    self.citations.extend(citations(data, sum(len(text) for text in self.texts)))
                    self.annotations.extend(other_annotations(data))
                self.texts.append(part.text)
            elif kind == "refusal" and isinstance(getattr(part, "refusal", None), str):
                self.refusals.append(part.refusal)
            else:
                raise InvalidResponseError(
                    f"OpenAI's message (output item {index}) has a part that is neither output_text nor refusal: "
                    f"{describe(part) if not isinstance(part, BaseModel) else kind!r}",
                    provider=PROVIDER,
                )

    @property
    def answered(self) -> bool:
        """Whether the output carries anything a caller can use."""
        return bool("".join(self.texts) or self.refusals or self.calls or self.images or self.other)

    def metadata(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.reasoning:
            extra[REASONING_ITEMS] = self.reasoning
        if self.refusals:
            extra["refusal"] = "".join(self.refusals)
        if self.images:
            extra[IMAGES] = self.images
        if self.other:
            extra[OUTPUT_ITEMS] = self.other
            extra[OUTPUT_ORDER] = self.order
        if self.annotations:
            extra[ANNOTATIONS] = self.annotations
        return extra


def check_status(raw: Any, *, answered: bool) -> str:
    """The status of a finished answer; anything that is not a usable answer raises.

    ``completed`` answers; ``incomplete`` answers only when it carries output (the API cut it
    at ``max_output_tokens`` or by its content filter: ``length`` / ``content_filter``);
    ``failed`` raises its error; ``in_progress``, ``queued`` and the rest are not answers.
    """
    status = getattr(raw, "status", None)
    if status == "failed":
        error = getattr(raw, "error", None)
        if error is None:
            raise InvalidResponseError("OpenAI's response failed without saying why", provider=PROVIDER)
        raise error_from_code(getattr(error, "code", None), str(getattr(error, "message", "")), provider=PROVIDER)
    reason = getattr(getattr(raw, "incomplete_details", None), "reason", None)
    if status == "incomplete":
        if reason not in (None, "max_output_tokens", "content_filter"):
            raise InvalidResponseError(f"OpenAI's response is incomplete ({reason})", provider=PROVIDER)
        if not answered:
            hint = ": raise max_tokens" if reason != "content_filter" else ""
            raise InvalidResponseError(
                f"OpenAI's response is incomplete ({reason or 'max_output_tokens'}) before any output{hint}",
                provider=PROVIDER,
            )
        return str(status)
    if status != "completed":
        shown = repr(status) if isinstance(status, str) else "missing"
        raise InvalidResponseError(
            f"OpenAI's response status is {shown}, not completed (not a finished answer)", provider=PROVIDER
        )
    if not answered:
        raise InvalidResponseError(
            "OpenAI's completed response carries no text, tool call, refusal, image or other output item",
            provider=PROVIDER,
        )
    return str(status)


@reads_answer
def parse_response(raw: Response, request: ChatRequest) -> CompletionResponse:
    """A Responses API result → :class:`CompletionResponse` (text, thinking, tool calls, usage).

    The SDK hands over whatever a 200 carried (a ``str`` for a non-JSON body, ``None`` for
    ``null``, an unvalidated object otherwise): anything that is not a finished answer raises
    :class:`InvalidResponseError` naming what was wrong.
    """
    if not isinstance(raw, BaseModel):
        raise InvalidResponseError(
            f"OpenAI answered with {describe(raw)} instead of a response object", provider=PROVIDER
        )
    model = getattr(raw, "model", None) or request.model
    output = _Output(model)
    output.read(getattr(raw, "output", None))
    status = check_status(raw, answered=output.answered)
    content = "".join(output.texts)
    refused = bool(output.refusals) and not content
    reason = finish_reason(
        status,
        getattr(getattr(raw, "incomplete_details", None), "reason", None),
        has_calls=bool(output.calls),
        refused=refused,
    )
    usage = getattr(raw, "usage", None)
    counted = usage_from(usage)  # first: it checks that the usage is an object before it is dumped
    uses = tool_uses(request, output.builtin, output.other)
    if uses:
        counted = counted.model_copy(update={"tool_uses": uses})
    metadata: dict[str, Any] = {"status": status, **output.metadata()}
    if usage is not None:
        metadata["raw_usage"] = dump(usage)
    return CompletionResponse(
        content=content if not refused else "".join(output.refusals),
        model=model,
        provider=PROVIDER,
        usage=counted,
        response_id=getattr(raw, "id", None),
        finish_reason=reason,
        tool_calls=output.calls or None,
        thinking="\n\n".join(output.thinking) or None,
        citations=output.citations or None,
        builtin_tool_calls=output.builtin or None,
        metadata=metadata,
    )


# --- Embeddings ------------------------------------------------------------------------------


@reads_answer
def parse_input_tokens(raw: Any, request: ChatRequest) -> TokenCount:
    """An ``InputTokenCountResponse`` (``object`` ``"response.input_tokens"``, ``input_tokens``). The
    SDK does not validate answers: a missing or non-integer count is no answer, never 0 tokens."""
    kind, counted = getattr(raw, "object", None), getattr(raw, "input_tokens", None)
    if kind not in (None, "response.input_tokens") or type(counted) is not int or counted < 0:
        raise InvalidResponseError(
            f"OpenAI's answer is no input token count (object {kind!r:.60}, input_tokens {describe(counted)})",
            provider=PROVIDER,
        )
    return TokenCount(input_tokens=counted, model=request.model, provider=PROVIDER)


def decode_vector(value: Sequence[float] | str) -> list[float]:
    """A float vector, decoding OpenAI's base64 little-endian float32 form when needed."""
    if isinstance(value, str):
        data = base64.b64decode(value)
        if len(data) % 4:
            raise InvalidResponseError("a base64 embedding is not a whole number of float32 values", provider=PROVIDER)
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    return [float(x) for x in value]


@reads_answer
def parse_embeddings(raw: CreateEmbeddingResponse, request: EmbeddingRequest) -> EmbeddingResponse:
    """``embeddings.create`` result → vectors in input order."""
    data = sorted(raw.data or (), key=lambda item: item.index)
    if len(data) != len(request.inputs):
        raise InvalidResponseError(
            f"OpenAI returned {len(data)} embeddings for {len(request.inputs)} inputs", provider=PROVIDER
        )
    usage = Usage(prompt_tokens=raw.usage.prompt_tokens, total_tokens=raw.usage.total_tokens) if raw.usage else Usage()
    return EmbeddingResponse(
        vectors=[decode_vector(item.embedding) for item in data],
        model=raw.model or request.model,
        provider=PROVIDER,
        usage=usage,
    )


# --- Images ----------------------------------------------------------------------------------


@reads_answer
def parse_images(raw: ImagesResponse, request: ImageRequest) -> ImageResponse:
    """The first generated image as bytes; its MIME type from ``output_format`` (else the request's)."""
    first = raw.data[0] if raw.data else None
    if first is not None and not first.b64_json and first.url:
        # llm-core does not fetch it: a download would go to a host the user never configured
        raise InvalidResponseError(
            "the image server answered with a URL instead of image bytes (b64_json), although "
            "response_format='b64_json' was asked; llm-core does not download images: the URL is in `raw`",
            provider=PROVIDER,
            raw=first.url,
        )
    if first is None or not first.b64_json:
        raise InvalidResponseError("OpenAI returned no image bytes", provider=PROVIDER)
    try:
        data = base64.b64decode(first.b64_json, validate=True)
    except ValueError as exc:
        raise InvalidResponseError("OpenAI returned an image that is not valid base64", provider=PROVIDER) from exc
    fmt = getattr(raw, "output_format", None)
    mime = f"image/{fmt}" if fmt else request.mime_type
    usage = None
    if raw.usage is not None:
        usage = Usage(
            prompt_tokens=raw.usage.input_tokens,
            completion_tokens=raw.usage.output_tokens,
            total_tokens=raw.usage.total_tokens,
        )
    metadata = {
        key: value for key in ("size", "quality", "background") if (value := getattr(raw, key, None)) is not None
    }
    return ImageResponse(
        data=data,
        mime_type=mime,
        model=request.model,
        provider=PROVIDER,
        revised_prompt=first.revised_prompt,
        usage=usage,
        metadata=metadata,
    )
