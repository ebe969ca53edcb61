"""What a batch is made of: items (the caller's requests, each with a ``custom_id``), job status,
and the result of a JSON item.

Items are plain data (one JSONL line each), so a job record can keep them and a worker can
receive them; the provider turns each into the same validated request a single call builds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from llm_core.errors import InvalidInputError, UnsupportedFeatureError
from llm_core.responses import CompletionResponse, Usage


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    custom_id: str = Field(min_length=1, max_length=512)
    #: Per-call options, the keywords of the matching single call (``model``, ``temperature``,
    #: ``max_tokens``, ``system``, ``dimensions``, ...).
    options: dict[str, Any] = Field(default_factory=dict)


class ChatItem(_Item):
    """A chat call: ``provider.chat_completion(messages, **options)``."""

    kind: Literal["chat"] = "chat"
    messages: str | list[Any]


class JsonItem(_Item):
    """A structured-output call: ``provider.generate_json(prompt, schema, **options)``. In JSONL
    the schema is a JSON-schema object; from Python it may also be a Pydantic model class."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    kind: Literal["json"] = "json"
    prompt: str | list[Any]
    json_schema: Any = Field(default=None, alias="schema")


class EmbeddingItem(_Item):
    """An embedding call: ``provider.embeddings(input, **options)``."""

    kind: Literal["embedding"] = "embedding"
    input: str | list[str]


class DecisionItem(_Item):
    """A decision call: ``provider.decide(subject, questions, **options)``."""

    kind: Literal["decision"] = "decision"
    subject: str | dict[str, Any]
    questions: list[dict[str, Any]]


BatchItem = Annotated[ChatItem | JsonItem | EmbeddingItem | DecisionItem, Field(discriminator="kind")]
#: Any one item (the discriminated union without its annotation, for signatures).
Item = ChatItem | JsonItem | EmbeddingItem | DecisionItem
#: What ``results()`` yields: the item's id and its response or its typed error.
Result = tuple[str, Any]
ItemKind = Literal["chat", "json", "embedding", "decision"]
ITEM_KINDS: tuple[ItemKind, ...] = ("chat", "json", "embedding", "decision")

_ITEM: TypeAdapter[ChatItem | JsonItem | EmbeddingItem | DecisionItem] = TypeAdapter(BatchItem)

#: The deepest nesting of arrays and objects in an item (the item object itself is level 1).
#: Messages and JSON schemas need far fewer; a deeper value would exhaust the recursion limits
#: of the JSON parser, the validator or the serializer on its way to the provider.
MAX_NESTING = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_item(
    value: Mapping[str, Any] | BaseModel, *, where: str = "item"
) -> ChatItem | JsonItem | EmbeddingItem | DecisionItem:
    """An item from a mapping (a JSONL line decoded) or an item; a line without ``kind`` is a chat.

    Raises :class:`InvalidInputError` naming ``where`` (e.g. ``"line 12"``) and the field."""
    if isinstance(value, ChatItem | JsonItem | EmbeddingItem | DecisionItem):
        _refuse_unsendable(dict(value), where)  # built in Python: no JSON parser saw it
        return value
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where}: a batch item is an object, not {type(value).__name__}")
    data = dict(value)
    _refuse_unsendable(data, where)
    if not data.get("custom_id"):
        raise InvalidInputError(f"{where}: custom_id is missing (every batch item needs a unique custom_id)")
    data.setdefault("kind", "chat")
    if data["kind"] not in ITEM_KINDS:
        raise UnsupportedFeatureError(
            f"{where}: batch APIs take chat, json, embedding and decision items, not {data['kind']!r}"
        )
    try:
        return _ITEM.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ()) if p not in ITEM_KINDS)
        raise InvalidInputError(f"{where}: invalid {field or 'item'}: {err['msg']}") from None


