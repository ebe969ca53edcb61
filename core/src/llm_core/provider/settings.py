"""What a provider is and how it is configured: its spec, settings and features.

The lowest layer of a provider (see docs/architecture.md): :class:`ProviderSettings` resolves the
settings once (argument, then config file, then environment) and answers what the provider
and each of its models offer. It sends nothing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar

from llm_core.config import (
    CORE_SETTINGS,
    Secret,
    check_names,
    check_section,
    declared_settings,
    hide_secret,
    hide_secrets,
    provider_section,
    resolve_api_key,
    resolve_setting,
    reveal_secrets,
)
from llm_core.errors import ConfigurationError, PluginLoadError, UnsupportedFeatureError
from llm_core.features import CHAT_OPTIONS, Feature, parse_features
from llm_core.messages import WEB_SCHEMES
from llm_core.operations import DECLARED_ONLY, OPERATIONS
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec

#: What a chat call may carry: options (thinking, built-in and custom tools) and document parts.
CHAT_ASPECTS = CHAT_OPTIONS | {Feature.DOCUMENTS}
#: Classes → the features they implement (worked out once per class).
_IMPLEMENTED: weakref.WeakKeyDictionary[type, frozenset[Feature]] = weakref.WeakKeyDictionary()

#: Settings with a constructor argument of their own; every other keyword is a provider option.
_RESERVED = frozenset({"api_key", "model", "base_url", "timeout", "retry"})
#: Set while a provider is unpickled: a missing key then waits for the first call (see
#: ``_rebuild_provider``), since the process that unpickles (a worker) may not hold it yet.
_UNPICKLING: ContextVar[bool] = ContextVar("llm_core_unpickling_provider", default=False)
#: Serialises the settings resolved again at a first call (see ``_require_key``).
_KEY_LOCK = threading.Lock()


class ProviderSettings:
    """Spec, settings and feature checks of a provider (the base of :class:`BaseProvider`)."""

    #: The spec this class implements (set by the plugin; the registry may pass another).
    spec: ClassVar[ProviderSpec | None] = None
    #: Setting name → environment variables read when neither argument nor config file sets it.
    env_settings: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: Settings this class reads, as constructor keywords, ``configure`` keys or keys of a
    #: ``[providers.NAME]`` table (names or Pydantic settings models); subclasses add their own,
    #: and any other name is refused. See :func:`llm_core.config.declared_settings`.
    settings: ClassVar[tuple[Any, ...]] = CORE_SETTINGS
    #: Per-call options this class also takes as provider-level defaults (constructor keywords or
    #: config-file keys; they count as declared settings): every chat-shaped call gets them unless
    #: it passes its own value. Request fields (``temperature``, ``max_tokens``, ``top_p``,
    #: ``stop``) and the plugin's own options may be listed.
    call_defaults: ClassVar[frozenset[str]] = frozenset()
    #: Default request timeout in seconds.
    default_timeout: ClassVar[float] = 60.0
    #: The class of the provider's batch API (a :class:`llm_core.batch.BatchAPI`), built as
    #: ``provider.batch``; ``None``: no batch API.
    batch_api: ClassVar[type[Any] | None] = None

    # What the provider's API accepts, checked before sending (see :mod:`.requests`).
    #: Image formats and the largest image, in bytes, of chat messages and ``analyze_image``.
    supported_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp", "gif")
    max_image_size: ClassVar[int] = 20 * 1024 * 1024
    #: Document formats and the largest document of chat messages.
    supported_document_formats: ClassVar[tuple[str, ...]] = ("pdf",)
    max_document_size: ClassVar[int] = 20 * 1024 * 1024
    #: Formats and size accepted for ``generate_image(input_images=...)``.
    input_image_formats: ClassVar[tuple[str, ...]] = ("png", "jpeg", "webp")
    max_input_image_size: ClassVar[int] = 20 * 1024 * 1024
    #: The provider's own rule for tool names: (a regular expression the whole name must match,
    #: what it allows in words). ``None``: only ToolSpec's general rule.
    tool_name_rule: ClassVar[tuple[str, str] | None] = None
    #: Most inputs the provider embeds in one request; more are sent as several requests whose
    #: vectors (and usage) are merged in order. ``None``: no limit.
    max_embedding_inputs: ClassVar[int | None] = None

    def __init__(
        self,
        *,
        spec: ProviderSpec | None = None,
        api_key: str | Secret | None = None,
        model: str | None = None,
        base_url: str | Secret | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | Mapping[str, Any] | None = None,
        config_file: str | Path | None = None,
        **options: Any,
    ) -> None:
        chosen = spec or type(self).spec
        if chosen is None:
            raise PluginLoadError(f"{type(self).__name__} has no ProviderSpec")
        self._spec = chosen
        #: The provider's identifier and display name (a spec changed by the settings keeps both).
        self.identifier: str = chosen.identifier
        self.name: str = chosen.name
        self._config_file = Path(config_file) if config_file else None
        explicit = {"api_key": api_key, "model": model, "base_url": base_url, "timeout": timeout, "retry": retry}
        for name, value in chosen.settings.items():  # the spec's own (a named endpoint's), under the given
            if name in explicit:
                explicit[name] = value if explicit[name] is None else explicit[name]
            else:
                options.setdefault(name, value)
        self._check_setting_names(options)
        self._explicit: dict[str, Any] = hide_secrets({**explicit, **options})  # kept for configure(): no key in clear
        self._check_declared_features()
        self._apply_settings()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its settings: no SDK client and no key (every :class:`Secret` is left out),
        so the copy (e.g. on a worker) resolves its key from its own environment or config file,
        at its first call if it had none when it was unpickled."""
        spec = None if self._spec is type(self).spec else self._spec
        return (_rebuild_provider, (type(self), spec, self._config_file, without_secrets(self._explicit)))

    # -- settings -------------------------------------------------------------------------

    def _check_setting_names(self, settings: Mapping[str, Any]) -> None:
        """Refuse a keyword the class does not declare (``tempreature=0.1`` would otherwise be kept
        and never read): the same check, and message, as for a config-file table. A class that
        declares no settings of its own is not checked (see :func:`_declares_own_settings`)."""
        if _declares_own_settings(type(self)):
            check_names(
                settings,
                declared_settings(type(self)),
                what="setting",
                where=f" passed to {type(self).__name__}",
                provider=self.identifier,
            )

    def _apply_settings(self) -> None:
        section = provider_section(self.identifier, self._config_file)
        if _declares_own_settings(type(self)):
            check_section(self.identifier, section, declared_settings(type(self)))
        explicit = self._explicit
        deferred = _UNPICKLING.get()
        key_env, key_required = self._key_rule(section)
        self.api_key: Secret | None = resolve_api_key(
            self.identifier,
            explicit.get("api_key"),
            section=section,
            env=key_env,
            required=key_required and not deferred,
        )
        #: A key that was missing when the provider was unpickled: looked for again at the first call.
        self._key_pending = deferred and self.api_key is None and key_required

        def setting(name: str) -> Any:
            return resolve_setting(name, explicit.get(name), section=section, env=self.env_settings.get(name, ()))

        self._model: str | None = setting("model") or self._spec.default_model
        # A URL with credentials (user:password@, ?key=) stays a Secret here: see ``base_url``.
        self._base_url: str | Secret | None = hide_secret("base_url", setting("base_url"))
        self.timeout = self._timeout(setting("timeout"))
        retry = explicit.get("retry")
        if retry is None:
            retry = section.get("retry", {})
        self.retry_policy = retry if isinstance(retry, RetryPolicy) else RetryPolicy.from_mapping(retry)
        file_options = {k: v for k, v in section.items() if k not in _RESERVED}
        # credential-named options (headers, query keys) are kept as Secret, like api_key
        self.options: dict[str, Any] = hide_secrets(
            {**file_options, **{k: v for k, v in explicit.items() if k not in _RESERVED}}
        )
        self._reset_clients()

    def _key_rule(self, section: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
        """The environment variables the API key is read from, and whether one is required: the
        spec's ``credential_env`` and ``requires_credentials``. A provider that can also
        authenticate otherwise (Google Cloud credentials) narrows them by its settings, which it
        reads from its explicit ones (``self._explicit``) and ``section``, its config-file table."""
        return self._spec.credential_env, self._spec.requires_credentials

    @property
    def base_url(self) -> str | None:
        """The base URL in clear, for the SDK client. It is kept as a :class:`Secret` when it
        carries credentials, so the provider's ``vars()``, ``repr()`` and pickle never hold them."""
        value: str | None = reveal_secrets(self._base_url)
        return value

    def _timeout(self, value: Any) -> float:
        if value is None:
            return self.default_timeout
        try:
            timeout = float(value)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"timeout must be a number of seconds, got {value!r}", provider=self.identifier
            ) from None
        if not timeout > 0:  # also refuses NaN
            raise ConfigurationError("timeout must be positive", provider=self.identifier)
        return timeout

    def configure(self, config: Mapping[str, Any]) -> None:
        """Change settings (same names as the constructor, checked the same way before anything
        changes); clients are rebuilt on next use."""
        self._check_setting_names(config)
        self._explicit.update(hide_secrets(config))
        self._apply_settings()

    def _reset_clients(self) -> None:
        """Drop cached SDK clients (plugins override to clear their own)."""

    def _require_key(self) -> None:
        """Before anything is sent: a provider unpickled without a key resolves its settings
        again now (the key may have been set since), raising the missing key's
        :class:`ConfigurationError` when there is still none. One check for every other provider."""
        if self._key_pending:
            with _KEY_LOCK:  # one thread resolves; another must not reset the clients it then uses
                if self._key_pending:
                    self._apply_settings()

    # -- identity ---------------------------------------------------------------------------

    @property
    def provider_spec(self) -> ProviderSpec:
        return self._spec

    def default_model(self) -> str:
        if not self._model:
            raise ConfigurationError(
                f"no model configured for {self.identifier}: pass model=... ", provider=self.identifier
            )
        return self._model

    def url_schemes(self) -> frozenset[str]:
        """The URL schemes of image and document parts this provider takes (http, https, data;
        a provider whose service reads Cloud Storage adds ``gs``)."""
        return WEB_SCHEMES

    def native_decisions(self, model: str) -> bool:
        """Whether ``model`` serves the provider's native decision API (catalogue ``extra``)."""
        info = self._spec.model(model)
        if info is None:
            return bool(self.options.get("native_decisions", False))
        return bool(info.extra.get("native_decisions", False))

    def retry_image_request(self, request: Any, error: Any) -> Any:
        """A changed image request to try once after ``error`` rejected ``request`` (default: none)."""
        return None

    def is_available(self) -> bool:
        """Configured and usable (a key is present when one is needed). Sends nothing."""
        return self.api_key is not None or not self._spec.requires_credentials

    def __repr__(self) -> str:
        key = "set" if self.api_key is not None else "missing"
        return f"<{type(self).__name__} {self.identifier!r} model={self._model!r} api_key={key}>"

    # -- features ---------------------------------------------------------------------------

    @classmethod
    def implemented_features(cls) -> frozenset[Feature]:
        """Features this class implements: each operation whose route's plugin methods it has
        (see :mod:`llm_core.operations`), what a chat call carries (thinking, tools, documents)
        when it has the chat methods, batches when it has a batch API (``batch_api``), and the
        features the core has no implementation of."""
        found = _IMPLEMENTED.get(cls)
        if found is None:
            operations = {op.feature for op in OPERATIONS if op.implemented_by(cls)}
            aspects = CHAT_ASPECTS if Feature.CHAT in operations else frozenset()
            batch = {Feature.BATCH} if cls.batch_api is not None else set()
            found = frozenset(operations | aspects | batch) | DECLARED_ONLY
            _IMPLEMENTED[cls] = found
        return found

    def _check_declared_features(self) -> None:
        missing = self._spec.features - self.implemented_features()
        if missing:
            names = ", ".join(sorted(f.value for f in missing))
            raise PluginLoadError(
                f"provider {self.identifier!r} declares {names} but {type(self).__name__} does "
                "not implement the plugin methods of its operations (see llm_core.wire)",
                distribution=self._spec.distribution,
            )

    def supports_feature(self, feature: Feature | str, model: str | None = None) -> bool:
        """Whether ``feature`` is offered (for ``model`` when given). Unknown names raise."""
        wanted = Feature.parse(feature)
        return wanted in self.model_features(model) and wanted in self.implemented_features()

    def model_features(self, model: str | None = None) -> frozenset[Feature]:
        """Features of ``model``; unknown models get :meth:`unknown_model_features`."""
        if model is None:
            return self._spec.features
        info = self._spec.model(model)
        if info is None:
            return self.unknown_model_features(model)
        return info.features & self._spec.features

    def unknown_model_features(self, model: str) -> frozenset[Feature]:
        """Features assumed for a model missing from the catalogue (option
        ``unknown_model_features`` overrides; default: the provider-level features)."""
        configured = self.options.get("unknown_model_features")
        if configured is not None:
            return parse_features(configured) & self._spec.features
        return self._spec.features

    def _require(self, feature: Feature, model: str) -> None:
        """Raise :class:`UnsupportedFeatureError` unless ``model`` of this provider offers ``feature``."""
        if feature not in self.implemented_features() or feature not in self._spec.features:
            raise UnsupportedFeatureError(f"{self.name} does not support {feature.value}", provider=self.identifier)
        if feature not in self.model_features(model):
            raise UnsupportedFeatureError(
                f"model {model!r} of {self.name} does not support {feature.value}; "
                f"models that do: {', '.join(m.id for m in self._spec.models if feature in m.features) or 'none'}",
                provider=self.identifier,
            )


