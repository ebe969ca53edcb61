"""The chat-shaped capabilities: streaming, tools, vision, documents and structured output.

Each interface brings what its operations need beyond the chat hooks every provider has: the
request builder that validates the call's arguments (named by the operation's declaration in
:mod:`llm_core.operations`), the hooks a plugin implements, and checks of its own.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel

from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.media import ImageInput, check_media, mime_from_url, to_image_part
from llm_core.messages import ChatMessage, ContentPart, DocumentPart, ImagePart, MessageLike, TextPart
from llm_core.provider.base import BaseProvider, StreamParser
from llm_core.requests import ChatRequest, Prompt, coerce_tools
from llm_core.tools import ToolSpec


class StreamingCapable(BaseProvider):
    """``stream_chat_completion`` (typed events) and ``stream_text`` (response text only)."""

    def supports_streaming(self) -> bool:
        return self.supports_feature(Feature.STREAMING)

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        """The SDK's chunk stream. The core calls ``close()`` on it (and on its iterator) when
        the stream ends or is abandoned, so an SDK stream object can be returned as it is."""
        raise NotImplementedError

    def _asend_stream(self, payload: dict[str, Any]) -> Awaitable[AsyncIterator[Any]]:
        """An awaitable of the async chunk stream (an ``async def``, or a plain ``def`` returning
        the SDK's coroutine); the core awaits the stream's ``aclose()`` (and its iterator's)."""
        raise NotImplementedError

    def new_stream_parser(self, request: ChatRequest) -> StreamParser:
        raise NotImplementedError


class ToolCapable(BaseProvider):
    """``chat_completion_with_tools(messages, tools)``."""

    #: The provider's own rule for tool names, checked before sending: (a regular expression the
    #: whole name must match, what it allows in words). ``None``: only ToolSpec's general rule.
    tool_name_rule: ClassVar[tuple[str, str] | None] = None

    def supports_tools(self) -> bool:
        return self.supports_feature(Feature.TOOLS)

    def build_tool_request(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> ChatRequest:
        specs = coerce_tools(tools, self.identifier)
        if self.tool_name_rule is not None:
            pattern, allowed = self.tool_name_rule
            for index, spec in enumerate(specs):
                if re.fullmatch(pattern, spec.name) is None:
                    raise InvalidInputError(
                        f"tools[{index}] name {spec.name!r} is not a valid {self.name} tool name: {allowed}",
                        provider=self.identifier,
                    )
        return self.build_chat_request(messages, feature=Feature.TOOLS, tools=specs, **options)


class VisionCapable(BaseProvider):
    """``analyze_image`` and image parts in chat messages."""

    supported_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp", "gif")
    max_image_size: ClassVar[int] = 20 * 1024 * 1024

    def supports_vision(self) -> bool:
        return self.supports_feature(Feature.VISION)

    def check_image(self, image: ImagePart) -> str:
        """Validate format and size; returns the MIME type. Raises InvalidInputError."""
        return check_media(
            image.data,
            image.mime_type or mime_from_url(image.url),
            kind="image",
            formats=self.supported_image_formats,
            max_bytes=self.max_image_size,
            provider=self.identifier,
        )

    def _check_part(self, part: ContentPart, model: str) -> None:
        super()._check_part(part, model)
        if isinstance(part, ImagePart):
            self.check_image(part)

    def build_vision_request(
        self,
        image: ImageInput | Sequence[ImageInput | TextPart],
        prompt: str = "Describe this image.",
        *,
        mime_type: str | None = None,
        **options: Any,
    ) -> ChatRequest:
        if not isinstance(prompt, str):
            raise InvalidInputError(f"prompt must be a string, not {type(prompt).__name__}", provider=self.identifier)
        parts: list[TextPart | ImagePart] = [TextPart(text=prompt)]
        items: Sequence[ImageInput | TextPart] = image if isinstance(image, list | tuple) else [image]  # type: ignore[list-item]
        for item in items:
            parts.append(item if isinstance(item, TextPart) else to_image_part(item, mime_type))
        if not any(isinstance(p, ImagePart) for p in parts):
            raise InvalidInputError("analyze_image needs at least one image", provider=self.identifier)
        return self.build_chat_request([ChatMessage.user(parts)], feature=Feature.VISION, **options)


class DocumentCapable(BaseProvider):
    """Inline documents (e.g. PDF) in chat messages."""

    provides = Feature.DOCUMENTS
    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = 20 * 1024 * 1024

    def supports_documents(self) -> bool:
        return self.supports_feature(Feature.DOCUMENTS)

    def check_document(self, document: DocumentPart) -> str:
        return check_media(
            document.data,
            document.mime_type or mime_from_url(document.url),
            kind="document",
            formats=self.supported_document_formats,
            max_bytes=self.max_document_size,
            provider=self.identifier,
        )

    def _check_part(self, part: ContentPart, model: str) -> None:
        super()._check_part(part, model)
        if isinstance(part, DocumentPart):
            self.check_document(part)


class StructuredOutputCapable(BaseProvider):
    """``generate_json(prompt, schema=...)``: a Pydantic model gives a validated instance,
    a dict schema or none gives the decoded JSON."""

    def build_json_request(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any
    ) -> ChatRequest:
        if schema is not None and not (
            isinstance(schema, dict) or (isinstance(schema, type) and issubclass(schema, BaseModel))
        ):
            raise InvalidInputError(
                "schema must be a Pydantic model class or a JSON-schema dict", provider=self.identifier
            )
        if isinstance(schema, type):
            try:
                schema.model_json_schema()
            except Exception as exc:  # noqa: BLE001 - pydantic raises several kinds here
                raise InvalidInputError(
                    f"schema {schema.__name__} cannot be turned into JSON schema: {exc}", provider=self.identifier
                ) from None
        return self.build_chat_request(
            prompt, feature=Feature.JSON_MODE, json_mode=True, response_schema=schema, **options
        )


__all__ = [
    "DocumentCapable",
    "ImageInput",
    "StreamingCapable",
    "StructuredOutputCapable",
    "ToolCapable",
    "VisionCapable",
    "to_image_part",
]