def _children(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, child in value.items():
            name = f"{path}.{key}" if path else str(key)
            yield name, key
            yield name, child
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            yield f"{path}[{index}]", child


def _refuse_unsendable(data: Mapping[str, Any], where: str) -> None:
    """Refuse what an item cannot carry to a provider, naming the place: a number that is not
    finite (JSON has none: stored, it would come back as null), a lone surrogate (not UTF-8),
    nesting deeper than :data:`MAX_NESTING`. Walked without recursion, so depth cannot hurt."""
    stack: list[tuple[str, Any, int]] = [("", data, 1)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInputError(f"{where}: {path or 'item'} is {value}: not a finite number")
        if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            raise InvalidInputError(
                f"{where}: {path or 'item'} contains a lone surrogate character (U+D800 to U+DFFF), which "
                "cannot be sent as UTF-8: fix the text's decoding"
            )
        if isinstance(value, Mapping | list | tuple):
            if depth > MAX_NESTING:
                raise InvalidInputError(f"{where}: nested deeper than {MAX_NESTING} levels of arrays and objects")
            stack.extend((name, child, depth + 1) for name, child in _children(value, path))


class _NotFinite(Exception):
    """A ``NaN`` or ``Infinity`` token, which Python's JSON parser would accept."""


def _not_finite(token: str) -> Any:
    raise _NotFinite(token)


def item_from_json(line: str | bytes, *, where: str) -> ChatItem | JsonItem | EmbeddingItem | DecisionItem:
    """An item from one JSONL line; a line that is not a JSON object (or holds ``NaN`` or
    ``Infinity``, or nests deeper than :data:`MAX_NESTING`) names ``where``."""
    try:
        data = json.loads(line, parse_constant=_not_finite)
    except _NotFinite as exc:
        raise InvalidInputError(
            f"{where}: {exc} is not a finite number (JSON has no NaN or Infinity); give a number"
        ) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{where}: not JSON ({exc.msg} at column {exc.colno}); the input must be JSONL"
        ) from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{where}: nested deeper than {MAX_NESTING} levels of arrays and objects") from exc
    return parse_item(data, where=where)


def item_to_json(item: ChatItem | JsonItem | EmbeddingItem | DecisionItem) -> str:
    """One JSONL line for ``item`` (what :func:`item_from_json` reads back)."""
    return item.model_dump_json(by_alias=True, exclude_defaults=False)


class BatchState(StrEnum):
    """Where a batch job is. The last four are final."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        return self in _FINAL


_FINAL = frozenset({BatchState.COMPLETED, BatchState.FAILED, BatchState.EXPIRED, BatchState.CANCELLED})


class BatchStatus(BaseModel):
    """A job's state with its counts (``None`` where the provider does not report one yet)."""

    model_config = ConfigDict(frozen=True)

    id: str
    state: BatchState
    provider: str
    total: int | None = None
    completed: int | None = None
    failed: int | None = None
    #: The provider's own state name (e.g. ``in_progress``, ``JOB_STATE_SUCCEEDED``).
    provider_state: str | None = None
    #: Why the whole job failed, when it did.
    error: str | None = None

    @property
    def final(self) -> bool:
        return self.state.final


class JsonResponse(BaseModel):
    """The result of a JSON item: the decoded (with a Pydantic schema, validated) value. Batch
    jobs also report model, provider and usage; local mode (``generate_json``) only the value."""

    data: Any
    model: str | None = None
    provider: str | None = None
    usage: Usage = Field(default_factory=Usage)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, data: Any, response: CompletionResponse) -> JsonResponse:
        return cls(data=data, model=response.model, provider=response.provider, usage=response.usage)


__all__ = [
    "ITEM_KINDS",
    "MAX_NESTING",
    "BatchItem",
    "BatchState",
    "BatchStatus",
    "ChatItem",
    "DecisionItem",
    "EmbeddingItem",
    "ItemKind",
    "JsonItem",
    "JsonResponse",
    "item_from_json",
    "item_to_json",
    "parse_item",
]
