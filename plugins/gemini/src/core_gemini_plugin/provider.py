"""``GeminiProvider``: the wire adapter around google-genai, its clients and its calls.

Validation, retries, observers and stream event order live in llm-core; mapping and parsing are
the pure functions of this package. This module holds the settings and SDK clients of the
Gemini providers and makes the calls, sync through ``client.models``/``client.decisions`` and
async through ``client.aio``.

The backend (Gemini Developer API or Vertex AI) and its credentials are resolved by
:mod:`core_gemini_plugin.backend`; on Vertex AI the provider's spec is the Vertex AI catalogue
(:data:`~core_gemini_plugin.models.VERTEX_LACKS` left out), whichever identifier it was built as.
The google-genai client is built on first use (``import google.genai`` happens here and nowhere
earlier), with the SDK's own retries off (``HttpRetryOptions(attempts=1)``, which also stops the
decisions client's retries: only the core's policy retries) and the guarded httpx2 clients of
:mod:`llm_core.transport` (no redirects: the SDK would otherwise forward ``x-goog-api-key`` or
the access token to the host a ``Location`` names; whole-attempt timeouts; size limits; one pool
per event loop).
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core_gemini_plugin import backend, contents, decisions, errors, request_mapper, response_parser
from core_gemini_plugin.batch import GeminiBatch
from core_gemini_plugin.models import DEFAULT_IMAGEN_MODEL, VERTEX_LACKS, is_imagen, on_vertex
from core_gemini_plugin.plugin import SPEC, VERTEX_SPEC
from core_gemini_plugin.stream_parser import GeminiStreamParser
from llm_core.aio import AsyncProvider
from llm_core.config import Secret, hide_secret, provider_section, resolve_setting, reveal_secrets
from llm_core.decisions import DecisionResponse
from llm_core.errors import (
    ConfigurationError,
    InvalidInputError,
    InvalidRequestError,
    LLMError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature
from llm_core.operation import Cost, call
from llm_core.provider import BaseProvider
from llm_core.redaction import protect_loggers
from llm_core.requests import SAMPLING_OPTIONS, ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest, build
from llm_core.responses import EmbeddingResponse, ImageResponse, TokenCount
from llm_core.specs import ProviderSpec
from llm_core.transport import (
    ClosingStream,
    Limits,
    TransportSettings,
    async_http_client,
    check_endpoint,
    sync_http_client,
    transport_error,
)
from llm_core.wire import ImageRoute, Plan

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

DEFAULT_API_VERSION = "v1"


class ImagenRoute(ImageRoute):
    """Imagen: ``build_imagen_request``, then the image hooks as ``generate_image`` (which tell
    an Imagen model by its name), sent once (no revision)."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ImageRequest:
        request: ImageRequest = p.build_imagen_request(*args, **options)
        return request

    def plan(self, p: Any, request: ImageRequest) -> Plan:
        return Plan(self.hooks(p), (request,))


IMAGEN = ImagenRoute()


