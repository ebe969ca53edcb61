"""Pure response parsers: openai SDK results → llm-core responses.

The functions read SDK objects by attribute only (``TYPE_CHECKING`` imports), so they also accept
objects built by ``model_construct`` and tolerate fields the SDK does not know.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from pydantic import BaseModel

from core_openai_plugin.errors import error_from_code
from core_openai_plugin.request_mapper import REASONING_ITEMS
from llm_core.decisions import DecisionAnswer, DecisionResponse, ProbabilityKind, Question, ScoreQuestion, yes_no_answer
from llm_core.errors import InvalidDecisionResponse, InvalidResponseError
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest
from llm_core.responses import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    CompletionResponse,
    EmbeddingResponse,
    ImageResponse,
    Usage,
)
from llm_core.tools import ToolCall

if TYPE_CHECKING:
    from openai.types import CreateEmbeddingResponse, ImagesResponse
    from openai.types.decision import Decision
    from openai.types.responses import Response

PROVIDER = "openai"
_MODEL_DUMP = BaseModel.model_dump
_validate_usage = Usage.__pydantic_validator__.validate_python
_validate_completion = CompletionResponse.__pydantic_validator__.validate_python


def dump(obj: Any) -> dict[str, Any]:
    """An SDK object as a plain JSON-ready dict (unset fields left out)."""
    kind = _DUMP_KINDS.get(type(obj))
    if kind is None:
        kind = _DUMP_KINDS[type(obj)] = _dump_kind(type(obj))
    if kind is not _GENERAL:
        if kind is not _SERIALIZED:
            # a model of int fields only (the usage of every call): the same dict, built directly
            walked = _walk_ints(obj, kind)
            if walked is not None:
                return walked
        # what BaseModel.model_dump runs, without its Python frame
        dumped: dict[str, Any] = obj.__pydantic_serializer__.to_python(
            obj, mode="json", exclude_unset=True, by_alias=True
        )
        return dumped
    if isinstance(obj, Mapping):
        return dict(obj)
    result: dict[str, Any] = obj.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return result


#: How :func:`dump` treats a type: ``_GENERAL`` (mappings, models with their own ``model_dump``,
#: anything else), ``_SERIALIZED`` (a Pydantic model dumped by its serializer) or an int plan.
_GENERAL: dict[str, Any] = {}
_SERIALIZED: dict[str, Any] = {}
_DUMP_KINDS: dict[type, dict[str, Any]] = {}


def _dump_kind(cls: type) -> dict[str, Any]:
    if issubclass(cls, Mapping) or not issubclass(cls, BaseModel) or cls.model_dump is not _MODEL_DUMP:
        return _GENERAL
    return _int_plan(cls) or _SERIALIZED


def _int_plan(cls: type[BaseModel], outer: tuple[type, ...] = ()) -> dict[str, Any] | None:
    """Field name → ``None`` (an ``int`` field) or the plan of a nested model, for a model whose
    serializer can only turn those fields into themselves: no aliases, no exclusions, no custom
    or annotated serializers, no computed fields, no encoders, not a root model. ``None`` when
    ``cls`` is not such a model. :func:`_walk_ints` applies a plan."""
    decorators = cls.__pydantic_decorators__
    if (
        cls.__pydantic_root_model__
        or decorators.field_serializers
        or decorators.model_serializers
        or cls.model_computed_fields
        or cls.model_config.get("json_encoders")
    ):
        return None
    plan: dict[str, Any] = {}
    for name, field in cls.model_fields.items():
        if (
            field.alias is not None
            or field.serialization_alias is not None
            or field.exclude
            or getattr(field, "exclude_if", None) is not None
            or field.metadata
        ):
            return None
        options = [arg for arg in get_args(field.annotation) if arg is not type(None)]
        if len(options) != 1 or get_origin(field.annotation) not in (Union, UnionType):
            options = [field.annotation]
        (annotation,) = options
        if annotation is int:
            plan[name] = None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in (cls, *outer):
            nested = _int_plan(annotation, (cls, *outer))
            if nested is None or annotation.model_dump is not _MODEL_DUMP or issubclass(annotation, Mapping):
                return None
            plan[name] = (annotation, nested)
        else:
            return None
    return plan


def _walk_ints(obj: Any, plan: dict[str, Any]) -> dict[str, Any] | None:
    """The set fields of ``obj`` in its field order when every one is an exact ``int`` or an
    instance of exactly the nested model of its plan, and there are no extras anywhere; ``None``
    otherwise (then the serializer decides, and warns where it would). Nested models are walked
    from a work list in this one frame (every call dumps a usage with two nested models)."""
    root: dict[str, Any] = {}
    pending: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [(obj, plan, root)]
    while pending:
        obj, plan, result = pending.pop()
        if obj.__pydantic_extra__:
            return None
        values: dict[str, Any] = obj.__dict__
        if len(values) != len(plan):
            return None
        fields_set = obj.__pydantic_fields_set__
        for name, value in values.items():
            if name not in fields_set:
                if name not in plan:
                    return None
                continue
            if type(value) is int:
                if plan.get(name, False) is not None:
                    return None
                result[name] = value
                continue
            nested = plan.get(name)
            if nested is None or type(value) is not nested[0]:
                return None
            child: dict[str, Any] = {}
            result[name] = child  # filled when its turn comes: the key keeps its place
            pending.append((value, nested[1], child))
    return root


def usage_dump(usage: Any) -> dict[str, Any]:
    """:func:`dump` of an SDK usage (``metadata["raw_usage"]``). The usage of almost every answer
    (all five fields set, cached and reasoning token details, ints, no extras) is built directly:
    every call dumps one, and the walk of :func:`dump` costs twice as much."""
    if _SDK is None:
        _load_sdk_types()
    if type(usage) is _RESPONSE_USAGE and not usage.__pydantic_extra__ and len(usage.__pydantic_fields_set__) == 5:
        values = usage.__dict__
        prompt, output, total = values["input_tokens"], values["output_tokens"], values["total_tokens"]
        cached_details, reasoning_details = values["input_tokens_details"], values["output_tokens_details"]
        if (
            type(cached_details) is _INPUT_TOKENS_DETAILS
            and type(reasoning_details) is _OUTPUT_TOKENS_DETAILS
            and not cached_details.__pydantic_extra__
            and not reasoning_details.__pydantic_extra__
            and cached_details.__pydantic_fields_set__ == _CACHED_ONLY
            and reasoning_details.__pydantic_fields_set__ == _REASONING_ONLY
        ):
            cached = cached_details.__dict__["cached_tokens"]
            reasoning = reasoning_details.__dict__["reasoning_tokens"]
            if (
                type(prompt) is int
                and type(output) is int
                and type(total) is int
                and type(cached) is int
                and type(reasoning) is int
            ):
                return {
                    "input_tokens": prompt,
                    "input_tokens_details": {"cached_tokens": cached},
                    "output_tokens": output,
                    "output_tokens_details": {"reasoning_tokens": reasoning},
                    "total_tokens": total,
                }
    return dump(usage)


_CACHED_ONLY = frozenset({"cached_tokens"})
_REASONING_ONLY = frozenset({"reasoning_tokens"})


def usage_from(usage: Any) -> Usage:
    """OpenAI usage → :class:`Usage`. ``completion_tokens`` counts visible output only: OpenAI's
    ``output_tokens`` include the reasoning tokens, which go to ``thinking_tokens``."""
    if usage is None:
        return Usage()
    if _SDK is None:
        _load_sdk_types()
    if type(usage) is _RESPONSE_USAGE:
        # the SDK's own usage (every call): its fields read from __dict__, as getattr reads them
        values = usage.__dict__
        prompt = values.get("input_tokens")
        output = values.get("output_tokens")
        total = values.get("total_tokens")
        details = values.get("output_tokens_details")
        if details is None:
            reasoning = None
        elif type(details) is _OUTPUT_TOKENS_DETAILS:
            reasoning = details.__dict__.get("reasoning_tokens", _UNKNOWN)
        else:
            reasoning = _UNKNOWN  # anything else: the general path decides
        if (
            type(prompt) is int
            and prompt  # 0 would fall back to a ``prompt_tokens`` attribute
            and type(output) is int
            and type(total) is int
            and (reasoning is None or type(reasoning) is int)
        ):
            fast: Usage = _validate_usage(
                {
                    "prompt_tokens": prompt,
                    "completion_tokens": output - (reasoning or 0),
                    "total_tokens": total or prompt + output,
                    "thinking_tokens": reasoning,
                }
            )
            return fast
    return _usage_general(usage)


def _usage_general(usage: Any) -> Usage:
    """:func:`usage_from` for any usage-like object (Responses, Chat Completions, compatible servers)."""
    prompt = int(getattr(usage, "input_tokens", None) or getattr(usage, "prompt_tokens", 0) or 0)
    output = int(getattr(usage, "output_tokens", 0) or 0)
    details = getattr(usage, "output_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    thinking = int(reasoning) if reasoning is not None else None
    total = int(getattr(usage, "total_tokens", 0) or 0) or prompt + output
    # Usage's own validator, as Usage(...) runs it (one per call, so without BaseModel.__init__)
    result: Usage = _validate_usage(
        {
            "prompt_tokens": prompt,
            "completion_tokens": output - (thinking or 0),
            "total_tokens": total,
            "thinking_tokens": thinking,
        }
    )
    return result


#: SDK classes of the fast paths, looked up on first use (importing this module imports no SDK).
_SDK: tuple[type, ...] | None = None
_UNKNOWN: Any = object()
_RESPONSE: type | None = None
_OUTPUT_MESSAGE: type | None = None
_OUTPUT_TEXT: type | None = None
_RESPONSE_USAGE: type[BaseModel] | None = None
_INPUT_TOKENS_DETAILS: type[BaseModel] | None = None
_OUTPUT_TOKENS_DETAILS: type[BaseModel] | None = None


def _load_sdk_types() -> None:
    global _SDK, _RESPONSE, _OUTPUT_MESSAGE, _OUTPUT_TEXT
    global _RESPONSE_USAGE, _INPUT_TOKENS_DETAILS, _OUTPUT_TOKENS_DETAILS
    try:
        from openai.types.responses import Response, ResponseOutputMessage, ResponseOutputText
        from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails, ResponseUsage
    except ImportError:  # pragma: no cover - the SDK is a dependency; without it nothing is fast
        _SDK = ()
        return
    _RESPONSE, _OUTPUT_MESSAGE, _OUTPUT_TEXT = Response, ResponseOutputMessage, ResponseOutputText
    _RESPONSE_USAGE, _INPUT_TOKENS_DETAILS = ResponseUsage, InputTokensDetails
    _OUTPUT_TOKENS_DETAILS = OutputTokensDetails
    _SDK = (Response, ResponseOutputMessage, ResponseOutputText, ResponseUsage, InputTokensDetails, OutputTokensDetails)


def tool_call(call_id: str, name: str, arguments: str | None) -> ToolCall:
    """A function call with its JSON arguments decoded; bad JSON is an invalid response."""
    try:
        return ToolCall(id=call_id, name=name, arguments=arguments or "")
    except ValueError as exc:
        raise InvalidResponseError(
            f"OpenAI sent unusable arguments for tool {name!r}: {exc}", provider=PROVIDER, raw=arguments
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


def parse_response(raw: Response, request: ChatRequest) -> CompletionResponse:
    """A Responses API result → :class:`CompletionResponse` (text, thinking, tool calls, usage)."""
    if _SDK is None:
        _load_sdk_types()
    # Most answers: a completed SDK response whose output is one message of one output_text part.
    # Read from the objects' __dict__ in this one frame (every call parses), it becomes what
    # _parse_general builds for it: stop, no thinking, no tool calls, no refusal.
    values = raw.__dict__ if type(raw) is _RESPONSE else _NOT_PLAIN
    output = values.get("output")
    if values.get("status") == "completed" and type(output) is list and len(output) == 1:
        message = output[0]
        item = message.__dict__ if type(message) is _OUTPUT_MESSAGE else _NOT_PLAIN
        content = item.get("content")
        if item.get("type") == "message" and type(content) is list and len(content) == 1:
            part = content[0].__dict__ if type(content[0]) is _OUTPUT_TEXT else _NOT_PLAIN
            text = part.get("text")
            if part.get("type") == "output_text" and type(text) is str:
                usage = values.get("usage")
                metadata: dict[str, Any] = {"response_id": values.get("id"), "status": "completed"}
                if usage is not None:
                    metadata["raw_usage"] = usage_dump(usage)
                response: CompletionResponse = _validate_completion(
                    {
                        "content": text,
                        "model": values.get("model") or request.model,
                        "provider": PROVIDER,
                        "usage": usage_from(usage),
                        "finish_reason": FINISH_STOP,
                        "tool_calls": None,
                        "thinking": None,
                        "metadata": metadata,
                    }
                )
                return response
    return _parse_general(raw, request)


_NOT_PLAIN: dict[str, Any] = {}  # stands for the __dict__ of anything but the expected SDK type


def _parse_general(raw: Response, request: ChatRequest) -> CompletionResponse:
    """:func:`parse_response` for any response (and any object read by attribute)."""
    status = getattr(raw, "status", None)
    error = getattr(raw, "error", None)
    if status == "failed" and error is not None:
        raise error_from_code(error.code, error.message, provider=PROVIDER)
    texts: list[str] = []
    refusals: list[str] = []
    thinking: list[str] = []
    reasoning: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    for item in getattr(raw, "output", None) or ():
        kind = getattr(item, "type", None)
        if kind == "message":
            for part in getattr(item, "content", None) or ():
                if part.type == "output_text":
                    texts.append(part.text)
                elif part.type == "refusal":
                    refusals.append(part.refusal)
        elif kind == "reasoning":
            thinking.extend(reasoning_texts(item))
            reasoning.append(reasoning_item(item))
        elif kind == "function_call":
            calls.append(
                tool_call(
                    str(getattr(item, "call_id", "")), str(getattr(item, "name", "")), getattr(item, "arguments", None)
                )
            )
    content = "".join(texts)
    refused = bool(refusals) and not content
    incomplete = getattr(raw, "incomplete_details", None)
    reason = finish_reason(status, getattr(incomplete, "reason", None), has_calls=bool(calls), refused=refused)
    usage = getattr(raw, "usage", None)
    metadata: dict[str, Any] = {"response_id": getattr(raw, "id", None), "status": status}
    if reasoning:
        metadata[REASONING_ITEMS] = reasoning
    if refusals:
        metadata["refusal"] = "".join(refusals)
    if usage is not None:
        metadata["raw_usage"] = usage_dump(usage)
    # the model's own validator, as CompletionResponse(...) runs it (one per call)
    response: CompletionResponse = _validate_completion(
        {
            "content": content if not refused else "".join(refusals),
            "model": getattr(raw, "model", None) or request.model,
            "provider": PROVIDER,
            "usage": usage_from(usage),
            "finish_reason": reason,
            "tool_calls": calls or None,
            "thinking": "\n\n".join(thinking) or None,
            "metadata": metadata,
        }
    )
    return response


# --- Embeddings ------------------------------------------------------------------------------


def decode_vector(value: Sequence[float] | str) -> list[float]:
    """A float vector, decoding OpenAI's base64 little-endian float32 form when needed."""
    if isinstance(value, str):
        data = base64.b64decode(value)
        if len(data) % 4:
            raise InvalidResponseError("a base64 embedding is not a whole number of float32 values", provider=PROVIDER)
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    return [float(x) for x in value]


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


