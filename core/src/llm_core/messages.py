"""Chat messages and their content parts."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)

from llm_core.errors import InvalidInputError
from llm_core.tools import ToolCall


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


URL_RULE = "url must be an http(s) or data: URL (or gs://, for a provider that reads Cloud Storage)"
#: The URL schemes every provider takes in a part; ``gs`` (a Cloud Storage object, which Vertex AI
#: reads itself) only where the provider says so (``url_schemes``).
WEB_SCHEMES = frozenset({"http", "https", "data"})


def is_web_or_data_url(url: object) -> bool:
    """Only URLs a provider fetches itself (http, https, a ``gs://`` Cloud Storage object) or
    carries inline (data:): a ``file:``, ``ftp:`` or ``javascript:`` URL would be refused upstream,
    or worse, read."""
    return isinstance(url, str) and url.lower().startswith(("http://", "https://", "data:", "gs://"))


if TYPE_CHECKING:  # to type checkers, a plain model: only the error raised differs
    _CallerInput = BaseModel
else:

    class _RaisesInvalidInput(type(BaseModel)):  # BaseModel's metaclass, reached by its public class
        """Calling the class (``ImagePart(url=...)``, ``ChatMessage.user(...)``) turns Pydantic's
        refusal into :class:`InvalidInputError`, the error every builder raises before anything is
        sent. Only the call (Python's ``type.__call__``): parsing (``model_validate``, a part inside a
        message) never goes through it, so it keeps its ``ValidationError`` and costs nothing more (a
        custom ``__init__`` would run on every nested validation and nest its error in the outer
        one)."""

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().__call__(*args, **kwargs)
            except ValidationError as exc:
                raise InvalidInputError(f"{cls.__name__} is invalid: {_first_error(exc)}") from None

    class _CallerInput(BaseModel, metaclass=_RaisesInvalidInput):
        """A model callers build by hand: bad input is :class:`InvalidInputError`."""


class TextPart(_CallerInput):
    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: Annotated[str, Strict()]  # bytes are not text: Pydantic would decode them silently


class _BinaryPart(_CallerInput):
    """Inline bytes (``data``) or a URL, with a MIME type. In JSON, ``data`` is base64 text."""

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64")

    data: bytes | None = None
    url: str | None = None
    mime_type: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _mime_from_data_url(cls, values: Any) -> Any:
        """A ``data:<mime>;base64,…`` URL declares the MIME type when none is given."""
        if isinstance(values, Mapping) and not values.get("mime_type"):
            data = values.get("data")
            if isinstance(data, str) and data.startswith("data:"):
                mime = data[5:].split(",", 1)[0].split(";", 1)[0].strip()
                if mime:
                    return {**values, "mime_type": mime}
        return values

    @field_validator("data", mode="before")
    @classmethod
    def _decode_base64(cls, value: Any) -> Any:
        if isinstance(value, str):  # base64 text, with or without a data: URL prefix
            if value.startswith("data:"):
                _, comma, value = value.partition(",")
                if not comma:
                    raise ValueError("a data: URL needs a ',' before its base64 payload")
            altchars = b"-_" if "-" in value or "_" in value else None  # URL-safe (pydantic's JSON)
            try:
                return base64.b64decode(value, altchars=altchars, validate=True)
            except ValueError as exc:
                raise ValueError("data must be bytes or base64 text") from exc
        return value

    @field_validator("url")
    @classmethod
    def _web_or_data_url(cls, value: str | None) -> str | None:
        if value is not None and not is_web_or_data_url(value):
            raise ValueError(URL_RULE)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> _BinaryPart:
        if (self.data is None) == (self.url is None):
            raise ValueError("give exactly one of data (bytes) or url")
        if self.data is not None and not self.data:
            raise ValueError("data is empty")
        return self

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else 0

    def base64(self) -> str:
        return base64.b64encode(self.data or b"").decode("ascii")

    def __repr__(self) -> str:  # never dump megabytes of bytes into a repr
        source = f"{self.size} bytes" if self.data is not None else repr(self.url)
        return f"{type(self).__name__}({source}, mime_type={self.mime_type!r})"

    __str__ = __repr__


class ImagePart(_BinaryPart):
    type: Literal["image"] = "image"


class DocumentPart(_BinaryPart):
    type: Literal["document"] = "document"
    name: str | None = None


ContentPart = Annotated[TextPart | ImagePart | DocumentPart, Field(discriminator="type")]


class ChatMessage(_CallerInput):
    """One chat turn. ``content`` is a string or a list of parts.

    Assistant turns may carry ``tool_calls``; tool turns carry ``tool_call_id`` (and ``name``).
    Extra keys of plain mappings are kept (``model_extra``) for provider-specific use.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    role: Role
    content: str | list[ContentPart] = ""
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content", mode="before")
    @classmethod
    def _parts_from_strings(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list):
            return [{"type": "text", "text": p} if isinstance(p, str) else p for p in value]
        return value

    def model_post_init(self, context: Any, /) -> None:
        """Role checks, once per message. Pydantic reports a ``ValueError`` raised here as a
        validation error, exactly as from an ``after`` model validator; unlike one, this does not
        run again each time a validated message is put into another model (a ``ChatRequest``)."""
        if self.role is Role.TOOL and not (self.tool_call_id or self.name):
            raise ValueError("a tool message needs tool_call_id (or the tool's name)")
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise ValueError("only assistant messages carry tool_calls")

    @property
    def text(self) -> str:
        """The text of the message (text parts joined without separator)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def parts(self) -> list[TextPart | ImagePart | DocumentPart]:
        """Content as a list of parts (a string becomes one text part, empty gives none)."""
        if isinstance(self.content, str):
            return [TextPart(text=self.content)] if self.content else []
        return list(self.content)

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role=Role.SYSTEM, content=content)

    @classmethod
    def user(cls, content: str | Sequence[TextPart | ImagePart | DocumentPart | str]) -> ChatMessage:
        if not isinstance(content, str | list | tuple):
            raise InvalidInputError(f"a user message is a string or a list of parts, not {type(content).__name__}")
        parts: Any = content if isinstance(content, str) else list(content)
        return cls(role=Role.USER, content=parts)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] | None = None) -> ChatMessage:
        return cls(role=Role.ASSISTANT, content=content, tool_calls=list(tool_calls) if tool_calls else None)

    @classmethod
    def tool(cls, tool_call_id: str, content: str, name: str | None = None) -> ChatMessage:
        return cls(role=Role.TOOL, content=content, tool_call_id=tool_call_id, name=name)


MessageLike = ChatMessage | Mapping[str, Any]


def normalize_messages(messages: Iterable[MessageLike] | str) -> list[ChatMessage]:
    """Turn typed messages, plain ``{"role", "content"}`` mappings or one string into messages.

    Raises :class:`InvalidInputError` (nothing is sent) for an empty list, an unknown role or
    malformed content, naming the message index.
    """
    if isinstance(messages, str):
        if not messages.strip():
            raise InvalidInputError("the prompt is empty: give some text to send")
        return [ChatMessage(role=Role.USER, content=messages)]
    if isinstance(messages, Mapping | ChatMessage | bytes) or not isinstance(messages, Iterable):
        raise InvalidInputError(
            "messages must be a string or a list of ChatMessage / {'role', 'content'} mappings, "
            f"not {type(messages).__name__}"
        )
    result = [_message(index, message) for index, message in enumerate(messages)]
    if not result:
        raise InvalidInputError("no messages given: send at least one user message")
    if all(turn.role is Role.SYSTEM for turn in result):
        raise InvalidInputError("only system messages given: add a user message")
    return result


def _message(index: int, message: Any) -> ChatMessage:
    if isinstance(message, ChatMessage):
        return message
    if not isinstance(message, Mapping):
        raise InvalidInputError(
            f"message {index} must be a ChatMessage or a mapping with 'role' and 'content', "
            f"not {type(message).__name__}"
        )
    try:
        return ChatMessage.model_validate(dict(message))
    except ValidationError as exc:
        raise InvalidInputError(f"message {index} is invalid: {_first_error(exc)}") from None


def split_system(messages: Sequence[ChatMessage]) -> tuple[str | None, list[ChatMessage]]:
    """Separate system text (joined with blank lines) from the conversation turns."""
    system: list[str] = []
    rest: list[ChatMessage] = []
    for message in messages:
        if message.role is Role.SYSTEM:
            system.append(message.text)
        else:
            rest.append(message)
    return ("\n\n".join(system) if system else None), rest


def _first_error(exc: ValidationError) -> str:
    # The most specific error: for ``content`` (a string or a list of parts) pydantic reports
    # the "not a string" branch first, while the real problem sits inside a part.
    err = max(exc.errors(), key=lambda e: len(e.get("loc", ())))
    where = ".".join(str(p) for p in err.get("loc", ()) if not _is_branch_label(p))
    if where == "role":
        return "role must be one of system, user, assistant, tool"
    message = str(err.get("msg")).removeprefix("Value error, ")  # our validators' own words
    return f"{where}: {message}" if where else message


def _is_branch_label(part: object) -> bool:
    """Pydantic's names of union branches in an error location (``str``, ``list[...]``)."""
    return isinstance(part, str) and (part == "str" or "[" in part)
