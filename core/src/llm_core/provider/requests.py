"""Building requests: the public arguments of every call normalised and validated into one
request object (:class:`ChatRequest`, :class:`EmbeddingRequest`, :class:`ImageRequest`,
:class:`DecisionRequest`) before anything is sent.

A provider holds one :class:`RequestBuilder` (``provider.builder``); the route of each operation
(:mod:`llm_core.wire`) calls it. It reads the provider's settings and what its API accepts (the
class facts of :class:`~llm_core.provider.settings.ProviderSettings`: image and document formats
and sizes, the tool-name rule, the most inputs of one embedding request).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from llm_core.builtin_tools import coerce_builtin_tools
from llm_core.config import reveal_secrets
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
from llm_core.errors import ConfigurationError, InvalidInputError
from llm_core.features import Feature
from llm_core.media import ImageInput, check_media, input_image, mime_from_url, to_image_part
from llm_core.messages import (
    URL_RULE,
    ChatMessage,
    ContentPart,
    DocumentPart,
    ImagePart,
    MessageLike,
    Role,
    TextPart,
    is_web_or_data_url,
    normalize_messages,
)
from llm_core.provider.settings import ProviderSettings
from llm_core.requests import (
    CALL_FIELDS,
    SAMPLING_OPTIONS,
    ChatRequest,
    DecisionRequest,
    EmbeddingRequest,
    ImageRequest,
    Prompt,
    ThinkingOptions,
    build,
    coerce_tools,
    refuse_surrogates,
)
from llm_core.responses import CompletionResponse, EmbeddingResponse, Usage, decode_json
from llm_core.streaming import CallContext
from llm_core.tools import ToolSpec

#: The call settings a :class:`Prompt` may carry: its model and its sampling options.
PROMPT_SETTINGS = ("model", *sorted(SAMPLING_OPTIONS & set(Prompt.model_fields)))
#: ImageRequest fields given as call options.
IMAGE_FIELDS = ("size", "aspect_ratio", "quality", "mime_type")


class RequestBuilder:
    """Validates a call's arguments into its request, for one provider: the one place a call's
    input is checked, and where the provider's call defaults join it (so every chat-shaped call,
    batch lines included, gets them). Built anew when the provider's settings change."""

    def __init__(self, provider: ProviderSettings) -> None:
        self.provider = provider
        self.identifier = provider.identifier
        #: The call defaults set (``call_defaults`` names with a value in the options), in clear.
        self.call_defaults = self._checked_call_defaults()

    def _checked_call_defaults(self) -> dict[str, Any]:
        """The call defaults, a request field's value validated now, as a call's would be, so
        that a bad default fails at construction rather than at every call."""
        p = self.provider
        defaults = {
            name: reveal_secrets(value)
            for name, value in p.options.items()
            if name in p.call_defaults and value is not None
        }
        fields = {name: defaults[name] for name in SAMPLING_OPTIONS if name in defaults}
        if fields:
            try:
                build(ChatRequest, self.identifier, messages=[], model="-", **fields)
            except InvalidInputError as exc:
                raise ConfigurationError(f"call default {exc.message}", provider=self.identifier) from None
        return defaults

    # -- chat-shaped calls --------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[MessageLike] | str | Prompt,
        *,
        model: str | None = None,
        system: str | None = None,
        thinking: ThinkingOptions | bool | Mapping[str, Any] | None = None,
        call_context: CallContext | str | None = None,
        feature: Feature = Feature.CHAT,
        **extra: Any,
    ) -> ChatRequest:
        """Normalise and validate a chat call; raises :class:`InvalidInputError` before sending.
        A sampling option (:data:`~llm_core.requests.SAMPLING_OPTIONS`) is the call's value, else
        the :class:`Prompt`'s, else the provider's call default."""
        p, identifier = self.provider, self.identifier
        normalised, prompt_settings = coerce_prompt(messages)
        if system is not None:
            normalised = [ChatMessage.system(_system_text(system, identifier)), *normalised]
        chosen = self._model_or(model, lambda: prompt_settings.get("model") or p.default_model())
        p._require(feature, chosen)
        thinking_options = _thinking(thinking, identifier)
        if thinking_options is not None:
            p._require(Feature.THINKING, chosen)
        for index, message in enumerate(normalised):
            self._check_message(index, message, chosen)
        defaults = self.call_defaults
        options = {**{k: v for k, v in defaults.items() if k not in SAMPLING_OPTIONS}, **extra}  # the call's win
        fields = {key: options.pop(key) for key in CALL_FIELDS if key in options}
        self._check_tools(fields, chosen)
        for name in SAMPLING_OPTIONS:  # the call's value, else the prompt's, else the default (0.0 is a value)
            value = fields.get(name)
            if value is None:
                value = prompt_settings.get(name)
                if value is None:
                    value = defaults.get(name)
            if value is not None:
                fields[name] = value
        request = build(
            ChatRequest,
            identifier,
            messages=normalised,
            model=chosen,
            thinking=thinking_options,
            call_context=_call_context(call_context, identifier),
            options=options,
            **fields,
        )
        for name in ("messages", "tools", "stop"):
            refuse_surrogates(getattr(request, name), name, identifier)
        return request

    def tools(
        self, messages: Sequence[MessageLike] | str, tools: Sequence[ToolSpec | Mapping[str, Any]], **options: Any
    ) -> ChatRequest:
        """A chat in which the model may call ``tools``, each name checked by the provider's rule."""
        p = self.provider
        specs = coerce_tools(tools, self.identifier)
        if p.tool_name_rule is not None:
            pattern, allowed = p.tool_name_rule
            for index, spec in enumerate(specs):
                if re.fullmatch(pattern, spec.name) is None:
                    raise InvalidInputError(
                        f"tools[{index}] name {spec.name!r} is not a valid {p.name} tool name: {allowed}",
                        provider=self.identifier,
                    )
        return self.chat(messages, feature=Feature.TOOLS, tools=specs, **options)

    def vision(
        self,
        image: ImageInput | Sequence[ImageInput | TextPart],
        prompt: str = "Describe this image.",
        *,
        mime_type: str | None = None,
        **options: Any,
    ) -> ChatRequest:
        """One user turn of ``prompt`` and the images (and text parts), in order."""
        if not isinstance(prompt, str):
            raise InvalidInputError(f"prompt must be a string, not {type(prompt).__name__}", provider=self.identifier)
        parts: list[TextPart | ImagePart] = [TextPart(text=prompt)]
        items: Sequence[ImageInput | TextPart] = image if isinstance(image, list | tuple) else [image]  # type: ignore[list-item]
        for item in items:
            parts.append(item if isinstance(item, TextPart) else to_image_part(item, mime_type))
        if not any(isinstance(p, ImagePart) for p in parts):
            raise InvalidInputError("analyze_image needs at least one image", provider=self.identifier)
        return self.chat([ChatMessage.user(parts)], feature=Feature.VISION, **options)

    def json(self, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any) -> ChatRequest:
        """Structured output: ``schema`` is a Pydantic model class, a JSON-schema dict or none."""
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
        return self.chat(prompt, feature=Feature.JSON_MODE, json_mode=True, response_schema=schema, **options)

    def _check_tools(self, fields: dict[str, Any], model: str) -> None:
        """Built-in tools validated, and each one, like a custom tool, offered by the model."""
        p = self.provider
        if fields.get("builtin_tools") is not None:
            fields["builtin_tools"] = coerce_builtin_tools(fields["builtin_tools"], self.identifier) or None
            for tool in fields["builtin_tools"] or ():
                p._require(tool.feature, model)
        if any(getattr(tool, "kind", None) == "custom" for tool in fields.get("tools") or ()):
            p._require(Feature.CUSTOM_TOOLS, model)

    def _check_message(self, index: int, message: ChatMessage, model: str) -> None:
        """Refuse what no provider accepts in a turn: an empty turn, a tool result that is not a
        string, an image or document in a system message; check each image and document part."""
        where = f"message {index}"
        media = [] if isinstance(message.content, str) else [p for p in message.content if p.type != "text"]
        if message.role is Role.TOOL and not isinstance(message.content, str):
            raise InvalidInputError(f"{where}: a tool result must be a string", provider=self.identifier)
        if media and message.role is Role.SYSTEM:
            raise InvalidInputError(
                f"{where} is a system message with an {media[0].type} part: system instructions are text only, "
                f"so put the {media[0].type} in a user message",
                provider=self.identifier,
            )
        if not media and not message.text.strip() and _needs_text(message):
            raise InvalidInputError(
                f"{where} ({message.role.value}) is empty: give it some text", provider=self.identifier
            )
        for part in media:
            self.check_part(part, model)

    def check_part(self, part: ContentPart, model: str) -> None:
        """An image or document part before sending: the model must offer the feature, its URL
        must be one the provider reads (checked again: a part made with ``model_construct``
        skipped its validators), its bytes of a format and size the API takes."""
        p = self.provider
        if not isinstance(part, TextPart) and part.url is not None:
            if not is_web_or_data_url(part.url):
                raise InvalidInputError(f"{part.type} {URL_RULE}", provider=self.identifier)
            scheme = part.url.partition(":")[0].lower()
            schemes = p.url_schemes()
            if scheme not in schemes:
                raise InvalidInputError(
                    f"{part.type} url: {p.name} does not read {scheme}: URLs here; give the bytes, or an "
                    f"{' or '.join(sorted(schemes))} URL",
                    provider=self.identifier,
                )
        if isinstance(part, ImagePart):
            p._require(Feature.VISION, model)
            self.check_image(part)
        elif isinstance(part, DocumentPart):
            p._require(Feature.DOCUMENTS, model)
            self.check_document(part)

    def check_image(self, image: ImagePart) -> str:
        """Validate an image's format and size; returns its MIME type."""
        p = self.provider
        return self._check_media(image, p.supported_image_formats, p.max_image_size)

    def check_document(self, document: DocumentPart) -> str:
        """Validate a document's format and size; returns its MIME type."""
        p = self.provider
        return self._check_media(document, p.supported_document_formats, p.max_document_size)

    def _check_media(self, part: ImagePart | DocumentPart, formats: tuple[str, ...], max_bytes: int) -> str:
        mime_type = part.mime_type or mime_from_url(part.url)
        return check_media(
            part.data, mime_type, kind=part.type, formats=formats, max_bytes=max_bytes, provider=self.identifier
        )

    # -- embeddings ---------------------------------------------------------------------------

    def embeddings(
        self,
        input: str | Sequence[str],  # noqa: A002
        *,
        model: str | None = None,
        dimensions: int | None = None,
        task_type: str | None = None,
        **options: Any,
    ) -> EmbeddingRequest:
        """One string or many, each non-empty."""
        p = self.provider
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
        chosen = self._model_or(model, lambda: self.default_model_for(Feature.EMBEDDINGS))
        p._require(Feature.EMBEDDINGS, chosen)
        return build(
            EmbeddingRequest,
            self.identifier,
            inputs=inputs,
            model=chosen,
            dimensions=dimensions,
            task_type=task_type,
            options=options,
        )

    def embedding_batches(self, request: EmbeddingRequest) -> list[EmbeddingRequest]:
        """``request`` split into requests of at most ``max_embedding_inputs`` inputs, in order."""
        size = self.provider.max_embedding_inputs
        if size is None or len(request.inputs) <= size:
            return [request]
        chunks = [request.inputs[start : start + size] for start in range(0, len(request.inputs), size)]
        return [request.model_copy(update={"inputs": chunk}) for chunk in chunks]

    @staticmethod
    def merge_embeddings(parts: Sequence[EmbeddingResponse]) -> EmbeddingResponse:
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

    # -- images -------------------------------------------------------------------------------

    def image(
        self,
        prompt: str,
        *,
        model: str | None = None,
        input_images: Sequence[ImagePart | tuple[bytes, str]] | None = None,
        **options: Any,
    ) -> ImageRequest:
        """An image prompt, and the images to edit or combine (checked like vision inputs)."""
        p = self.provider
        if not isinstance(prompt, str):
            raise InvalidInputError(f"prompt must be a string, not {type(prompt).__name__}", provider=self.identifier)
        if not prompt.strip():
            raise InvalidInputError("the image prompt is empty", provider=self.identifier)
        refuse_surrogates(prompt, "prompt", self.identifier)
        chosen = self._model_or(model, lambda: self.default_model_for(Feature.IMAGE))
        p._require(Feature.IMAGE, chosen)
        images = [input_image(i, self.identifier) for i in input_images or ()]
        for index, image in enumerate(images):
            check_media(
                image.data,
                image.mime_type,
                kind=f"input_images[{index}]",
                formats=p.input_image_formats,
                max_bytes=p.max_input_image_size,
                provider=self.identifier,
            )
        fields = {k: options.pop(k) for k in IMAGE_FIELDS if k in options}
        return build(
            ImageRequest, self.identifier, prompt=prompt, model=chosen, input_images=images, options=options, **fields
        )

    # -- decisions ----------------------------------------------------------------------------

    def decision(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        *,
        model: str | None = None,
        **options: Any,
    ) -> DecisionRequest:
        """A subject (text or fields) and the questions about it."""
        p = self.provider
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
        p._require(Feature.DECISION, chosen)
        return build(DecisionRequest, self.identifier, subject=subject, questions=parsed, model=chosen, options=options)

    def checked_decision(
        self, parse: Callable[[Any, DecisionRequest], DecisionResponse]
    ) -> Callable[[Any, DecisionRequest], DecisionResponse]:
        """``parse`` of a native decision answer, with the answers checked against the questions."""

        def checked(raw: Any, request: DecisionRequest) -> DecisionResponse:
            response = parse(raw, request)
            answers = validate_answers(request.questions, response.answers, provider=self.identifier)
            return response.model_copy(update={"answers": answers})

        return checked

    def decision_fallback(self, request: DecisionRequest) -> ChatRequest:
        """The structured-output chat that answers ``request`` where the model has no decision API."""
        p = self.provider
        if Feature.JSON_MODE not in p.implemented_features():
            raise InvalidInputError(
                f"model {request.model!r} has no native decisions and {p.name} has no structured output",
                provider=self.identifier,
            )
        return self.chat(
            fallback_prompt(request.subject, request.questions),
            model=request.model,
            feature=Feature.JSON_MODE,
            json_mode=True,
            response_schema=fallback_schema(request.questions),
        )

    def decision_from_json(self, response: CompletionResponse, request: DecisionRequest) -> DecisionResponse:
        """The answers of :meth:`decision_fallback`'s JSON."""
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

    # -- models -------------------------------------------------------------------------------

    def _model_or(self, model: Any, default: Callable[[], str]) -> str:
        """``model`` when one is given (it must be a model name), else ``default()``."""
        if model is None:
            return default()
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError(
                f"model must be a model name (a non-empty string), not {model!r}", provider=self.identifier
            )
        return model

    # -- default models -----------------------------------------------------------------------

    def default_model_for(self, feature: Feature) -> str:
        """The first catalogue model with ``feature``, else the provider's default model."""
        p = self.provider
        for info in p.provider_spec.models:
            if feature in info.features:
                return info.id
        return p.default_model()

    def default_decision_model(self) -> str:
        """The first catalogue model with a native decision API, else the provider's default."""
        p = self.provider
        for info in p.provider_spec.models:
            if Feature.DECISION in info.features and info.extra.get("native_decisions"):
                return info.id
        return p.default_model()