def parse_images(raw: ImagesResponse, request: ImageRequest) -> ImageResponse:
    """The first generated image as bytes; its MIME type from ``output_format`` (else the request's)."""
    first = raw.data[0] if raw.data else None
    if first is None or not first.b64_json:
        detail = " (it sent a URL: use a GPT image model)" if first is not None and first.url else ""
        raise InvalidResponseError(f"OpenAI returned no image bytes{detail}", provider=PROVIDER)
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


# --- Decisions -------------------------------------------------------------------------------


def parse_decision(raw: Decision, request: DecisionRequest) -> DecisionResponse:
    """Native decision answers → :class:`DecisionResponse` (probability kind ``calibrated``).

    Answers are matched to questions by ``name`` (by position when a name is missing). A refusal
    raises :class:`InvalidDecisionResponse` naming the question; the core then checks every answer.
    """
    questions = list(request.questions)
    by_key = {q.key: q for q in questions}
    answers: dict[str, DecisionAnswer] = {}
    for index, answer in enumerate(raw.answers or ()):
        key = getattr(answer, "name", None) or (questions[index].key if index < len(questions) else f"answer_{index}")
        question = by_key.get(key)
        if answer.type == "refusal":
            raise InvalidDecisionResponse("the model refused to answer this question", provider=PROVIDER, key=key)
        if question is None:
            answers[key] = DecisionAnswer(key=key, kind="choice")  # rejected by validation as never asked
            continue
        answers[key] = decision_answer(question, answer)
    usage = usage_from(raw.usage)
    return DecisionResponse(
        answers=answers,
        probability_kind=ProbabilityKind.CALIBRATED,
        model=raw.model or request.model,
        provider=PROVIDER,
        usage=usage,
        metadata={"raw_answers": [dump(a) for a in raw.answers or ()]},
    )


