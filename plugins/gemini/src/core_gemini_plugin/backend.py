"""Which Gemini API a provider talks to, and with which credentials. Light: stdlib only.

google-genai serves the Gemini Developer API (``generativelanguage.googleapis.com``, an API key)
and Vertex AI (``aiplatform.googleapis.com``: a project and location with Google Cloud
credentials, or express mode with an API key). The settings here carry google-genai's names
(``vertexai``, ``project``, ``location``, ``credentials``) and its environment variables are read
as ``genai.Client`` reads them (``google/genai/_api_client.py``, ``client.py`` and
``_base_url.py`` of google-genai 3.6):

- ``GOOGLE_GENAI_USE_ENTERPRISE`` / ``GOOGLE_GENAI_USE_VERTEXAI``: ``true`` or ``1`` (any case)
  switch to Vertex AI, anything else to the Developer API; the first wins when both are set;
- ``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION``: used unless an API key was given
  explicitly (an explicit key means express mode); a project, explicit or from the environment,
  beats a key from the environment;
- ``GOOGLE_API_KEY`` then ``GEMINI_API_KEY``: the express-mode key, left to the SDK to read, but
  only when the switch above says Vertex AI: the same variables hold Developer API keys, and a
  provider chosen as Vertex AI by its settings or identifier (``vertex``) must not send one to
  Vertex AI (a router may pick ``vertex`` without the user asking for it); it authenticates with
  Google Cloud credentials then, or a key given as ``api_key``;
- ``GOOGLE_VERTEX_BASE_URL``: the Vertex endpoint (``GOOGLE_GEMINI_BASE_URL`` is the Developer
  API's);
- ``GOOGLE_APPLICATION_CREDENTIALS`` and gcloud's ``application_default_credentials.json``:
  Application Default Credentials, found by ``google.auth.default`` inside the SDK.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_core.errors import ConfigurationError, UnknownSettingError

#: The switches ``genai.Client`` reads when ``vertexai`` is not given, the first winning.
SWITCH_ENV = ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI")
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
LOCATION_ENV = "GOOGLE_CLOUD_LOCATION"
#: The express-mode key variables, in the order google-genai prefers them.
VERTEX_KEY_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
VERTEX_BASE_URL_ENV = "GOOGLE_VERTEX_BASE_URL"
GEMINI_BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
ADC_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
#: The scope google-genai asks Application Default Credentials for.
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
#: Vertex AI's location when a project is given without one (google-genai's default too).
DEFAULT_LOCATION = "global"
#: The settings of the backend, google-genai's names.
SETTINGS = ("vertexai", "project", "location", "credentials")
#: Settings that were read for Imagen only, and what replaced them.
RENAMED = {"vertex_project": "project", "vertex_location": "location"}

#: What to do when no credentials are found, for ``llm-core providers`` and ``select()``.
VERTEX_HELP = (
    f"set {PROJECT_ENV} with application default credentials (gcloud auth application-default login, or "
    f"{ADC_ENV}), or {SWITCH_ENV[1]}=true with {VERTEX_KEY_ENV[0]} for express mode, or pass project=..., "
    "credentials=... or api_key=..."
)


def switched_on(env: Mapping[str, str]) -> bool | None:
    """The backend the environment chooses, as google-genai reads it: ``True`` (Vertex AI),
    ``False`` (Developer API) or ``None`` (not set)."""
    for name in SWITCH_ENV:
        value = env.get(name)
        if value is not None:
            return value.lower() in ("true", "1")
    return None


def adc_file(env: Mapping[str, str]) -> Path | None:
    """The Application Default Credentials file ``google.auth.default`` would read, if it exists:
    ``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's well-known file. Credentials of the
    metadata server (on Google Cloud) cannot be seen without a request and are not looked for."""
    named = env.get(ADC_ENV)
    if named:
        path = Path(named).expanduser()
        return path if path.is_file() else None
    config = env.get("CLOUDSDK_CONFIG")
    if config:
        folder = Path(config)
    elif sys.platform == "win32" and env.get("APPDATA"):
        folder = Path(env["APPDATA"]) / "gcloud"
    else:
        folder = Path.home() / ".config" / "gcloud"
    path = folder / "application_default_credentials.json"
    return path if path.is_file() else None


def vertex_credentials_found(env: Mapping[str, str]) -> bool:
    """Whether the environment configures Vertex AI: an ADC file, or the switch with a key
    variable (express mode). The ``vertex`` provider's check (it reads no key variable else)."""
    return adc_file(env) is not None or (bool(switched_on(env)) and any(env.get(name) for name in VERTEX_KEY_ENV))


