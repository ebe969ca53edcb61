"""``GeminiProvider``: the thin I/O shell around google-genai.

Validation, retries, observers and stream event order live in llm-core; mapping and parsing are
the pure functions of this package. This module only builds the SDK client (lazily, on first
use: ``import google.genai`` happens here and nowhere earlier) and makes the calls, sync through
``client.models``/``client.decisions`` and async through ``client.aio``. The SDK's own retries
are off (``HttpRetryOptions(attempts=1)``, which also stops the decisions client's retries):
only the core's policy retries. The SDK gets the guarded httpx2 clients of
:mod:`llm_core.transport` (no redirects: the SDK would otherwise forward ``x-goog-api-key`` to the
host a ``Location`` names; whole-attempt timeouts; size limits; one pool per event loop).
"""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core_gemini_plugin import contents, decisions, errors, request_mapper, response_parser
from core_gemini_plugin.batch import GeminiBatch
from core_gemini_plugin.models import DEFAULT_IMAGEN_MODEL, is_imagen
from core_gemini_plugin.plugin import SPEC
from core_gemini_plugin.stream_parser import GeminiStreamParser
from llm_core.aio import AsyncProvider
from llm_core.capabilities import (
    DecisionCapable,
    DocumentCapable,
    EmbeddingCapable,
    ImageGenerationCapable,
    StreamingCapable,
    StructuredOutputCapable,
    ToolCapable,
    VisionCapable,
)
from llm_core.config import Secret, reveal_secrets
from llm_core.decisions import DecisionResponse
from llm_core.errors import InvalidInputError, InvalidRequestError, LLMError
from llm_core.features import Feature
from llm_core.operation import Cost, call
from llm_core.operations import Operations
from llm_core.redaction import protect_loggers
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest, build
from llm_core.responses import EmbeddingResponse, ImageResponse, TokenCount
from llm_core.transport import (
    ClosingStream,
    Limits,
    TransportSettings,
    async_http_client,
    check_endpoint,
    sync_http_client,
    transport_error,
)

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

DEFAULT_API_VERSION = "v1"


#: Imagen calls go through the image hooks, as ``generate_image`` does.
IMAGE_HOOKS = Operations.generate_image.hooks