def coerce_prompt(prompt: str | Prompt | Sequence[MessageLike]) -> tuple[list[ChatMessage], dict[str, Any]]:
    """Messages and per-call settings from a string, a :class:`Prompt` or a message list."""
    if isinstance(prompt, Prompt):
        settings = {name: getattr(prompt, name) for name in PROMPT_SETTINGS}
        return prompt.to_messages(), {k: v for k, v in settings.items() if v is not None}
    return normalize_messages(prompt), {}


def _call_context(value: CallContext | str | None, provider: str) -> CallContext | None:
    if value is None or isinstance(value, CallContext):
        return value
    try:
        return CallContext(value)
    except ValueError:
        names = ", ".join(c.value for c in CallContext)
        raise InvalidInputError(f"call_context {value!r} is unknown; use one of {names}", provider=provider) from None


def _thinking(value: Any, provider: str) -> ThinkingOptions | None:
    if value is None or value is False:
        return None
    if value is True:
        return ThinkingOptions()
    if isinstance(value, ThinkingOptions):
        return value
    if isinstance(value, Mapping):
        return build(ThinkingOptions, provider, **{str(key): item for key, item in value.items()})
    raise InvalidInputError(
        f"thinking must be True, False, a ThinkingOptions or a mapping such as {{'level': 'low'}}, "
        f"not {type(value).__name__}",
        provider=provider,
    )


def _system_text(value: Any, provider: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"system must be a string, not {type(value).__name__}", provider=provider)
    if not value.strip():
        raise InvalidInputError(
            "system is blank: give the instructions as text, or leave system out", provider=provider
        )
    return value


def _needs_text(message: ChatMessage) -> bool:
    """Whether a turn without text says nothing: an assistant turn may carry only tool calls or
    replay metadata, a tool result may be empty."""
    if message.role is Role.TOOL:
        return False
    if message.role is Role.ASSISTANT:
        return not (message.tool_calls or message.metadata or message.model_extra)
    return True