def decision_answer(question: Question, answer: Any) -> DecisionAnswer:
    """One native answer in the shape of our question's kind (a wrong kind fails validation)."""
    key = question.key
    if answer.type == "predicate":
        return yes_no_answer(key, float(answer.probability))
    if answer.type == "choice":
        if isinstance(answer.choice, bool):
            raise InvalidDecisionResponse(
                f"choice {answer.choice!r} is a boolean; the options are strings", provider=PROVIDER, key=key
            )
        probabilities = {str(p.value): float(p.probability) for p in answer.probabilities or ()}
        return DecisionAnswer(
            key=key,
            kind="choice",
            choice=str(answer.choice),
            confidence=answer.confidence,
            probabilities=probabilities or None,
        )
    if answer.type == "score" and isinstance(question, ScoreQuestion):
        return _score_answer(question, answer)
    kind = {"predicate": "yes_no", "score": "score"}.get(answer.type, "choice")
    return DecisionAnswer(key=key, kind=kind)  # validation names the mismatch


def _score_answer(question: ScoreQuestion, answer: Any) -> DecisionAnswer:
    """Levels are identified by label; the answer is the level whose ``value`` equals ``score``
    when ``score`` is whole, else the most probable level."""
    index_of_value: dict[int, int] = {}
    probabilities: dict[str, float] = {}
    for entry in answer.probabilities or ():
        if entry.label not in question.levels:
            raise InvalidDecisionResponse(f"level {entry.label!r} was not offered", provider=PROVIDER, key=question.key)
        index = question.levels.index(entry.label)
        index_of_value[int(entry.value)] = index
        probabilities[str(index)] = float(entry.probability)
    score = float(answer.score)
    if score.is_integer() and int(score) in index_of_value:
        chosen: float = index_of_value[int(score)]
    elif probabilities:
        chosen = float(max(probabilities, key=lambda k: probabilities[k]))
    else:
        chosen = score
    label = question.levels[int(chosen)] if float(chosen).is_integer() and 0 <= chosen < len(question.levels) else None
    return DecisionAnswer(
        key=question.key,
        kind="score",
        value=float(chosen),
        choice=label,
        probabilities=probabilities or None,
        confidence=answer.confidence,
    )