def gemini_credentials_found(env: Mapping[str, str]) -> bool:
    """The ``gemini`` provider's check beyond its key variables: the environment switches it to
    Vertex AI and holds Google Cloud credentials."""
    return bool(switched_on(env)) and adc_file(env) is not None


@dataclass(frozen=True)
class Backend:
    """The backend of one provider and the Vertex AI settings it passes to ``genai.Client``.

    ``project`` and ``location`` are passed explicitly (read from the environment as the SDK
    reads them), so that a ``base_url`` keeps the ``projects/.../locations/...`` paths;
    ``credentials`` is a ``google.auth`` credentials object, a path to a credentials file, or
    ``None`` (the SDK then finds Application Default Credentials, or uses an express-mode key).
    """

    vertexai: bool
    project: str | None = None
    location: str | None = None
    credentials: Any = None
    #: The environment switches google-genai to Vertex AI: its key variables are express-mode keys.
    env_keys: bool = False
    #: An ADC file exists (``google.auth.default`` will find credentials without a request).
    adc: bool = False

    @property
    def name(self) -> str:
        return "Vertex AI" if self.vertexai else "Gemini Developer API"

    def configured(self, explicit_key: bool, env: Mapping[str, str] | None = None) -> bool:
        """Whether Vertex AI has something to authenticate with: an explicit key, credentials, a
        project (credentials are then found at the first call: an ADC file or the metadata
        server), an ADC file, or a key variable the switch makes an express-mode key."""
        source = os.environ if env is None else env
        keys = self.env_keys and any(source.get(name) for name in VERTEX_KEY_ENV)
        return explicit_key or self.credentials is not None or bool(self.project) or self.adc or keys

    def loads_adc(self, explicit_key: bool, env: Mapping[str, str] | None = None) -> bool:
        """Whether the provider loads Application Default Credentials itself: when google-genai
        would otherwise take a key variable that the switch does not make a Vertex AI key (it
        prefers a key variable to ADC when no project is set)."""
        source = os.environ if env is None else env
        return not (explicit_key or self.credentials is not None or self.env_keys) and any(
            source.get(name) for name in VERTEX_KEY_ENV
        )


def refuse_renamed(settings: Mapping[str, Any], provider: str) -> None:
    """Refuse the settings that were read for Imagen only, naming what replaced them."""
    for old, new in RENAMED.items():
        if old in settings:
            raise UnknownSettingError(
                f"{old} is no longer read: Vertex AI takes google-genai's names, {new}=... with vertexai=True "
                "(or the 'vertex' provider), for every call, Imagen included",
                provider=provider,
            )


def chooses_vertex(
    settings: Mapping[str, Any], *, fixed: bool | None, provider: str, env: Mapping[str, str] | None = None
) -> bool:
    """Whether the provider talks to Vertex AI: ``fixed`` (the identifier's backend), else the
    ``vertexai`` setting (explicit over the config file, in ``settings``), else the environment."""
    given = settings.get("vertexai")
    if given is not None and not isinstance(given, bool):
        raise ConfigurationError(f"vertexai must be true or false, not {given!r}", provider=provider)
    if fixed is not None:
        if given is not None and given != fixed:
            raise ConfigurationError(
                f"the {provider!r} provider always uses Vertex AI; use the 'gemini' provider for the Developer API",
                provider=provider,
            )
        return fixed
    return given if given is not None else bool(switched_on(os.environ if env is None else env))


