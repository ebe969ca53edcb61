"""Capability interfaces. A provider class inherits the ones it implements; ``supports_feature``
and the registry's checks read them, so a claim in the spec must be backed by the class."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, TypeVar, overload

from pydantic import BaseModel, ValidationError

from llm_core.decisions import (
    DecisionResponse,
    DecisionSubject,
    ProbabilityKind,
    Question,
    answers_from_fallback,
    fallback_prompt,
    fallback_schema,
    parse_questions,
    validate_answers,
)
from llm_core.errors import InvalidInputError, InvalidRequestError, InvalidResponseError
from llm_core.features import Feature
from llm_core.media import check_media
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, MessageLike, TextPart
from llm_core.provider import BaseProvider, StreamParser
from llm_core.requests import (
    ChatRequest,
    DecisionRequest,
    EmbeddingRequest,
    ImageRequest,
    Prompt,
    build,
    coerce_tools,
)
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, VisionResponse
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.tools import ToolSpec

M = TypeVar("M", bound=BaseModel)

ImageInput = ImagePart | bytes | str


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

    def stream_chat_completion(
        self, messages: Sequence[MessageLike] | str | Prompt, **options: Any
    ) -> Iterator[StreamEvent]:
        """Stream events: TOKEN* METADATA END, or TOKEN* ERROR END. Input errors raise at once."""
        request = self.build_chat_request(messages, feature=Feature.STREAMING, **options)
        return self._stream_events(request, self._send_stream, self.new_stream_parser(request))

    def stream_text(self, prompt: str | Prompt | Sequence[MessageLike], **options: Any) -> Iterator[str]:
        """Only the response text, chunk by chunk; a stream error is raised."""
        return text_only(self.stream_chat_completion(prompt, **options))


def _text_of(event: StreamEvent) -> str | None:
    """The response text of a TOKEN event (None for thinking and empty chunks); raises the
    error of an ERROR event."""
    if event.type is StreamEventType.TOKEN:
        return event.text if event.text and not event.is_thinking else None
    if event.type is StreamEventType.ERROR and event.error is not None:
        raise event.error
    return None


def text_only(events: Iterator[StreamEvent]) -> Iterator[str]:
    """``stream_text`` over a stream of events: response text only; a stream error is raised."""
    for event in events:
        text = _text_of(event)
        if text is not None:
            yield text


async def async_text_only(events: AsyncIterator[StreamEvent]) -> AsyncIterator[str]:
    """The async twin of :func:`text_only`."""
    async for event in events:
        text = _text_of(event)
        if text is not None:
            yield text


class ToolCapable(BaseProvider):
    """``chat_completion_with_tools(messages, tools)``."""

    def supports_tools(self) -> bool:
        return self.supports_feature(Feature.TOOLS)

    def build_tool_request(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> ChatRequest:
        specs = coerce_tools(tools, self.identifier)
        return self.build_chat_request(messages, feature=Feature.TOOLS, tools=specs, **options)

    def chat_completion_with_tools(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> CompletionResponse:
        """Chat in which the model may call ``tools``; calls come back in ``tool_calls``."""
        request = self.build_tool_request(messages, tools, **options)
        return self._run("chat_with_tools", request, self.map_chat_request, self._send_chat, self.parse_chat_response)


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
            image.mime_type or _mime_from_url(image.url),
            kind="image",
            formats=self.supported_image_formats,
            max_bytes=self.max_image_size,
            provider=self.identifier,
        )

    def build_vision_request(
        self, image: ImageInput | Sequence[ImageInput | TextPart], prompt: str, mime_type: str | None, **options: Any
    ) -> ChatRequest:
        parts: list[TextPart | ImagePart] = [TextPart(text=prompt)]
        items: Sequence[ImageInput | TextPart] = image if isinstance(image, list | tuple) else [image]  # type: ignore[list-item]
        for item in items:
            parts.append(item if isinstance(item, TextPart) else to_image_part(item, mime_type))
        if not any(isinstance(p, ImagePart) for p in parts):
            raise InvalidInputError("analyze_image needs at least one image", provider=self.identifier)
        return self.build_chat_request([ChatMessage.user(parts)], feature=Feature.VISION, **options)

    def analyze_image(
        self,
        image: ImageInput | Sequence[ImageInput | TextPart],
        prompt: str = "Describe this image.",
        *,
        mime_type: str | None = None,
        **options: Any,
    ) -> VisionResponse:
        """Ask about one or more images (bytes, :class:`ImagePart`, or an http(s)/data URL)."""
        request = self.build_vision_request(image, prompt, mime_type, **options)
        return self._run("analyze_image", request, self.map_chat_request, self._send_chat, self._parse_vision)

    def _parse_vision(self, raw: Any, request: ChatRequest) -> VisionResponse:
        return VisionResponse(**self.parse_chat_response(raw, request).model_dump())


def to_image_part(item: ImageInput, mime_type: str | None = None) -> ImagePart:
    if isinstance(item, ImagePart):
        return item
    if isinstance(item, bytes):
        return ImagePart(data=item, mime_type=mime_type)
    if isinstance(item, str) and item.startswith("data:"):
        header = item[5:].split(";", 1)[0]
        return ImagePart(data=item, mime_type=mime_type or header or None)
    if isinstance(item, str) and item.startswith(("http://", "https://")):
        return ImagePart(url=item, mime_type=mime_type)
    raise InvalidInputError("an image must be bytes, an ImagePart, or an http(s) or data: URL")


def _mime_from_url(url: str | None) -> str | None:
    if not url:
        return None
    suffix = url.split("?", 1)[0].rsplit(".", 1)[-1].lower()
    return {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "webp": "image/webp",
        "gif": "image/gif",
        "pdf": "application/pdf",
    }.get(suffix)


class DocumentCapable(BaseProvider):
    """Inline documents (e.g. PDF) in chat messages."""

    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = 20 * 1024 * 1024

    def supports_documents(self) -> bool:
        return self.supports_feature(Feature.DOCUMENTS)

    def check_document(self, document: DocumentPart) -> str:
        return check_media(
            document.data,
            document.mime_type or _mime_from_url(document.url),
            kind="document",
            formats=self.supported_document_formats,
            max_bytes=self.max_document_size,
            provider=self.identifier,
        )


class StructuredOutputCapable(BaseProvider):
    """``generate_json(prompt, schema=...)``: a Pydantic model gives a validated instance,
    a dict schema or none gives the decoded JSON."""

    def build_json_request(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: Any, **options: Any
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

    @overload
    def generate_json(self, prompt: str | Prompt | Sequence[MessageLike], schema: type[M], **options: Any) -> M: ...

    @overload
    def generate_json(
        self, prompt: str | Prompt | Sequence[MessageLike], schema: dict[str, Any] | None = None, **options: Any
    ) -> Any: ...

    def generate_json(self, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any) -> Any:
        request = self.build_json_request(prompt, schema, **options)
        response = self._run("generate_json", request, self.map_chat_request, self._send_chat, self.parse_chat_response)
        return decode_json(response, schema, self.identifier)


def decode_json(response: CompletionResponse, schema: Any, provider: str) -> Any:
    """Decode (and with a Pydantic model, validate) a JSON answer; raw text kept on failure."""
    if response.is_filtered:
        raise InvalidResponseError(
            "the model refused or was filtered instead of answering JSON", provider=provider, raw=response.content
        )
    text = response.content
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_validate_json(text)
        return json.loads(text)
    except (ValidationError, ValueError) as exc:
        hint = " (the answer was cut off: raise max_tokens)" if response.is_truncated else ""
        raise InvalidResponseError(
            f"the model's answer is not valid JSON for the schema{hint}: {exc}", provider=provider, raw=text
        ) from exc


class EmbeddingCapable(BaseProvider):
    """``embeddings(input)`` for one string or many."""

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_embeddings(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_embeddings(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        raise NotImplementedError

    def default_embedding_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.EMBEDDINGS in info.features:
                return info.id
        return self.default_model()

    def build_embedding_request(
        self,
        input: str | Sequence[str],  # noqa: A002
        *,
        model: str | None = None,
        dimensions: int | None = None,
        task_type: str | None = None,
        **options: Any,
    ) -> EmbeddingRequest:
        inputs = [input] if isinstance(input, str) else list(input)
        if not inputs or any(not isinstance(t, str) or not t.strip() for t in inputs):
            raise InvalidInputError("embeddings need one or more non-empty strings", provider=self.identifier)
        chosen = model or self.default_embedding_model()
        self._require(Feature.EMBEDDINGS, chosen)
        return build(
            EmbeddingRequest,
            self.identifier,
            inputs=inputs,
            model=chosen,
            dimensions=dimensions,
            task_type=task_type,
            options=options,
        )

    def embeddings(self, input: str | Sequence[str], **options: Any) -> EmbeddingResponse:  # noqa: A002
        """Vectors for one or many texts. Options: ``model``, ``dimensions``, ``task_type``."""
        request = self.build_embedding_request(input, **options)
        return self._run(
            "embeddings", request, self.map_embedding_request, self._send_embeddings, self.parse_embedding_response
        )


class ImageGenerationCapable(BaseProvider):
    """``generate_image_bytes(prompt) -> (bytes, mime_type)``."""

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_image(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_image(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse:
        raise NotImplementedError

    def retry_image_request(self, request: ImageRequest, error: InvalidRequestError) -> ImageRequest | None:
        """A changed request to try once after ``error`` rejected ``request`` (default: none)."""
        return None

    def default_image_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.IMAGE in info.features:
                return info.id
        return self.default_model()

    def build_image_request(
        self,
        prompt: str,
        *,
        model: str | None = None,
        input_images: Sequence[ImagePart | tuple[bytes, str]] | None = None,
        **options: Any,
    ) -> ImageRequest:
        if not isinstance(prompt, str) or not prompt.strip():
            raise InvalidInputError("the image prompt is empty", provider=self.identifier)
        chosen = model or self.default_image_model()
        self._require(Feature.IMAGE, chosen)
        images = [_input_image(i, self.identifier) for i in input_images or ()]
        fields = {k: options.pop(k) for k in ("size", "aspect_ratio", "quality", "mime_type") if k in options}
        return build(
            ImageRequest,
            self.identifier,
            prompt=prompt,
            model=chosen,
            input_images=images,
            options=options,
            **fields,
        )

    def generate_image(self, prompt: str, **options: Any) -> ImageResponse:
        request = self.build_image_request(prompt, **options)
        try:
            return self._run(
                "generate_image", request, self.map_image_request, self._send_image, self.parse_image_response
            )
        except InvalidRequestError as exc:
            retry = self.retry_image_request(request, exc)
            if retry is None:
                raise
            return self._run(
                "generate_image", retry, self.map_image_request, self._send_image, self.parse_image_response
            )

    def generate_image_bytes(self, prompt: str, **options: Any) -> tuple[bytes, str]:
        """The first generated image as ``(bytes, mime_type)``."""
        image = self.generate_image(prompt, **options)
        return image.data, image.mime_type


def _input_image(item: ImagePart | tuple[bytes, str], provider: str) -> ImagePart:
    if isinstance(item, ImagePart):
        part = item
    elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], bytes) and isinstance(item[1], str):
        part = ImagePart(data=item[0], mime_type=item[1])
    else:
        raise InvalidInputError("an input image is (bytes, mime_type) or an ImagePart", provider=provider)
    if part.data is None or not part.mime_type:
        raise InvalidInputError("an input image needs both bytes and a MIME type", provider=provider)
    return part


class DecisionCapable(BaseProvider):
    """``decide(subject, questions)`` natively, or through structured output (kind "none")."""

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_decision(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_decision(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_decision_response(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        raise NotImplementedError

    def native_decisions(self, model: str) -> bool:
        """Whether ``model`` serves the provider's native decision API (catalogue ``extra``)."""
        info = self.provider_spec.model(model)
        if info is None:
            return bool(self.options.get("native_decisions", False))
        return bool(info.extra.get("native_decisions", False))

    def default_decision_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.DECISION in info.features and info.extra.get("native_decisions"):
                return info.id
        return self.default_model()

    def build_decision_request(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        *,
        model: str | None = None,
        **options: Any,
    ) -> DecisionRequest:
        if isinstance(subject, str):
            subject = {"task": subject}
        if not isinstance(subject, DecisionSubject):
            subject = build(DecisionSubject, self.identifier, **dict(subject))
        parsed = parse_questions(questions)
        chosen = model or self.default_decision_model()
        self._require(Feature.DECISION, chosen)
        return build(
            DecisionRequest,
            self.identifier,
            subject=subject,
            questions=parsed,
            model=chosen,
            options=options,
        )

    def _checked(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        response = self.parse_decision_response(raw, request)
        answers = validate_answers(request.questions, response.answers, provider=self.identifier)
        return response.model_copy(update={"answers": answers})

    def fallback_chat_request(self, request: DecisionRequest) -> ChatRequest:
        if not isinstance(self, StructuredOutputCapable):
            raise InvalidInputError(
                f"model {request.model!r} has no native decisions and {self.name} has no structured output",
                provider=self.identifier,
            )
        return self.build_chat_request(
            fallback_prompt(request.subject, request.questions),
            model=request.model,
            feature=Feature.JSON_MODE,
            json_mode=True,
            response_schema=fallback_schema(request.questions),
        )

    def fallback_response(self, response: CompletionResponse, request: DecisionRequest) -> DecisionResponse:
        data = decode_json(response, None, self.identifier)
        answers = answers_from_fallback(request.questions, data, provider=self.identifier)
        return DecisionResponse(
            answers=answers,
            probability_kind=ProbabilityKind.NONE,
            model=response.model,
            provider=self.identifier,
            usage=response.usage,
            metadata={"fallback": "structured_output"},
        )

    def decide(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        **options: Any,
    ) -> DecisionResponse:
        """One validated answer per question (SPEC §6)."""
        request = self.build_decision_request(subject, questions, **options)
        if self.native_decisions(request.model):
            return self._run("decide", request, self.map_decision_request, self._send_decision, self._checked)
        chat = self.fallback_chat_request(request)
        response = self._run("decide", chat, self.map_chat_request, self._send_chat, self.parse_chat_response)
        return self.fallback_response(response, request)


FEATURE_INTERFACES: dict[Feature, type[BaseProvider]] = {
    Feature.STREAMING: StreamingCapable,
    Feature.TOOLS: ToolCapable,
    Feature.VISION: VisionCapable,
    Feature.DOCUMENTS: DocumentCapable,
    Feature.JSON_MODE: StructuredOutputCapable,
    Feature.EMBEDDINGS: EmbeddingCapable,
    Feature.IMAGE: ImageGenerationCapable,
    Feature.DECISION: DecisionCapable,
}
#: Features that every provider implements through its chat call.
BASE_FEATURES = frozenset({Feature.CHAT, Feature.COMPLETION, Feature.THINKING})
#: Features without an interface in the core yet: accepted as declared.
DECLARED_ONLY = frozenset({Feature.AUDIO, Feature.TEXT_TO_SPEECH, Feature.TRANSCRIPTION})


@functools.cache
def implemented_features(cls: type[BaseProvider]) -> frozenset[Feature]:
    """Features a provider class implements (cached per class)."""
    found = {f for f, iface in FEATURE_INTERFACES.items() if issubclass(cls, iface)}
    return frozenset(found) | BASE_FEATURES | DECLARED_ONLY
