"""The registry: which providers exist, what they support, and which one to use."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llm_core.errors import (
    DuplicateProviderError,
    LLMError,
    PluginLoadError,
    UnknownProviderError,
)
from llm_core.features import Feature, parse_features
from llm_core.pricing import CHEAPEST, nominal_usage
from llm_core.registry.candidates import Candidate, fits, no_match, rank, unknown_model_features
from llm_core.registry.discovery import LoadedPlugin, PluginError, discover_plugins, new_plugin_manager, strict_mode
from llm_core.specs import ProviderSpec

__all__ = ["Candidate", "Registry", "Selection", "get_registry", "reset_registry"]

if TYPE_CHECKING:
    import pluggy

    from llm_core.provider.base import BaseProvider
    from llm_core.responses import Usage
    from llm_core.routing.router import Router


@dataclass
class Selection:
    """The result of :meth:`Registry.select`: the chosen provider, model and why.

    ``provider()`` builds the provider (importing the plugin, not yet its SDK).
    """

    registry: Registry
    candidate: Candidate
    features: frozenset[Feature]
    alternatives: tuple[Candidate, ...] = field(default=())

    @property
    def identifier(self) -> str:
        return self.candidate.spec.identifier

    @property
    def spec(self) -> ProviderSpec:
        return self.candidate.spec

    @property
    def model(self) -> str | None:
        return self.candidate.model

    @property
    def reasons(self) -> tuple[str, ...]:
        return self.candidate.reasons

    def provider(self, **config: Any) -> BaseProvider:
        """The chosen provider with the chosen model (the shared instance when both are defaults)."""
        if self.model is not None and self.model != self.spec.default_model:
            config.setdefault("model", self.model)
        return self.registry.get(self.identifier, **config)

    def __repr__(self) -> str:
        return f"Selection({self.identifier!r}, model={self.model!r})"


class Registry:
    """Providers registered by plugins (or by hand), with capability-based selection."""

    def __init__(self, *, strict: bool | None = None) -> None:
        self._lock = threading.RLock()
        self._specs: dict[str, ProviderSpec] = {}
        self._instances: dict[str, BaseProvider] = {}
        self._endpoints: set[str] = set()  # identifiers of named endpoints (never a plugin's own)
        self.plugin_errors: list[PluginError] = []
        self.plugins: list[LoadedPlugin] = []
        self.strict = strict_mode() if strict is None else strict
        self.preference: tuple[str, ...] | None = None
        self._manager: pluggy.PluginManager | None = None
        # One per registry; a context variable, so an override holds for the thread or asyncio
        # task that set it (and tasks it starts), never for others running at the same time.
        self._override: ContextVar[BaseProvider | None] = ContextVar(f"llm_core_override_{id(self)}", default=None)

    # -- building -------------------------------------------------------------------------

    @classmethod
    def discover(cls, *, strict: bool | None = None, entry_points: Iterable[Any] | None = None) -> Registry:
        """A fresh registry filled from the installed plugins (``llm_core`` entry points)."""
        registry = cls(strict=strict)
        manager = new_plugin_manager()
        from llm_core.observe.observers import LoggingObserver

        manager.register(LoggingObserver(), name="llm-core:logging")
        registry._manager = manager
        registry.plugins = discover_plugins(
            manager, registry._register_from_plugin, registry._record_error, entry_points
        )
        registry._add_configured_endpoints()
        return registry

    def _add_configured_endpoints(self) -> None:
        """Register the endpoints of the config file (``[providers.NAME]`` tables with a
        ``plugin`` key); one that cannot be made is reported in ``plugin_errors`` (stage
        ``endpoint``, fatal in strict mode) and every other provider stays."""
        from llm_core.config import config_path, endpoint_tables, load_config_file

        try:
            config = load_config_file()
        except LLMError as exc:
            self._record_error(PluginError(str(config_path()), "config", exc))
            return
        # without an endpoint table nothing more is imported (the endpoint settings need Pydantic)
        for name, table in endpoint_tables(config).items():
            try:
                self._register_endpoint(self._endpoint_spec(name, table))
            except LLMError as exc:
                self._record_error(PluginError(f"[providers.{name}]", "endpoint", exc))

    def add_endpoint(self, name: str, *, plugin: str, **settings: Any) -> ProviderSpec:
        """Add a named endpoint of ``plugin`` as provider ``name`` and return its spec: the
        Python form of a ``[providers.NAME]`` table with ``plugin = "..."`` (same keys: ``api``,
        ``preset``, ``base_url``, ``api_key``, ``api_key_env``, ``models``, ``features``, and the
        plugin's provider settings). Its providers are built with these settings; an ``api_key``
        is kept as a :class:`~llm_core.config.Secret` and never pickled. See docs/openai.md."""
        from llm_core.config import hide_secrets

        given = {"plugin": plugin, **settings}
        spec = self._endpoint_spec(name, given)
        self._register_endpoint(spec.with_settings(hide_secrets(given)))
        return spec

    def _endpoint_spec(self, name: str, settings: Mapping[str, Any]) -> ProviderSpec:
        from llm_core.endpoints import EndpointSettings

        endpoint = EndpointSettings.read(name, settings)
        with self._lock:
            owner = self._specs.get(endpoint.plugin)
            known = [spec.identifier for spec in self._specs.values() if spec.endpoint_factory is not None]
        if owner is None or owner.endpoint_factory is None:
            from llm_core.config import check_names

            check_names([endpoint.plugin], known, what="plugin", where=f" for endpoint {name!r}", provider=name)
        assert owner is not None  # check_names raised otherwise
        spec = owner.resolve_endpoint_factory()(name, endpoint)
        if not isinstance(spec, ProviderSpec) or spec.identifier != name:
            raise PluginLoadError(
                f"the endpoint factory of {owner.identifier!r} made no spec named {name!r}",
                distribution=owner.distribution,
            )
        return spec.with_distribution(owner.distribution)

    def _register_endpoint(self, spec: ProviderSpec) -> None:
        with self._lock:
            if spec.identifier in self._specs and spec.identifier not in self._endpoints:
                raise DuplicateProviderError(
                    f"endpoint name {spec.identifier!r} is the identifier of a plugin's provider: choose another"
                )
            self._endpoints.add(spec.identifier)
            self.register(spec)

    def install_observers(self) -> None:
        """Make this registry's observer hooks (plugins' and added ones) see every provider call
        in the process. ``get_registry()`` does this for the process-wide registry."""
        from llm_core.observe.observers import install

        if self._manager is not None:
            install(self._manager.hook)

    @property
    def plugin_manager(self) -> pluggy.PluginManager | None:
        """The pluggy manager (register observer plugins on it, then call ``install_observers``)."""
        return self._manager

    def add_observer(self, plugin: object) -> None:
        """Register an object with observer hook implementations and install this registry's
        observers process-wide (see :meth:`install_observers`)."""
        if self._manager is None:
            self._manager = new_plugin_manager()
        self._manager.register(plugin)
        self.install_observers()

    def _record_error(self, error: PluginError) -> None:
        if self.strict:
            if isinstance(error.error, PluginLoadError) and error.error.distribution:
                raise error.error
            raise PluginLoadError(
                f"{error.stage} failed: {error.error}", distribution=error.distribution
            ) from error.error
        with self._lock:
            self.plugin_errors.append(error)

    def _register_from_plugin(self, spec: ProviderSpec, distribution: str) -> None:
        # discover_plugins has already kept one claim per identifier (pins, then alphabetical
        # order) and reported the others, so a plugin's spec never meets an earlier one here.
        with self._lock:
            self._specs[spec.identifier] = spec

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its specs and settings; no provider instance, plugin manager or error goes
        along (the copy builds providers from the specs, which import their plugin lazily)."""
        return (_rebuild_registry, (list(self.providers()), self.strict, self.preference))

    def register(self, spec: ProviderSpec, *, replace: bool = True) -> None:
        """Add a provider by hand. It replaces one with the same identifier unless
        ``replace=False``, which raises :class:`DuplicateProviderError` instead."""
        if not isinstance(spec, ProviderSpec):
            raise PluginLoadError(f"register() takes a ProviderSpec, got {type(spec).__name__}")
        with self._lock:
            if not replace and spec.identifier in self._specs:
                raise DuplicateProviderError(f"provider {spec.identifier!r} is already registered")
            self._specs[spec.identifier] = spec
            self._instances.pop(spec.identifier, None)

    # -- querying -------------------------------------------------------------------------

    def providers(self) -> list[ProviderSpec]:
        """Registered provider specs, in registration order."""
        with self._lock:
            return list(self._specs.values())

    def spec(self, identifier: str) -> ProviderSpec:
        with self._lock:
            found = self._specs.get(identifier)
            if found is None:
                raise UnknownProviderError(identifier, list(self._specs))
            return found

    def __contains__(self, identifier: object) -> bool:
        return identifier in self._specs

    @contextmanager
    def override(self, provider: BaseProvider) -> Iterator[BaseProvider]:
        """Within the block, every ``get()``, ``select()`` and router of this registry uses
        ``provider`` (for tests: a :class:`~llm_core.testing.TestProvider`). Thread- and
        task-safe: other threads and tasks keep the registry's own providers."""
        token = self._override.set(provider)
        try:
            yield provider
        finally:
            self._override.reset(token)

    def get(self, identifier: str, **config: Any) -> BaseProvider:
        """The provider ``identifier``, built on first use. Without ``config`` one instance is
        shared; with ``config`` a new one is built each time."""
        overridden = self._override.get()
        if overridden is not None:
            return overridden
        spec = self.spec(identifier)
        if config:
            return self._build(spec, config)
        with self._lock:
            instance = self._instances.get(identifier)
            if instance is None:
                instance = self._build(spec, {})
                self._instances[identifier] = instance
            return instance

    def _build(self, spec: ProviderSpec, config: dict[str, Any]) -> BaseProvider:
        """The provider built by ``spec``'s factory. A plugin whose module fails to import or
        whose constructor fails with anything but an llm-core error (a missing key is a
        ``ConfigurationError``) is a :class:`PluginLoadError`, so a router skips to the next
        provider; ``SystemExit`` from plugin code is one too (``KeyboardInterrupt`` is not)."""
        try:
            factory = spec.resolve_factory()
            provider = factory(spec=spec, **config)
        except LLMError:
            raise
        except (Exception, SystemExit) as exc:
            raise PluginLoadError(
                f"cannot build provider {spec.identifier!r}: {type(exc).__name__}: {exc}",
                distribution=spec.distribution,
            ) from exc
        return provider  # type: ignore[no-any-return]

    def supporting(self, *features: Feature | str, model: str | None = None) -> list[ProviderSpec]:
        """Specs offering every feature (for ``model`` when given), in registration order."""
        wanted = parse_features(features)
        unknown = self._unknown_models(model)
        return [s for s in self.providers() if fits(s, wanted, model, unknown.get(s.identifier)) is not False]

    def _unknown_models(
        self, model: str | None, settings: Mapping[str, Mapping[str, Any]] | None = None
    ) -> dict[str, frozenset[Feature] | None]:
        """For each provider that has a catalogue without ``model``: what its settings (``settings``
        by identifier, else the config file) give a model missing from it (see
        :func:`~llm_core.registry.candidates.fits`). Empty without a model."""
        if model is None:
            return {}
        given = settings or {}
        return {
            spec.identifier: unknown_model_features(spec, given.get(spec.identifier))
            for spec in self.providers()
            if spec.models and spec.model(model) is None
        }

    def candidates(
        self,
        *features: Feature | str,
        prefer: Sequence[str] | str | None = None,
        model: str | None = None,
        estimate: Usage | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[Candidate]:
        """Every fitting provider, best first: credentials present, then the preferred order, then
        registration order. ``prefer="cheapest"`` orders usable candidates by the expected cost of
        ``estimate`` (a nominal 1,000 prompt and 500 answer tokens by default) at their model's
        prices, unknown prices last, ties (and the unknown) in the configured preference order.
        With ``model`` only providers offering it fit: listed in their catalogue, without a
        catalogue, or declaring ``unknown_model_features`` in ``settings`` (the settings each
        provider will be built with, by identifier) or in the config file."""
        from llm_core.config import routing_preference

        wanted = parse_features(features)
        overridden = self._override.get()
        if overridden is not None:
            spec = overridden.provider_spec
            return [Candidate(spec, None, True, 0, ("registry.override() is active",))]
        cheapest = prefer == CHEAPEST
        if cheapest:
            prefer = None
        order = (
            ([prefer] if isinstance(prefer, str) else list(prefer))
            if prefer is not None
            else list(self.preference if self.preference is not None else routing_preference())
        )
        usage = (estimate or nominal_usage()) if cheapest else None
        return rank(self.providers(), wanted, order, model, usage, self._unknown_models(model, settings))

    def select(
        self,
        *features: Feature | str,
        prefer: Sequence[str] | str | None = None,
        model: str | None = None,
        estimate: Usage | None = None,
    ) -> Selection:
        """The best provider offering every feature (``prefer="cheapest"``: the cheapest for
        ``estimate``, see :meth:`candidates`). Raises :class:`NoMatchingProviderError` naming the
        features that no provider (or model) offers."""
        wanted = parse_features(features)
        ranked = self.candidates(*wanted, prefer=prefer, model=model, estimate=estimate)
        if not ranked:
            raise no_match(self.providers(), wanted, model)
        return Selection(self, ranked[0], wanted, tuple(ranked[1:]))

    def router(self, *features: Feature | str, prefer: Sequence[str] | str | None = None, **config: Any) -> Router:
        """A provider-shaped object that falls back across every capable provider."""
        from llm_core.routing.router import Router

        return Router(self, features, prefer=prefer, config=config)


_registry: Registry | None = None
_registry_lock = threading.Lock()


def get_registry() -> Registry:
    """The process-wide registry, discovered once (thread-safe)."""
    global _registry
    if _registry is None:
        with _registry_lock:
            if _registry is None:
                registry = Registry.discover()
                registry.install_observers()
                _registry = registry
    return _registry


def reset_registry() -> None:
    """Forget the process-wide registry (tests, or after installing a plugin)."""
    global _registry
    from llm_core.observe.observers import install

    with _registry_lock:
        _registry = None
        install(None)


def _rebuild_registry(specs: list[ProviderSpec], strict: bool, preference: tuple[str, ...] | None) -> Registry:
    registry = Registry(strict=strict)
    for spec in specs:
        registry.register(spec)
    registry.preference = preference
    return registry