def resolve(
    settings: Mapping[str, Any],
    *,
    vertexai: bool,
    explicit_key: bool,
    provider: str,
    env: Mapping[str, str] | None = None,
) -> Backend:
    """The backend's settings from ``settings`` (``project``, ``location``, ``credentials``: the
    provider's explicit settings over its config-file table) and the environment.

    ``explicit_key``: an API key was given as an argument, in the config file or the key store,
    which makes Vertex AI use express mode rather than the environment's project."""
    source = os.environ if env is None else env
    project, location, credentials = (settings.get(name) for name in ("project", "location", "credentials"))
    if not vertexai:
        named = [name for name in ("project", "location", "credentials") if settings.get(name) is not None]
        if named:
            raise ConfigurationError(
                f"{', '.join(named)} only apply to Vertex AI: add vertexai=True (or use the 'vertex' provider)",
                provider=provider,
            )
        return Backend(False)
    for name, value in (("project", project), ("location", location)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigurationError(f"{name} must be a non-empty string", provider=provider)
    if credentials is not None and explicit_key:
        raise ConfigurationError(
            "give either credentials or an API key (express mode), not both: google-genai takes one",
            provider=provider,
        )
    if isinstance(credentials, str | os.PathLike):
        path = Path(credentials).expanduser()
        if not path.is_file():
            raise ConfigurationError(f"credentials file {path} does not exist", provider=provider)
        credentials = path
    if not explicit_key:  # an explicit key means express mode: the environment's project is not used
        project = project or source.get(PROJECT_ENV) or None
        location = location or source.get(LOCATION_ENV) or None
    if project and not location:
        location = DEFAULT_LOCATION
    return Backend(True, project, location, credentials, bool(switched_on(source)), adc_file(source) is not None)


def load_credentials(backend: Backend, provider: str, *, adc: bool = False) -> tuple[Any, str | None]:
    """The ``google.auth`` credentials to pass to the SDK, and the project they name.

    A credentials file is read with the cloud-platform scope by the loader of its ``type`` (the
    type-specific loaders google-auth recommends over its generic one): a service-account key
    (its ``project_id``) or an authorized-user file (its ``quota_project_id``); for any other
    type, build the ``google.auth`` object yourself and pass it. With ``adc``, Application
    Default Credentials are loaded as google-genai loads them."""
    import google.auth
    from google.auth import exceptions

    if adc and backend.credentials is None:
        try:
            found: tuple[Any, str | None] = google.auth.default(scopes=[CLOUD_PLATFORM])
        except exceptions.DefaultCredentialsError as exc:
            raise ConfigurationError(
                f"no Vertex AI credentials for provider {provider!r}: {VERTEX_HELP} ({exc})", provider=provider
            ) from None
        return found
    path = backend.credentials
    if not isinstance(path, Path):
        return path, None
    from google.oauth2 import credentials as user_credentials, service_account

    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        kind = info.get("type") if isinstance(info, dict) else None
        if kind == "service_account":
            loaded = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
                str(path), scopes=[CLOUD_PLATFORM]
            )
            return loaded, info.get("project_id")
        if kind == "authorized_user":
            loaded = user_credentials.Credentials.from_authorized_user_file(  # type: ignore[no-untyped-call]
                str(path), scopes=[CLOUD_PLATFORM]
            )
            return loaded, info.get("quota_project_id")
    except (OSError, ValueError, exceptions.GoogleAuthError) as exc:
        # the message names the file and the kind of failure, never the file's contents
        raise ConfigurationError(
            f"cannot use credentials file {path}: {type(exc).__name__}", provider=provider
        ) from None
    raise ConfigurationError(
        f"credentials file {path} is not a service-account key or an authorized-user file (type {kind!r}): "
        "pass a google.auth credentials object built for it",
        provider=provider,
    )
