"""The settings and SDK clients of the Gemini providers (the base of ``GeminiProvider``).

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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from core_gemini_plugin import backend, errors
from core_gemini_plugin.models import VERTEX_LACKS, on_vertex
from llm_core.config import Secret, hide_secret, provider_section, resolve_setting, reveal_secrets
from llm_core.errors import ConfigurationError, LLMError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.redaction import protect_loggers
from llm_core.specs import ProviderSpec
from llm_core.transport import (
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


class GeminiClients(BaseProvider):
    """Backend, settings and SDK clients of :class:`~core_gemini_plugin.provider.GeminiProvider`."""

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
