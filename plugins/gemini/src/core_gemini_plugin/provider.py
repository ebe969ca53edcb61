"""``GeminiProvider``: the thin I/O shell around google-genai.

Validation, retries, observers and stream event order live in llm-core; mapping and parsing are
the pure functions of this package. This module makes the calls, sync through
``client.models``/``client.decisions`` and async through ``client.aio``. The SDK's own retries
are off and the SDK talks through llm-core's guarded HTTP clients: see
:mod:`core_gemini_plugin.clients`, which builds them for the Gemini Developer API or Vertex AI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core_gemini_plugin import backend, contents, decisions, request_mapper, response_parser
from core_gemini_plugin.batch import GeminiBatch
from core_gemini_plugin.clients import GeminiClients
from core_gemini_plugin.models import DEFAULT_IMAGEN_MODEL, is_imagen
from core_gemini_plugin.plugin import SPEC, VERTEX_SPEC
from core_gemini_plugin.stream_parser import GeminiStreamParser
from llm_core.aio import AsyncProvider
from llm_core.decisions import DecisionResponse
from llm_core.errors import InvalidInputError, InvalidRequestError
from llm_core.features import Feature
from llm_core.operation import Cost, call
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest, build
from llm_core.responses import EmbeddingResponse, ImageResponse, TokenCount
from llm_core.transport import ClosingStream, TransportSettings
from llm_core.wire import ImageRoute, Plan

if TYPE_CHECKING:
    from google.genai import types


class ImagenRoute(ImageRoute):
    """Imagen: ``build_imagen_request``, then the image hooks as ``generate_image`` (which tell
    an Imagen model by its name), sent once (no revision)."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ImageRequest:
        request: ImageRequest = p.build_imagen_request(*args, **options)
        return request

    def plan(self, p: Any, request: ImageRequest) -> Plan:
        return Plan(self.hooks(p), (request,))


IMAGEN = ImagenRoute()


class GeminiProvider(GeminiClients, GeminiBatch):
    """Google Gemini through google-genai, on the Gemini Developer API or Vertex AI.

    Provider options (constructor keywords or ``[providers.gemini]`` in the config file):
    ``vertexai``, ``project``, ``location`` and ``credentials`` (Vertex AI, google-genai's names:
    see :mod:`core_gemini_plugin.backend`; ``credentials`` is a ``google.auth`` credentials object
    or the path of a credentials file), ``api_version`` (default ``"v1"`` on the Developer API,
    google-genai's ``v1beta1`` on Vertex AI), ``client_args`` / ``async_client_args`` (passed to
    the httpx2 clients: proxy, verify, limits, a transport), ``vertex_api_key`` (Imagen's
    express-mode key on the Developer API, see :meth:`generate_imagen`), and the transport settings of
    :class:`llm_core.transport.TransportSettings` (``allow_insecure_http``, ``max_response_bytes``,
    ``max_event_bytes``, ``stream_first_event_timeout``, ``stream_idle_timeout``,
    ``stream_deadline``), and call defaults (``call_defaults``: ``temperature``, ``top_p``,
    ``max_tokens``, ``stop`` and the per-call options of :data:`request_mapper.CHAT_OPTIONS`).
    ``base_url`` also reads ``GOOGLE_GEMINI_BASE_URL`` (``GOOGLE_VERTEX_BASE_URL`` on Vertex AI).
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
        "native_decisions",
        *backend.SETTINGS,
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

    def require_batch(self) -> None:
        if self._vertexai:  # the reason, not "has no batch API"
            self._require(Feature.BATCH, self.default_model())
        super().require_batch()

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

    def map_count_tokens_request(self, request: ChatRequest) -> dict[str, Any]:
        return request_mapper.map_count_tokens_request(request, vertexai=self._vertexai)

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
        route=IMAGEN,
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

    # model names: ``models/ID`` on the Developer API, ``publishers/google/models/ID`` on Vertex AI

    def _send_list_models(self) -> list[str]:
        return [m.name.rpartition("models/")[2] for m in self.client.models.list() if m.name]

    async def _asend_list_models(self) -> list[str]:
        pager = await self.client.aio.models.list()
        return [m.name.rpartition("models/")[2] async for m in pager if m.name]

    # -- async view -----------------------------------------------------------------------------

    @property
    def aio(self) -> AsyncGeminiProvider:
        """The async twins of every call, plus ``generate_imagen``/``generate_imagen_bytes``."""
        view = self._aio
        if not isinstance(view, AsyncGeminiProvider):
            view = self._aio = AsyncGeminiProvider(self)
        return view


class VertexProvider(GeminiProvider):
    """Google Gemini on Vertex AI (the ``vertex`` identifier): :class:`GeminiProvider` with
    ``vertexai`` fixed, so that a router can hold both backends."""

    spec = VERTEX_SPEC
    fixed_vertexai = True
    env_settings: ClassVar[Mapping[str, tuple[str, ...]]] = {"base_url": (backend.VERTEX_BASE_URL_ENV,)}


class AsyncGeminiProvider(AsyncProvider):
    """``GeminiProvider.aio``: the core's async view plus the Imagen calls."""

    generate_imagen = GeminiProvider.generate_imagen
    generate_imagen_bytes = GeminiProvider.generate_imagen_bytes