def table_keys(cls: type | None) -> frozenset[str] | None:
    """The keys a ``[providers.NAME]`` table of a provider of class ``cls`` may hold; ``None``
    when they are not checked (no class known, or one that declares no settings of its own)."""
    if cls is None or not _declares_own_settings(cls):
        return None
    return declared_settings(cls)


def _declares_own_settings(cls: type) -> bool:
    """Whether a plugin's provider class lists its settings: only then can an unknown keyword or
    config-table key be told from an option the plugin reads without declaring it."""
    return any("settings" in c.__dict__ for c in cls.__mro__ if not c.__module__.startswith("llm_core."))


def _rebuild_provider(
    cls: type[ProviderSettings], spec: ProviderSpec | None, config_file: Path | None, settings: dict[str, Any]
) -> ProviderSettings:
    """A provider unpickled: built anew from its settings (see ``ProviderSettings.__reduce__``).
    A key missing here is no error yet: unpickling happens where the object is delivered (a Dask
    worker deserialising a task), and the key is needed only by the first call, which raises the
    :class:`ConfigurationError` if it is still missing then."""
    token = _UNPICKLING.set(True)
    try:
        return cls(spec=spec, config_file=config_file, **settings)
    finally:
        _UNPICKLING.reset(token)


def without_secrets(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without their :class:`Secret` values (at any depth of mappings) and unset
    entries: what a pickle may carry."""
    kept: dict[str, Any] = {}
    for name, value in settings.items():
        if value is None or isinstance(value, Secret):
            continue
        kept[name] = without_secrets(value) if isinstance(value, Mapping) else value
    return kept
