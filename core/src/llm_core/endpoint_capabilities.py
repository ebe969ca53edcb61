"""Capability interfaces with an endpoint of their own: embeddings, image generation and
decisions. Each has its own request type, mapper, SDK call and parser (see
:mod:`llm_core.capabilities` for the chat-shaped ones)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

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
from llm_core.errors import InvalidInputError, InvalidRequestError
from llm_core.features import Feature
from llm_core.media import check_media, input_image
from llm_core.messages import ImagePart
from llm_core.provider import BaseProvider
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest, build, refuse_surrogates
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, Usage, decode_json


class EmbeddingCapable(BaseProvider):
    """``embeddings(input)`` for one string or many."""

    provides = Feature.EMBEDDINGS
    #: Most inputs the provider embeds in one request; more are sent as several requests whose
    #: vectors (and usage) are merged in order. ``None``: no limit.
    max_embedding_inputs: ClassVar[int | None] = None

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
        if not isinstance(input, str | list | tuple):
            raise InvalidInputError(
                f"input must be a string or a list of strings, not {type(input).__name__}", provider=self.identifier
            )
        inputs = [input] if isinstance(input, str) else list(input)
        bad = [index for index, text in enumerate(inputs) if not isinstance(text, str) or not text.strip()]
        if not inputs or bad:
            which = f" (input[{bad[0]}] is {inputs[bad[0]]!r})" if bad else ""
            raise InvalidInputError(f"embeddings need one or more non-empty strings{which}", provider=self.identifier)
        refuse_surrogates(inputs, "input", self.identifier)
        chosen = self._model_or(model, self.default_embedding_model)
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
        parts = [
            self._run(
                "embeddings", batch, self.map_embedding_request, self._send_embeddings, self.parse_embedding_response
            )
            for batch in self.embedding_batches(request)
        ]
        return self.merge_embeddings(parts)

    def embedding_batches(self, request: EmbeddingRequest) -> list[EmbeddingRequest]:
        """``request`` split into requests of at most :attr:`max_embedding_inputs` inputs, in order."""
        size = self.max_embedding_inputs
        if size is None or len(request.inputs) <= size:
            return [request]
        chunks = [request.inputs[start : start + size] for start in range(0, len(request.inputs), size)]
        return [request.model_copy(update={"inputs": chunk}) for chunk in chunks]

    def merge_embeddings(self, parts: Sequence[EmbeddingResponse]) -> EmbeddingResponse:
        """One response from the responses of :meth:`embedding_batches`: vectors in input order,
        token counts added up."""
        if len(parts) == 1:
            return parts[0]
        usage = Usage(
            prompt_tokens=sum(p.usage.prompt_tokens for p in parts),
            completion_tokens=sum(p.usage.completion_tokens for p in parts),
            total_tokens=sum(p.usage.total_tokens for p in parts),
        )
        return parts[0].model_copy(
            update={
                "vectors": [vector for part in parts for vector in part.vectors],
                "usage": usage,
                "metadata": {**parts[0].metadata, "requests": len(parts)},
            }
        )


class ImageGenerationCapable(BaseProvider):
    """``generate_image_bytes(prompt) -> (bytes, mime_type)``."""

    provides = Feature.IMAGE
    #: Formats and size accepted for ``input_images`` (checked like vision inputs: the bytes must
    #: be the declared type).
    input_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp")
    max_input_image_size: ClassVar[int] = 20 * 1024 * 1024

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
        if not isinstance(prompt, str):
            raise InvalidInputError(f"prompt must be a string, not {type(prompt).__name__}", provider=self.identifier)
        if not prompt.strip():
            raise InvalidInputError("the image prompt is empty", provider=self.identifier)
        refuse_surrogates(prompt, "prompt", self.identifier)
        chosen = self._model_or(model, self.default_image_model)
        self._require(Feature.IMAGE, chosen)
        images = [input_image(i, self.identifier) for i in input_images or ()]
        for index, image in enumerate(images):
            check_media(
                image.data,
                image.mime_type,
                kind=f"input_images[{index}]",
                formats=self.input_image_formats,
                max_bytes=self.max_input_image_size,
                provider=self.identifier,
            )
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


class DecisionCapable(BaseProvider):
    """``decide(subject, questions)`` natively, or through structured output (kind "none")."""

    provides = Feature.DECISION

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
            if not isinstance(subject, Mapping):
                raise InvalidInputError(
                    f"subject must be a string, a mapping or a DecisionSubject, not {type(subject).__name__}",
                    provider=self.identifier,
                )
            subject = build(DecisionSubject, self.identifier, **{str(k): v for k, v in subject.items()})
        if isinstance(questions, str | bytes | Mapping) or not isinstance(questions, Iterable):
            raise InvalidInputError(
                f"questions must be a list of questions (or mappings), not {type(questions).__name__}",
                provider=self.identifier,
            )
        parsed = parse_questions(questions)
        refuse_surrogates(subject, "subject", self.identifier)
        refuse_surrogates(parsed, "questions", self.identifier)
        chosen = self._model_or(model, self.default_decision_model)
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
        if Feature.JSON_MODE not in self.implemented_features():
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