class GeminiProvider(
    StreamingCapable,
    ToolCapable,
    VisionCapable,
    DocumentCapable,
    StructuredOutputCapable,
    EmbeddingCapable,
    ImageGenerationCapable,
    DecisionCapable,
    GeminiBatch,
):
    """Google Gemini through google-genai.

    Provider options (constructor keywords or ``[providers.gemini]`` in the config file):
    ``api_version`` (default ``"v1"``; ``"v1beta"`` for preview features), ``client_args`` /
    ``async_client_args`` (passed to the httpx2 clients: proxy, verify, limits, a transport),
    ``vertex_api_key``, ``vertex_project`` and ``vertex_location`` (Imagen, see
    :meth:`generate_imagen`), and the transport settings of
    :class:`llm_core.transport.TransportSettings` (``allow_insecure_http``, ``max_response_bytes``,
    ``max_event_bytes``, ``stream_first_event_timeout``, ``stream_idle_timeout``,
    ``stream_deadline``), and call defaults (``call_defaults``: ``temperature``, ``top_p``,
    ``max_tokens``, ``stop`` and the per-call options of :data:`request_mapper.CHAT_OPTIONS`).
    ``base_url`` also reads ``GOOGLE_GEMINI_BASE_URL``.
    """

    spec = SPEC
    env_settings: ClassVar[Mapping[str, tuple[str, ...]]] = {"base_url": ("GOOGLE_GEMINI_BASE_URL",)}
    #: Keys a ``[providers.gemini]`` table may hold beyond the core's (an unknown key is an error).
    settings: ClassVar[tuple[Any, ...]] = (
        TransportSettings,
        "api_version",
        "client_args",
        "async_client_args",
        "vertex_api_key",
        "vertex_project",
        "vertex_location",
        "native_decisions",
    )
    #: Defaults for every chat-shaped call: the sampling fields and every per-call option passed
    #: to ``GenerateContentConfig``.
    call_defaults: ClassVar[frozenset[str]] = frozenset({"temperature", "top_p", "max_tokens", "stop"}) | (
        request_mapper.CHAT_OPTIONS
    )
    supported_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp", "heic")
    max_image_size: ClassVar[int] = contents.MAX_INLINE_BYTES
    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = contents.MAX_INLINE_BYTES
    tool_name_rule = (r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$", "a letter or '_', then letters, digits, '_.:-', <= 128")
    max_embedding_inputs = 100  # requests per batchEmbedContents call

    def __init__(self, **config: Any) -> None:
        self._client_lock = threading.Lock()
        super().__init__(**config)

    # -- settings and SDK clients -------------------------------------------------------------

    def _apply_settings(self) -> None:
        super()._apply_settings()
        vertex_key = self.options.pop("vertex_api_key", None)
        self.vertex_api_key: Secret | None = (
            vertex_key if isinstance(vertex_key, Secret) else Secret(str(vertex_key)) if vertex_key else None
        )
        self.transport_settings = TransportSettings.from_options(self.options, provider=self.identifier)
        check_endpoint(
            self.base_url, has_key=self.api_key is not None, settings=self.transport_settings, provider=self.identifier
        )

    def _reset_clients(self) -> None:
        self._genai: genai.Client | None = None
        self._imagen: genai.Client | None = None

    @property
    def limits(self) -> Limits:
        """What the HTTP clients enforce (timeouts, sizes)."""
        return Limits.resolve(self.transport_settings, timeout=self.timeout, provider=self.identifier)

    def http_options(self, *, vertex: bool = False) -> types.HttpOptions:
        """The SDK's HTTP options: API version, base URL, timeout, no SDK retries, and the
        guarded httpx2 clients (built from ``client_args`` / ``async_client_args``).

        The SDK takes the timeout in whole milliseconds and reads 0 as "no timeout": it is rounded
        up, never down to 0. For Vertex AI (Imagen) the SDK's own version and endpoint apply.
        """
        from google.genai import types

        protect_loggers("google_genai", "google.genai")  # the SDK's loggers exist now
        limits = self.limits
        return types.HttpOptions(
            api_version=None if vertex else self.options.get("api_version", DEFAULT_API_VERSION),
            base_url=None if vertex else self.base_url,
            timeout=max(1, math.ceil(self.timeout * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_client=sync_http_client(limits, **(reveal_secrets(self.options.get("client_args")) or {})),
            httpx_async_client=async_http_client(
                limits, **(reveal_secrets(self.options.get("async_client_args")) or {})
            ),
        )

    @property
    def client(self) -> genai.Client:
        """The google-genai client (built on first use; ``client.aio`` is its async twin)."""
        client = self._genai
        if client is None:
            with self._client_lock:
                if self._genai is None:
                    from google import genai

                    assert self.api_key is not None
                    self._genai = genai.Client(
                        vertexai=False, api_key=self.api_key.reveal(), http_options=self.http_options()
                    )
                client = self._genai
        return client

    @property
    def imagen_client(self) -> genai.Client:
        """The Vertex AI client for Imagen: ``vertex_project``/``vertex_location`` with Google
        Cloud credentials, else express mode with ``vertex_api_key`` (or the provider's key)."""
        client = self._imagen
        if client is None:
            with self._client_lock:
                if self._imagen is None:
                    from google import genai

                    options = self.http_options(vertex=True)
                    project = self.options.get("vertex_project")
                    if project:
                        self._imagen = genai.Client(
                            vertexai=True,
                            project=project,
                            location=self.options.get("vertex_location", "global"),
                            http_options=options,
                        )
                    else:
                        key = self.vertex_api_key or self.api_key
                        assert key is not None
                        self._imagen = genai.Client(vertexai=True, api_key=key.reveal(), http_options=options)
                client = self._imagen
        return client

    def map_error(self, error: BaseException) -> LLMError:
        return transport_error(error) or errors.map_error(error)

    # -- chat, tools, vision, documents, JSON ---------------------------------------------------

    # the pure mapper and parser: the same functions for sync and async calls
    map_chat_request = staticmethod(request_mapper.map_chat_request)

    def _send_chat(self, payload: dict[str, Any]) -> types.GenerateContentResponse:
        return self.client.models.generate_content(**payload)

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[types.GenerateContentResponse]:
        return self.client.aio.models.generate_content(**payload)  # the SDK's coroutine: the core awaits it

    parse_chat_response = staticmethod(response_parser.parse_chat_response)

    # -- streaming ----------------------------------------------------------------------------

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[types.GenerateContentResponse]:
        return self.client.models.generate_content_stream(**payload)

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[types.GenerateContentResponse]:
        # the SDK nests generators it never closes: ClosingStream.aclose() releases the response
        # at once, so that nothing is left for the loop to finalize concurrently
        return ClosingStream(await self.client.aio.models.generate_content_stream(**payload))

    def new_stream_parser(self, request: ChatRequest) -> GeminiStreamParser:
        return GeminiStreamParser(request)

    # -- token counting -----------------------------------------------------------------------

    map_count_tokens_request = staticmethod(request_mapper.map_count_tokens_request)

    def _send_count_tokens(self, payload: dict[str, Any]) -> types.CountTokensResponse:
        return self.client.models.count_tokens(**payload)

    def _asend_count_tokens(self, payload: dict[str, Any]) -> Awaitable[types.CountTokensResponse]:
        return self.client.aio.models.count_tokens(**payload)  # the SDK's coroutine: the core awaits it

    def parse_count_tokens(self, raw: types.CountTokensResponse, request: ChatRequest) -> TokenCount:
        return response_parser.parse_count_tokens(raw, request)

    # -- embeddings ---------------------------------------------------------------------------

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]:
        return request_mapper.map_embedding_request(request)

    def _send_embeddings(self, payload: dict[str, Any]) -> types.EmbedContentResponse:
        return self.client.models.embed_content(**payload)

    async def _asend_embeddings(self, payload: dict[str, Any]) -> types.EmbedContentResponse:
        return await self.client.aio.models.embed_content(**payload)

    def parse_embedding_response(self, raw: types.EmbedContentResponse, request: EmbeddingRequest) -> EmbeddingResponse:
        return response_parser.parse_embedding_response(raw, request)

    # -- images (Gemini image models and Imagen) ------------------------------------------------

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]:
        if is_imagen(request.model):
            return {**request_mapper.map_imagen_request(request), "_api": "imagen"}
        return request_mapper.map_image_request(request)

    def _send_image(self, payload: dict[str, Any]) -> Any:
        if payload.get("_api") == "imagen":
            return self._send_imagen(payload)
        return self.client.models.generate_content(**payload)

    async def _asend_image(self, payload: dict[str, Any]) -> Any:
        if payload.get("_api") == "imagen":
            return await self._asend_imagen(payload)
        return await self.client.aio.models.generate_content(**payload)

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse:
        if is_imagen(request.model):
            return response_parser.parse_imagen_response(raw, request)
        return response_parser.parse_image_response(raw, request)

    def retry_image_request(self, request: ImageRequest, error: InvalidRequestError) -> ImageRequest | None:
        """A rejected ``4K`` request is retried exactly once with ``2K`` (a missing image is no rejection)."""
        if is_imagen(request.model) or (request.size or "").upper() != "4K":
            return None
        return request.model_copy(update={"size": "2K"})

    def build_imagen_request(
        self, prompt: str, *, model: str | None = None, mime_type: str = "image/jpeg", **options: Any
    ) -> ImageRequest:
        """Validate an Imagen call (nothing is sent for an invalid one)."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise InvalidInputError("the image prompt is empty", provider=self.identifier)
        chosen = model or DEFAULT_IMAGEN_MODEL
        if not is_imagen(chosen):
            raise InvalidInputError(
                f"{chosen!r} is not an Imagen model; use generate_image_bytes for it", provider=self.identifier
            )
        self._require(Feature.IMAGE, chosen)
        fields = {k: options.pop(k) for k in ("size", "aspect_ratio", "quality") if k in options}
        request: ImageRequest = build(
            ImageRequest, self.identifier, prompt=prompt, model=chosen, mime_type=mime_type, options=options, **fields
        )
        return request

    @call(
        Feature.IMAGE,
        build="build_imagen_request",
        hooks=IMAGE_HOOKS,
        observed_as="generate_imagen",
        cost=Cost.IMAGE,
        example=(("A red square.",), {}),
    )
    def generate_imagen(self, /, prompt: str, **options: Any) -> ImageResponse:  # type: ignore[empty-body]
        """Imagen: ``GenerateImagesConfig(output_mime_type=mime_type)``.

        Options: ``model`` (default ``imagen-4.0-generate-001``), ``mime_type`` (default
        ``image/jpeg``), ``aspect_ratio``, ``size`` (1K/2K), ``seed``, ``negative_prompt`` …
        The SDK serves Imagen only on Vertex AI (see :attr:`imagen_client`).
        """

    @generate_imagen.answering(lambda image, *args, **options: (image.data, image.mime_type))
    def generate_imagen_bytes(self, /, prompt: str, **options: Any) -> tuple[bytes, str]:  # type: ignore[empty-body]
        """The first Imagen image as ``(bytes, mime_type)``."""

    def _send_imagen(self, payload: dict[str, Any]) -> types.GenerateImagesResponse:
        args = {k: v for k, v in payload.items() if k != "_api"}
        response: types.GenerateImagesResponse = self.imagen_client.models.generate_images(**args)
        return response

    async def _asend_imagen(self, payload: dict[str, Any]) -> types.GenerateImagesResponse:
        args = {k: v for k, v in payload.items() if k != "_api"}
        response: types.GenerateImagesResponse = await self.imagen_client.aio.models.generate_images(**args)
        return response

    # -- decisions ----------------------------------------------------------------------------

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]:
        return decisions.map_decision_request(request)

    def _send_decision(self, payload: dict[str, Any]) -> Any:
        return self.client.decisions.create(**payload)

    async def _asend_decision(self, payload: dict[str, Any]) -> Any:
        return await self.client.aio.decisions.create(**payload)

    def parse_decision_response(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        return decisions.parse_decision_response(raw, request)

    # -- models -------------------------------------------------------------------------------

    def _send_list_models(self) -> list[str]:
        return [m.name.removeprefix("models/") for m in self.client.models.list() if m.name]

    async def _asend_list_models(self) -> list[str]:
        pager = await self.client.aio.models.list()
        return [m.name.removeprefix("models/") async for m in pager if m.name]

    # -- async view -----------------------------------------------------------------------------

    @property
    def aio(self) -> AsyncGeminiProvider:
        """The async twins of every call, plus ``generate_imagen``/``generate_imagen_bytes``."""
        view = self._aio
        if not isinstance(view, AsyncGeminiProvider):
            view = self._aio = AsyncGeminiProvider(self)
        return view


class AsyncGeminiProvider(AsyncProvider):
    """``GeminiProvider.aio``: the core's async view plus the Imagen calls."""

    generate_imagen = GeminiProvider.generate_imagen
    generate_imagen_bytes = GeminiProvider.generate_imagen_bytes
