"""Finding plugins: the ``llm_core`` entry-point group, loaded through pluggy.

Failures are recorded, never fatal, unless ``LLM_CORE_STRICT_PLUGINS=1``. ``LLM_CORE_PLUGINS``
(a comma list of distribution names, empty for none) limits which plugin distributions load.
No provider SDK is imported here: plugins register specs whose factories are import paths.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from llm_core.errors import PluginLoadError
from llm_core.hooks import PROJECT, LLMCoreSpecs
from llm_core.specs import ProviderSpec

ENTRY_POINT_GROUP = "llm_core"
STRICT_ENV = "LLM_CORE_STRICT_PLUGINS"
ALLOW_ENV = "LLM_CORE_PLUGINS"


@dataclass(frozen=True)
class PluginError:
    """A plugin that failed: its distribution, what failed, and the exception."""

    distribution: str
    stage: str  # "import", "register", "spec", "duplicate"
    error: BaseException

    def __str__(self) -> str:
        return f"{self.distribution} ({self.stage}): {self.error}"


@dataclass(frozen=True)
class LoadedPlugin:
    distribution: str
    version: str | None
    entry_point: str


def strict_mode() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def allowed_distributions() -> frozenset[str] | None:
    """The distributions allowed by ``LLM_CORE_PLUGINS`` (None: all)."""
    value = os.environ.get(ALLOW_ENV)
    if value is None:
        return None
    return frozenset(_norm(v) for v in value.split(",") if v.strip())


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def new_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(LLMCoreSpecs)
    return manager


def iter_entry_points() -> Iterable[EntryPoint]:
    return entry_points(group=ENTRY_POINT_GROUP)


def load_entry_point_plugins(
    manager: pluggy.PluginManager,
    on_error: Callable[[PluginError], None],
    points: Iterable[EntryPoint] | None = None,
) -> list[LoadedPlugin]:
    """Import each allowed entry point's module and register it with ``manager``."""
    allowed = allowed_distributions()
    loaded: list[LoadedPlugin] = []
    # Alphabetical by normalised distribution name: on a duplicate identifier the first one wins.
    chosen = sorted(
        points if points is not None else iter_entry_points(), key=lambda ep: (_norm(_dist_name(ep)), ep.name)
    )
    for point in chosen:
        dist = _dist_name(point)
        if allowed is not None and _norm(dist) not in allowed:
            continue
        try:
            module: Any = point.load()
            manager.register(module, name=f"{dist}:{point.name}")
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break discovery
            on_error(PluginError(dist, "import", exc))
            continue
        version = point.dist.version if point.dist is not None else None
        loaded.append(LoadedPlugin(dist, version, point.value))
    return loaded


def _dist_name(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else point.value.split(":")[0]


def collect_specs(
    manager: pluggy.PluginManager,
    on_spec: Callable[[ProviderSpec, str], None],
    on_error: Callable[[PluginError], None],
) -> None:
    """Call each plugin's ``llm_core_register_providers`` hook separately, so that an error is
    attributed to its own distribution and the others still register."""
    for impl in manager.hook.llm_core_register_providers.get_hookimpls():
        dist = impl.plugin_name.split(":", 1)[0]

        def register(spec: ProviderSpec, _dist: str = dist) -> None:
            if not isinstance(spec, ProviderSpec):
                raise PluginLoadError(f"register() takes a ProviderSpec, got {type(spec).__name__}", distribution=_dist)
            on_spec(spec.with_distribution(spec.distribution or _dist), _dist)

        try:
            impl.function(register=register)
        except Exception as exc:  # noqa: BLE001 - one plugin's failure must not stop the others
            on_error(PluginError(dist, "register", exc))