class GeminiProvider(BaseProvider):
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
    ``stream_deadline``), and call defaults (``call_defaults``: the sampling options of
    :data:`llm_core.requests.SAMPLING_OPTIONS` and the per-call options of
    :data:`request_mapper.CHAT_OPTIONS`).
    ``base_url`` also reads ``GOOGLE_GEMINI_BASE_URL`` (``GOOGLE_VERTEX_BASE_URL`` on Vertex AI).
    """

    spec = SPEC
    batch_api = GeminiBatch
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
    call_defaults: ClassVar[frozenset[str]] = SAMPLING_OPTIONS | request_mapper.CHAT_OPTIONS
    supported_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp", "heic")
    max_image_size: ClassVar[int] = contents.MAX_INLINE_BYTES
    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = contents.MAX_INLINE_BYTES
    tool_name_rule = (r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$", "a letter or '_', then letters, digits, '_.:-', <= 128")
    max_embedding_inputs = 100  # requests per batchEmbedContents call

    #: The backend the identifier imposes (``True``: Vertex AI); ``None``: settings and environment choose.
    fixed_vertexai: ClassVar[bool | None] = None

    def __init__(self, **config: Any) -> None:
        self._client_lock = threading.Lock()
        super().__init__(**config)

    # -- settings and SDK clients -------------------------------------------------------------

    def _check_setting_names(self, settings: Mapping[str, Any]) -> None:
        backend.refuse_renamed(settings, self.identifier)
        super()._check_setting_names(settings)

    def _apply_settings(self) -> None:
        section = provider_section(self.identifier, self._config_file)
        backend.refuse_renamed(section, self.identifier)
        self._given_spec: ProviderSpec = getattr(self, "_given_spec", self._spec)
        chosen = {**section, **{k: v for k, v in self._explicit.items() if v is not None}}
        self._vertexai = backend.chooses_vertex(chosen, fixed=self.fixed_vertexai, provider=self.identifier)
        super()._apply_settings()
        settings = {name: self.options.pop(name, None) for name in backend.SETTINGS}
        self.backend = backend.resolve(
            settings, vertexai=self._vertexai, explicit_key=self.api_key is not None, provider=self.identifier
        )
        self._spec = _on_vertex(self._given_spec) if self._vertexai else self._given_spec
        if self._vertexai:  # Vertex AI's own base-URL variable, never the Developer API's
            url = resolve_setting(
                "base_url", self._explicit.get("base_url"), section=section, env=(backend.VERTEX_BASE_URL_ENV,)
            )
            self._base_url = hide_secret("base_url", url)
        vertex_key = self.options.pop("vertex_api_key", None)
        self.vertex_api_key: Secret | None = (
            vertex_key if isinstance(vertex_key, Secret) else Secret(str(vertex_key)) if vertex_key else None
        )
        self.transport_settings = TransportSettings.from_options(self.options, provider=self.identifier)
        check_endpoint(
            self.base_url,
            has_key=self.api_key is not None or self._vertexai,  # a Google Cloud access token is a key too
            settings=self.transport_settings,
            provider=self.identifier,
        )

    def _key_rule(self, section: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
        """On Vertex AI a key is optional (Google Cloud credentials authenticate), and its
        variables are left to google-genai, which reads them only as the backend allows."""
        return ((), False) if self._vertexai else super()._key_rule(section)

    def url_schemes(self) -> frozenset[str]:
        """Vertex AI reads ``gs://`` Cloud Storage objects itself (``fileData.fileUri``)."""
        return super().url_schemes() | {"gs"} if self._vertexai else super().url_schemes()

    def is_available(self) -> bool:
        if self._vertexai:
            return self.backend.configured(self.api_key is not None)
        return super().is_available()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the base class pickles (no key, no SDK client), as built: the registered
        spec, not the Vertex AI catalogue derived from it, and no credentials object (a copy finds
        credentials where it runs, as it finds its key)."""
        rebuild, (cls, _spec, config_file, settings) = super().__reduce__()
        spec = None if self._given_spec is type(self).spec else self._given_spec
        if not isinstance(settings.get("credentials"), str | os.PathLike):
            settings.pop("credentials", None)
        return rebuild, (cls, spec, config_file, settings)

    def _reset_clients(self) -> None:
        self._genai: genai.Client | None = None
        self._imagen: genai.Client | None = None
        #: The access token of the last Vertex AI request, held as a secret: redaction removes it
        #: from errors, logs and cassettes as it removes keys.
        self._token: Secret | None = None

    @property
    def limits(self) -> Limits:
        """What the HTTP clients enforce (timeouts, sizes)."""
        return Limits.resolve(self.transport_settings, timeout=self.timeout, provider=self.identifier)

    def http_options(self, *, imagen: bool = False) -> types.HttpOptions:
        """The SDK's HTTP options: API version, base URL, timeout, no SDK retries, and the
        guarded httpx2 clients (built from ``client_args`` / ``async_client_args``).

        The SDK takes the timeout in whole milliseconds and reads 0 as "no timeout": it is rounded
        up, never down to 0. On Vertex AI the SDK's API version applies unless ``api_version`` is
        set; for Imagen's express-mode client (``imagen``) its version and endpoint apply.
        """
        from google.genai import types

        protect_loggers("google_genai", "google.genai")  # the SDK's loggers exist now
        limits = self.limits
        version = self.options.get("api_version", None if self._vertexai else DEFAULT_API_VERSION)
        sync_args = reveal_secrets(self.options.get("client_args")) or {}
        async_args = reveal_secrets(self.options.get("async_client_args")) or {}
        if self._vertexai:
            sync_args = _with_request_hook(sync_args, self._hold_token)
            async_args = _with_request_hook(async_args, self._ahold_token)
        return types.HttpOptions(
            api_version=None if imagen else version,
            base_url=None if imagen else self.base_url,
            timeout=max(1, math.ceil(self.timeout * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_client=sync_http_client(limits, **sync_args),
            httpx_async_client=async_http_client(limits, **async_args),
        )

    def _hold_token(self, request: Any) -> None:
        """Keep the access token a request carries as a :class:`Secret` (an httpx2 request hook)."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        held = self._token
        if scheme.lower() == "bearer" and token and (held is None or held.reveal() != token):
            self._token = Secret(token)

    async def _ahold_token(self, request: Any) -> None:
        self._hold_token(request)

    def client_arguments(self) -> dict[str, Any]:
        """What ``genai.Client`` is built with besides its HTTP options (in clear: never stored).
        On Vertex AI: the project and location, a key for express mode, the credentials (a
        credentials file is read here, Application Default Credentials when
        :meth:`~core_gemini_plugin.backend.Backend.loads_adc` says so)."""
        key = self.api_key.reveal() if self.api_key is not None else None
        if not self._vertexai:
            assert key is not None  # the core requires a key for the Developer API
            return {"vertexai": False, "api_key": key}
        chosen = self.backend
        if not chosen.configured(key is not None):
            raise ConfigurationError(
                f"no Vertex AI credentials for provider {self.identifier!r}: {backend.VERTEX_HELP}",
                provider=self.identifier,
            )
        credentials, named = backend.load_credentials(chosen, self.identifier, adc=chosen.loads_adc(key is not None))
        project = chosen.project or named
        location = chosen.location or (backend.DEFAULT_LOCATION if project else None)
        return {"vertexai": True, "api_key": key, "credentials": credentials, "project": project, "location": location}

    @property
    def client(self) -> genai.Client:
        """The google-genai client (built on first use; ``client.aio`` is its async twin)."""
        client = self._genai
        if client is None:
            with self._client_lock:
                if self._genai is None:
                    from google import genai

                    self._genai = genai.Client(**self.client_arguments(), http_options=self.http_options())
                client = self._genai
        return client

    @property
    def imagen_client(self) -> genai.Client:
        """The client for Imagen, which google-genai serves on Vertex AI: :attr:`client` on
        Vertex AI, else Vertex AI's express mode with ``vertex_api_key`` (or the provider's key)."""
        if self._vertexai:
            return self.client
        client = self._imagen
        if client is None:
            with self._client_lock:
                if self._imagen is None:
                    from google import genai

                    key = self.vertex_api_key or self.api_key
                    assert key is not None
                    self._imagen = genai.Client(
                        vertexai=True, api_key=key.reveal(), http_options=self.http_options(imagen=True)
                    )
                client = self._imagen
        return client

    def map_error(self, error: BaseException) -> LLMError:
        mapped = transport_error(error) or errors.map_error(error)
        mapped.provider = self.identifier  # ``vertex`` or ``gemini``: the parsers' errors name the plugin
        return mapped

    def _require(self, feature: Feature, model: str) -> None:
        """What Vertex AI lacks is refused with the reason (see :data:`VERTEX_LACKS`)."""
        if self._vertexai and feature in VERTEX_LACKS:
            raise UnsupportedFeatureError(
                f"{feature.value} is not offered on Vertex AI: {VERTEX_LACKS[feature]}", provider=self.identifier
            )
        super()._require(feature, model)

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


def _on_vertex(spec: ProviderSpec) -> ProviderSpec:
    """``spec`` as Vertex AI serves it: its catalogue without what Vertex AI lacks."""
    models = on_vertex(spec.models)
    default = spec.default_model
    if models and not any(m.id == default for m in models):
        default = models[0].id
    return dataclasses.replace(spec, features=spec.features - VERTEX_LACKS.keys(), models=models, default_model=default)


def _with_request_hook(args: Mapping[str, Any], hook: Any) -> dict[str, Any]:
    """httpx2 client arguments with ``hook`` added to the request hooks (after any given)."""
    hooks = dict(args.get("event_hooks") or {})
    hooks["request"] = [*hooks.get("request", ()), hook]
    return {**args, "event_hooks": hooks}
