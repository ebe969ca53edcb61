"""Finding plugins: the ``llm_core`` entry-point group, loaded through pluggy.

Failures are recorded, never fatal, unless ``LLM_CORE_STRICT_PLUGINS=1``: an ``Exception`` or a
``SystemExit`` raised by a plugin's import or hook becomes a :class:`PluginError` (only
``KeyboardInterrupt`` and the like still propagate). ``LLM_CORE_PLUGINS`` (a comma list of
distribution names, empty for none) limits which plugin distributions load. When two
distributions claim one provider identifier, ``LLM_CORE_PROVIDER_OWNERS``
(``identifier=distribution,...``) or the config file's ``[plugins.owners]`` table says which keeps
it; without a pin the first distribution alphabetically does, and the others are reported.
No provider SDK is imported here: plugins register specs whose factories are import paths.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from llm_core.errors import DuplicateProviderError, PluginLoadError
from llm_core.hooks import PROJECT, LLMCoreSpecs
from llm_core.registry.cache import PluginPoint, entry_point_plugins
from llm_core.specs import ProviderSpec, import_object

ENTRY_POINT_GROUP = "llm_core"
STRICT_ENV = "LLM_CORE_STRICT_PLUGINS"
ALLOW_ENV = "LLM_CORE_PLUGINS"
OWNERS_ENV = "LLM_CORE_PROVIDER_OWNERS"

logger = logging.getLogger("llm_core.registry.discovery")

#: What a plugin may raise that discovery records instead of letting it end the process.
PLUGIN_FAILURES = (Exception, SystemExit)


@dataclass(frozen=True)
class PluginError:
    """A plugin that failed: its distribution, what failed, and the exception."""

    distribution: str
    stage: str  # "import", "register", "duplicate"
    error: BaseException

    def __str__(self) -> str:
        return f"{self.distribution} ({self.stage}): {self.error}"


@dataclass(frozen=True)
class LoadedPlugin:
    """A plugin distribution that loaded, and how long importing it and running its
    registration hook took (``load_ms``)."""

    distribution: str
    version: str | None
    entry_point: str
    load_ms: float = 0.0


def strict_mode() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def allowed_distributions() -> frozenset[str] | None:
    """The distributions allowed by ``LLM_CORE_PLUGINS`` (None: all)."""
    value = os.environ.get(ALLOW_ENV)
    if value is None:
        return None
    return frozenset(_norm(v) for v in value.split(",") if v.strip())


def provider_owners() -> dict[str, str]:
    """Pinned owners of provider identifiers: ``LLM_CORE_PROVIDER_OWNERS`` (``id=distribution``
    pairs, comma separated), else the config file's ``[plugins.owners]`` table."""
    value = os.environ.get(OWNERS_ENV)
    if value is not None:
        pairs = (item.partition("=") for item in value.split(",") if item.strip())
        return {ident.strip(): _norm(dist) for ident, _, dist in pairs if dist.strip()}
    from llm_core.config import load_config_file

    plugins = load_config_file().get("plugins", {})
    owners = plugins.get("owners", {}) if isinstance(plugins, Mapping) else {}
    return {str(k): _norm(str(v)) for k, v in owners.items()} if isinstance(owners, Mapping) else {}


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def new_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(LLMCoreSpecs)
    return manager


def discover_plugins(
    manager: pluggy.PluginManager,
    on_spec: Callable[[ProviderSpec, str], None],
    on_error: Callable[[PluginError], None],
    points: Iterable[Any] | None = None,
) -> list[LoadedPlugin]:
    """Load every allowed plugin (``points``: ``importlib.metadata`` entry points, default the
    installed ones), run its registration hook, and hand each provider spec that keeps its
    identifier to ``on_spec`` with its distribution. Returns the plugins that loaded, with their load times."""
    found = entry_point_plugins(ENTRY_POINT_GROUP) if points is None else [PluginPoint.of(p) for p in points]
    allowed = allowed_distributions()
    # Alphabetical by normalised distribution name: on an unpinned duplicate the first one wins.
    chosen = sorted((p for p in found if allowed is None or _norm(p.distribution) in allowed), key=_order)
    loaded: list[LoadedPlugin] = []
    claims: list[tuple[ProviderSpec, str]] = []
    for point in chosen:
        started = time.perf_counter()
        if _load(manager, point, on_error):
            _register(manager, point, claims, on_error)
            elapsed = (time.perf_counter() - started) * 1000
            loaded.append(LoadedPlugin(point.distribution, point.version, point.value, elapsed))
    for spec, dist in _owners_of(claims, on_error):
        on_spec(spec, dist)
    return loaded


