"""Provider-neutral requests: what the public methods validate and hand to a plugin's mapper."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from llm_core.builtin_tools import AnyBuiltinTool
from llm_core.decisions import DecisionSubject, Question
from llm_core.errors import InvalidInputError
from llm_core.messages import ChatMessage, ImagePart, normalize_messages
from llm_core.streaming import CallContext
from llm_core.tools import ToolSpec

M = TypeVar("M", bound=BaseModel)

ThinkingLevel = Literal["minimal", "low", "medium", "high"]


class ThinkingOptions(BaseModel):
    """Ask for thinking output. ``level`` maps to Gemini ``thinking_level`` and OpenAI reasoning
    ``effort``; ``budget`` to Gemini ``thinking_budget``; ``summary`` to OpenAI's reasoning summary."""

    model_config = ConfigDict(frozen=True)

    include_thoughts: bool = True
    budget: int | None = Field(default=None, ge=-1, le=1_000_000)
    level: ThinkingLevel | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None


class Prompt(BaseModel):
    """A prompt object: text or messages, plus per-call settings (a temperature of ``0.0`` is a value)."""

    model_config = ConfigDict(frozen=True)

    text: str | None = None
    messages: list[ChatMessage] | None = None
    system: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None

    def to_messages(self) -> list[ChatMessage]:
        turns: list[ChatMessage] = []
        if self.system:
            turns.append(ChatMessage.system(self.system))
        if self.messages:
            turns.extend(self.messages)
        if self.text:
            turns.append(ChatMessage.user(self.text))
        return normalize_messages(turns)


@dataclass(frozen=True)
class Sampling:
    """Marks a :class:`ChatRequest` field as a provider-neutral per-call option. Declared once,
    on the field: a call passes it by name, a provider takes it as a call default (a plugin's
    ``call_defaults`` include :data:`SAMPLING_OPTIONS`), and observers hear it when it is set,
    as the OpenTelemetry GenAI attribute ``otel`` (when one is named)."""

    otel: str | None = None


class ChatRequest(BaseModel):
    """Everything a chat-style call needs. Validated before a plugin sees it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    messages: list[ChatMessage]
    model: str
    temperature: Annotated[float | None, Sampling("gen_ai.request.temperature")] = Field(default=None, ge=0.0, le=2.0)
    max_tokens: Annotated[int | None, Sampling("gen_ai.request.max_tokens")] = Field(default=None, ge=1, le=10_000_000)
    top_p: Annotated[float | None, Sampling("gen_ai.request.top_p")] = Field(default=None, ge=0.0, le=1.0)
    stop: Annotated[list[str] | None, Sampling()] = None
    tools: list[ToolSpec] | None = None
    tool_choice: str | None = None
    builtin_tools: list[AnyBuiltinTool] | None = None
    thinking: ThinkingOptions | None = None
    json_mode: bool = False
    response_schema: Any = None  # a Pydantic model class or a JSON-schema dict
    call_context: CallContext | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("tool_choice must be 'auto', 'none', 'required' or a tool name")
        return value


#: The sampling options (name → its mark), read from :class:`ChatRequest`'s fields.
SAMPLING: dict[str, Sampling] = {
    name: mark
    for name, field in ChatRequest.model_fields.items()
    for mark in field.metadata
    if isinstance(mark, Sampling)
}
SAMPLING_OPTIONS = frozenset(SAMPLING)
#: The options observers hear (``event[name]`` when set), and their OpenTelemetry attributes.
OBSERVED_OPTIONS: dict[str, str] = {name: mark.otel for name, mark in SAMPLING.items() if mark.otel}
#: The :class:`ChatRequest` fields a call passes by name (any other keyword of a chat call is a
#: provider option): the sampling options, tools and output settings.
CALL_FIELDS = frozenset(ChatRequest.model_fields) - {"messages", "model", "thinking", "call_context", "options"}


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    inputs: list[str]
    model: str
    dimensions: int | None = Field(default=None, ge=1, le=65_536)
    task_type: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class ImageRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt: str
    model: str
    input_images: list[ImagePart] = Field(default_factory=list)
    size: str | None = None
    aspect_ratio: str | None = None
    quality: str | None = None
    mime_type: str = "image/png"
    options: dict[str, Any] = Field(default_factory=dict)


class DecisionRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    subject: DecisionSubject
    questions: list[Question]
    model: str
    options: dict[str, Any] = Field(default_factory=dict)


def build(model_cls: type[M], provider: str, **values: Any) -> M:
    """Validate a request, turning Pydantic's error into an :class:`InvalidInputError`."""
    try:
        result = model_cls.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        raise InvalidInputError(f"invalid {where or 'request'}: {err['msg']}", provider=provider) from None
    return result


def refuse_surrogates(value: Any, where: str, provider: str) -> None:
    """Raise :class:`InvalidInputError` if any text in ``value`` (strings, inside mappings,
    lists and Pydantic models) holds a lone surrogate: such text cannot be encoded as UTF-8, so no
    provider can be sent it. The error names the place, starting with ``where``."""
    found = _surrogate_at(value)
    if found is not None:
        place = where + "".join(reversed(found))
        raise InvalidInputError(
            f"{place} contains a lone surrogate character (U+D800 to U+DFFF), which cannot be sent as UTF-8: "
            "fix the text's decoding",
            provider=provider,
        )


def _surrogate_at(value: Any) -> list[str] | None:
    """The path to the first text in ``value`` that holds a lone surrogate, innermost step first
    (built only when one is found), or ``None``."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return []
        return None
    pairs: Iterable[tuple[Any, Any]]
    # cheap checks first: most values are plain lists, models and leaves (the Mapping ABC is slow)
    if isinstance(value, list | tuple):
        pairs, step = enumerate(value), "[{}]"
    elif isinstance(value, BaseModel):  # fields and extras, read from the instance's dicts
        pairs, step = [*vars(value).items(), *(value.model_extra or {}).items()], ".{}"
    elif value is None or isinstance(value, int | float | bytes):
        return None
    elif isinstance(value, Mapping):
        pairs, step = ((key, part) for key, item in value.items() for part in (key, item)), ".{}"
    else:
        return None
    for label, item in pairs:
        found = _surrogate_at(item)
        if found is not None:
            found.append(step.format(label))
            return found
    return None


def coerce_tools(tools: Iterable[ToolSpec | Mapping[str, Any]], provider: str) -> list[ToolSpec]:
    if isinstance(tools, str | bytes | Mapping | BaseModel) or not isinstance(tools, Iterable):
        raise InvalidInputError(
            f"tools must be a list of ToolSpec or mappings with 'name', 'description' and 'parameters', "
            f"not {type(tools).__name__}",
            provider=provider,
        )
    result: list[ToolSpec] = []
    for index, tool in enumerate(tools):
        if isinstance(tool, ToolSpec):
            result.append(tool)
            continue
        if not isinstance(tool, Mapping):
            raise InvalidInputError(
                f"tool {index} must be a ToolSpec or a mapping with 'name', 'description' and 'parameters', "
                f"not {type(tool).__name__}",
                provider=provider,
            )
        try:
            result.append(ToolSpec.model_validate(dict(tool)))
        except (ValidationError, TypeError, ValueError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise InvalidInputError(f"tool {index} is invalid: {detail}", provider=provider) from None
    names = [t.name for t in result]
    if len(set(names)) != len(names):
        raise InvalidInputError("tool names must be unique", provider=provider)
    if not result:
        raise InvalidInputError("chat_completion_with_tools needs at least one tool", provider=provider)
    return result
