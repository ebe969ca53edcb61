"""The OpenAI provider: a thin I/O shell around the pure mappers and parsers.

The ``openai`` SDK is imported on first use (client properties), never at module import. SDK
clients are built with ``max_retries=0`` (only the core's retry policy retries) on the guarded
httpx2 clients of :mod:`llm_core.transport` (no redirects, whole-attempt timeouts, size limits,
one connection pool per event loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core_openai_plugin import decisions, request_mapper, response_parser
from core_openai_plugin.batch import OpenAIBatch
from core_openai_plugin.errors import OPENAI, Wording, map_openai_error
from core_openai_plugin.plugin import IDENTIFIER, SPEC
from core_openai_plugin.servers import header_remover, server_wording
from core_openai_plugin.stream_parser import ResponsesStreamParser
from llm_core.config import reveal_secrets
from llm_core.decisions import DecisionResponse
from llm_core.endpoints import EndpointSettings
from llm_core.errors import LLMError
from llm_core.operations import Operations
from llm_core.provider import AsyncProvider, BaseProvider
from llm_core.redaction import protect_loggers
from llm_core.requests import SAMPLING_OPTIONS, ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest
from llm_core.responses import CompletionResponse, ConnectionStatus, EmbeddingResponse, ImageResponse
from llm_core.transport import (
    Limits,
    TransportSettings,
    async_http_client,
    check_endpoint,
    sync_http_client,
    transport_error,
)

if TYPE_CHECKING:
    from openai.types.responses import Response

    from openai import AsyncOpenAI, OpenAI

#: Provider options handed to the SDK client constructor.
CLIENT_OPTIONS = ("organization", "project", "default_headers", "default_query")
#: What the SDK is given as the key of a keyless server (it refuses to build a client without
#: one, and would otherwise read OPENAI_API_KEY and send it there); the ``Authorization`` header
#: it makes of it is removed from every request before it leaves (see ``_dropped_headers``).
KEYLESS = "keyless"


class OpenAIProvider(BaseProvider):
    """OpenAI (and OpenAI-compatible servers) through the Responses, Embeddings, Images and
    Decisions APIs.

    Settings: ``api_key`` (``OPENAI_API_KEY``), ``model``, ``base_url`` (``OPENAI_BASE_URL``),
    ``timeout``, ``retry``. Options: ``organization``, ``project``, ``default_headers``,
    ``default_query`` (client), ``unknown_model_features`` and ``native_decisions`` (models outside
    the catalogue), ``strict_sampling`` (refuse temperature/top_p on reasoning models, default
    on), call defaults (``call_defaults``: the sampling options the Responses API has and the
    per-call options of :data:`request_mapper.CHAT_OPTIONS`), ``client_args``
    (passed to the httpx2 clients: proxy, verify, limits, a transport) and the transport settings
    of :class:`llm_core.transport.TransportSettings` (``allow_insecure_http``,
    ``max_response_bytes``, ``max_event_bytes``, ``stream_first_event_timeout``,
    ``stream_idle_timeout``, ``stream_deadline``).
    """

    spec = SPEC
    batch_api = OpenAIBatch
    #: Keys an ``[providers.openai]`` table (or a constructor keyword) may hold beyond the core's
    #: and the call defaults (an unknown key is an error).
    settings: ClassVar[tuple[Any, ...]] = (
        TransportSettings,
        *CLIENT_OPTIONS,
        "client_args",
        "strict_sampling",
        "native_decisions",
        EndpointSettings,  # a named endpoint's table: plugin, api, preset, api_key_env, models, features
    )
    #: Defaults for every chat-shaped call: the sampling fields (the Responses API has no stop
    #: sequences) and every per-call chat option.
    call_defaults: ClassVar[frozenset[str]] = (SAMPLING_OPTIONS - request_mapper.REFUSED_SAMPLING.keys()) | (
        request_mapper.CHAT_OPTIONS
    )
    env_settings: ClassVar[Mapping[str, tuple[str, ...]]] = {"base_url": ("OPENAI_BASE_URL",)}
    supported_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp", "gif")
    max_image_size: ClassVar[int] = 20 * 1024 * 1024
    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = 32 * 1024 * 1024
    tool_name_rule = (r"^[a-zA-Z0-9_-]{1,64}$", "1 to 64 letters, digits, '_' or '-'")  # FunctionDefinition.name
    max_embedding_inputs = 2048  # "any array must be 2048 dimensions or less" (embeddings.create)
    #: The API this class speaks, its chat path, and the ``api`` setting of the other dialect
    #: (named in the error of a server that answers 404 on the path).
    dialect: ClassVar[tuple[str, str, str]] = ("the Responses API", "POST /responses", "chat_completions")

    # -- clients ------------------------------------------------------------------------------

    def _apply_settings(self) -> None:
        super()._apply_settings()
        #: A named endpoint (not the plugin's own ``openai`` provider).
        self.is_endpoint = self.identifier != IDENTIFIER
        self.transport_settings = TransportSettings.from_options(self.options, provider=self.identifier)
        check_endpoint(
            self.base_url, has_key=self.api_key is not None, settings=self.transport_settings, provider=self.identifier
        )
        self.wording = self._wording()

    def _wording(self) -> Wording:
        """How errors name this server (``OpenAI`` for api.openai.com)."""
        if not self.base_url and not self.is_endpoint:
            return OPENAI
        return server_wording(
            self.name,
            self.base_url or "https://api.openai.com/v1",
            self.identifier,
            endpoint=self.is_endpoint,
            dialect=self.dialect,
            key_variables=self._spec.credential_env,
        )

    def _reset_clients(self) -> None:
        old = getattr(self, "_client", None)
        if old is not None:
            old.close()  # its sockets now, not at garbage collection
        self._client: OpenAI | None = None
        self._aclient: AsyncOpenAI | None = None

    @property
    def limits(self) -> Limits:
        """What the HTTP clients enforce (timeouts, sizes)."""
        return Limits.resolve(self.transport_settings, timeout=self.timeout, provider=self.identifier)

    def _client_kwargs(self) -> dict[str, Any]:
        protect_loggers("openai")  # the SDK is imported: its loggers exist
        kwargs: dict[str, Any] = {
            "api_key": self.api_key.reveal() if self.api_key is not None else KEYLESS,
            "timeout": self.timeout,
            "max_retries": 0,
        }
        if self.base_url:
            kwargs["base_url"] = self.base_url
        kwargs.update(
            {name: reveal_secrets(self.options[name]) for name in CLIENT_OPTIONS if self.options.get(name) is not None}
        )
        return kwargs

    def _http_client_args(self, *, asynchronous: bool = False) -> dict[str, Any]:
        """``client_args`` over the connection-pool limits the SDK gives its own default client
        (1,000 connections, 100 kept alive), which our httpx2 client would otherwise not have;
        plus a request hook that removes the headers this server must not get."""
        from openai import DEFAULT_CONNECTION_LIMITS

        args = {"limits": DEFAULT_CONNECTION_LIMITS, **(reveal_secrets(self.options.get("client_args")) or {})}
        dropped = self._dropped_headers()
        if dropped:
            hooks = dict(args.get("event_hooks") or {})
            hooks["request"] = [*hooks.get("request", ()), header_remover(dropped, asynchronous=asynchronous)]
            args["event_hooks"] = hooks
        return args

    def _dropped_headers(self) -> tuple[str, ...]:
        """Headers removed from every request: ``Authorization`` of a keyless server (the SDK
        makes one of :data:`KEYLESS`), and for a named endpoint the ``OpenAI-Organization`` /
        ``OpenAI-Project`` the SDK reads from OPENAI_ORG_ID / OPENAI_PROJECT_ID (OpenAI's ids,
        not the endpoint's) unless the endpoint sets them."""
        dropped: tuple[str, ...] = () if self.api_key is not None else ("authorization",)
        if self.is_endpoint:
            dropped += tuple(
                header
                for option, header in (("organization", "openai-organization"), ("project", "openai-project"))
                if self.options.get(option) is None
            )
        return dropped

    @property
    def client(self) -> OpenAI:
        """The synchronous SDK client (built on first use)."""
        if self._client is None:
            from openai import OpenAI

            http = sync_http_client(self.limits, **self._http_client_args())
            self._client = OpenAI(**self._client_kwargs(), http_client=http)
        return self._client

    @property
    def async_client(self) -> AsyncOpenAI:
        """The async SDK client (built on first use). Its transport keeps one connection pool per
        event loop and closes it when that loop shuts down, so one client serves every loop."""
        if self._aclient is None:
            from openai import AsyncOpenAI

            http = async_http_client(self.limits, **self._http_client_args(asynchronous=True))
            self._aclient = AsyncOpenAI(**self._client_kwargs(), http_client=http)
        return self._aclient

    def map_error(self, error: BaseException) -> LLMError:
        guarded = transport_error(error)
        if guarded is not None:
            return guarded
        secrets = (self.api_key.reveal(),) if self.api_key is not None else ()
        return map_openai_error(error, provider=self.identifier, secrets=secrets, wording=self.wording)

    # -- health ------------------------------------------------------------------------------

    @property
    def aio(self) -> AsyncProvider:
        """The async twins of every call; ``test_connection`` probes the chat path as the sync one."""
        if self._aio is None:
            self._aio = _AsyncOpenAIProvider(self)
        return self._aio

    def test_connection(self) -> ConnectionStatus:
        """The model list, and for a server other than api.openai.com one short chat call: a
        server that lists models but does not implement the API this provider speaks fails here."""
        status = super().test_connection()
        model = self._probe_model(status)
        if model is not None:
            try:
                self._respond(Operations.complete, PROBE, {"model": model, "max_tokens": 16})
            except LLMError as exc:
                raise self._connection_failed(exc) from exc
        return self._probed(status, model)

    def _probe_model(self, status: ConnectionStatus) -> str | None:
        """The model a health check sends its chat call to (``None``: api.openai.com, no call)."""
        if not self.base_url and not self.is_endpoint:
            return None
        model = self._model or next(iter(status.models), None)
        if model is None:
            problem = LLMError(f"{self.wording.service} lists no model: set model = ... to test a chat call")
            raise self._connection_failed(problem)
        return model

    def _probed(self, status: ConnectionStatus, model: str | None) -> ConnectionStatus:
        if model is not None:
            status.message = (
                f"connected to {self.wording.service}: {model} answers ({self.dialect[0]}), {status.message}"
            )
        return status

    # -- chat (also tools, vision, documents, JSON, decision fallback) ----------------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return request_mapper.map_chat(
            request,
            self._spec.model(request.model),
            strict_sampling=bool(self.options.get("strict_sampling", True)),
        )

    def _send_chat(self, payload: dict[str, Any]) -> Response:
        response: Response = self.client.responses.create(**payload)
        return response

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Response]:
        response: Awaitable[Response] = self.async_client.responses.create(**payload)
        return response  # the SDK's coroutine: the core awaits it

    def parse_chat_response(self, raw: Response, request: ChatRequest) -> CompletionResponse:
        """The pure parser (the same for sync and async answers); a named endpoint's answers
        name it as their provider (conversations replay only their own provider's data)."""
        response = response_parser.parse_response(raw, request)
        if self.is_endpoint:
            response.provider = self.identifier
        return response

    # -- streaming ---------------------------------------------------------------------------

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        # the SDK's Stream as it is: the core closes it (releasing the connection) when done
        stream: Iterator[Any] = self.client.responses.create(**payload, stream=True)
        return stream

    def _asend_stream(self, payload: dict[str, Any]) -> Awaitable[AsyncIterator[Any]]:
        # the SDK's coroutine of its AsyncStream: the core awaits both, and the stream's aclose()
        stream: Awaitable[AsyncIterator[Any]] = self.async_client.responses.create(**payload, stream=True)
        return stream

    def new_stream_parser(self, request: ChatRequest) -> ResponsesStreamParser:
        return ResponsesStreamParser(request)

    # -- token counting ----------------------------------------------------------------------

    def map_count_tokens_request(self, request: ChatRequest) -> dict[str, Any]:
        return request_mapper.map_count_tokens(self.map_chat_request(request))

    def _send_count_tokens(self, payload: dict[str, Any]) -> Any:
        return self.client.responses.input_tokens.count(**payload)

    def _asend_count_tokens(self, payload: dict[str, Any]) -> Awaitable[Any]:
        counted: Awaitable[Any] = self.async_client.responses.input_tokens.count(**payload)
        return counted  # the SDK's coroutine: the core awaits it

    parse_count_tokens = staticmethod(response_parser.parse_input_tokens)

    # -- models ------------------------------------------------------------------------------

    def _send_list_models(self) -> list[str]:
        return sorted(model.id for model in self.client.models.list())

    async def _asend_list_models(self) -> list[str]:
        return sorted([model.id async for model in self.async_client.models.list()])

    # -- embeddings ------------------------------------------------------------------------------

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]:
        return request_mapper.map_embedding(request, self.provider_spec.model(request.model))

    def _send_embeddings(self, payload: dict[str, Any]) -> Any:
        return self.client.embeddings.create(**payload)

    async def _asend_embeddings(self, payload: dict[str, Any]) -> Any:
        return await self.async_client.embeddings.create(**payload)

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        response = response_parser.parse_embeddings(raw, request)
        if self.is_endpoint:
            response.provider = self.identifier
        return response

    # -- images ------------------------------------------------------------------------------

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]:
        return request_mapper.map_image(request, self.provider_spec.model(request.model))

    def _send_image(self, payload: dict[str, Any]) -> Any:
        images = self.client.images
        return images.edit(**payload) if "image" in payload else images.generate(**payload)

    async def _asend_image(self, payload: dict[str, Any]) -> Any:
        images = self.async_client.images
        return await (images.edit(**payload) if "image" in payload else images.generate(**payload))

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse:
        return response_parser.parse_images(raw, request)

    # -- decisions ---------------------------------------------------------------------------

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]:
        return decisions.map_decision(request)

    def _send_decision(self, payload: dict[str, Any]) -> Any:
        return self.client.decisions.create(**payload)

    async def _asend_decision(self, payload: dict[str, Any]) -> Any:
        return await self.async_client.decisions.create(**payload)

    def parse_decision_response(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        return decisions.parse_decision(raw, request)


#: The health check's chat call.
PROBE = ("Reply with OK.",)


class _AsyncOpenAIProvider(AsyncProvider):
    """``provider.aio`` of the OpenAI providers: the health check awaits the same probe."""

    _p: OpenAIProvider

    async def test_connection(self) -> ConnectionStatus:
        status = await super().test_connection()
        model = self._p._probe_model(status)
        if model is not None:
            try:
                await self._p._arespond(Operations.complete, PROBE, {"model": model, "max_tokens": 16})
            except LLMError as exc:
                raise self._p._connection_failed(exc) from exc
        return self._p._probed(status, model)