def _order(point: PluginPoint) -> tuple[str, str]:
    return _norm(point.distribution), point.name


def _load(manager: pluggy.PluginManager, point: PluginPoint, on_error: Callable[[PluginError], None]) -> bool:
    try:
        manager.register(import_object(point.value), name=point.plugin_name)
    except PLUGIN_FAILURES as exc:  # a broken plugin must not break discovery, nor end the process
        on_error(PluginError(point.distribution, "import", exc))
        return False
    return True


def _register(
    manager: pluggy.PluginManager,
    point: PluginPoint,
    claims: list[tuple[ProviderSpec, str]],
    on_error: Callable[[PluginError], None],
) -> None:
    """Call this plugin's ``llm_core_register_providers`` hook on its own, so that an error is
    attributed to its distribution and the other plugins still register."""
    dist = point.distribution
    plugin = manager.get_plugin(point.plugin_name)

    def register(spec: ProviderSpec) -> None:
        if not isinstance(spec, ProviderSpec):
            raise PluginLoadError(f"register() takes a ProviderSpec, got {type(spec).__name__}", distribution=dist)
        claims.append((spec.with_distribution(spec.distribution or dist), dist))

    for impl in manager.hook.llm_core_register_providers.get_hookimpls():
        if impl.plugin is not plugin:
            continue
        try:
            impl.function(register=register)
        except PLUGIN_FAILURES as exc:  # one plugin's failure must not stop the others
            on_error(PluginError(dist, "register", exc))


def _owners_of(
    claims: list[tuple[ProviderSpec, str]], on_error: Callable[[PluginError], None]
) -> list[tuple[ProviderSpec, str]]:
    """One spec per identifier: the pinned distribution's, else the first claim's. Every other
    claim is logged as a warning and recorded as a ``duplicate`` plugin error, and so is a
    distribution that claims one identifier more than once (its first claim is the one kept)."""
    by_identifier: dict[str, list[tuple[ProviderSpec, str]]] = {}
    for spec, dist in claims:
        by_identifier.setdefault(spec.identifier, []).append((spec, dist))
    owners = provider_owners() if any(len(c) > 1 for c in by_identifier.values()) else {}
    kept: list[tuple[ProviderSpec, str]] = []
    for identifier, contenders in by_identifier.items():
        pinned = owners.get(identifier)
        winner = next((c for c in contenders if _norm(c[1]) == pinned), None)
        if pinned is not None and winner is None:
            logger.warning("%s pins provider %r to %r, which does not register it", OWNERS_ENV, identifier, pinned)
        spec, owner = winner or contenders[0]
        kept.append((spec, owner))
        _report_repeats(identifier, contenders, on_error)
        for _, dist in contenders:
            if dist == owner:
                continue
            if winner is not None:
                logger.info("provider %r: %s's claim ignored, pinned to %s", identifier, dist, owner)
                continue
            message = (
                f"provider identifier {identifier!r} is already registered by {owner!r}; this registration "
                f"was ignored (pin the owner with {OWNERS_ENV}={identifier}=<distribution>)"
            )
            logger.warning("%s: %s", dist, message)
            on_error(PluginError(dist, "duplicate", DuplicateProviderError(message, distribution=dist)))
    return kept


def _report_repeats(
    identifier: str, contenders: list[tuple[ProviderSpec, str]], on_error: Callable[[PluginError], None]
) -> None:
    """A plugin that registers one identifier twice is a bug in that plugin (two specs, only one
    of which can be used): reported once per distribution, like any other broken plugin."""
    counts: dict[str, int] = {}
    for _, dist in contenders:
        counts[dist] = counts.get(dist, 0) + 1
    for dist, count in counts.items():
        if count < 2:
            continue
        message = (
            f"provider identifier {identifier!r} was registered {count} times by this plugin; "
            "the first registration is kept and the others were ignored"
        )
        logger.warning("%s: %s", dist, message)
        on_error(PluginError(dist, "duplicate", DuplicateProviderError(message, distribution=dist)))
