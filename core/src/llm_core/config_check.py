"""The config file checked as a whole, before anything reads a part of it.

A provider checks its own ``[providers.NAME]`` table when it is built; until then a typo (a
misspelt key, table or provider name, a TOML syntax error) would be silent. :func:`check_config`
reports every such problem at once, each tagged with the part of the file it breaks, so that the
CLI can stop a command that needs that part and only warn the others.

The valid names come from the declarations: a provider's keys are what its class declares
(:func:`llm_core.provider.settings.table_keys`), a ``[prices."MODEL"]`` table's are the fields
of :class:`~llm_core.pricing.Prices`, and a provider name is any registered identifier. A table
holding only the core's settings (:data:`~llm_core.config.CORE_SETTINGS`) is valid for every
provider; only another key makes the check import the provider's class (never its SDK).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_core.config import CONFIG_ENV, CORE_SETTINGS, config_path, load_config_file
from llm_core.errors import ConfigurationError
from llm_core.pricing import Prices

#: The file's tables → the keys of each (``providers``: checked per provider class, see above).
FILE_TABLES: dict[str, frozenset[str]] = {
    "providers": frozenset(),
    "routing": frozenset({"prefer"}),  # llm_core.config.routing_preference
    "prices": frozenset(f.name for f in dataclasses.fields(Prices) if f.name != "source"),
    "plugins": frozenset({"owners"}),  # llm_core.registry.discovery.provider_owners
}


@dataclass(frozen=True)
class ConfigProblem:
    """One mistake in the config file: ``part`` is what it breaks (``file``: all of it,
    ``providers.NAME``, ``routing``, ``prices``, ``plugins``)."""

    part: str
    message: str

    def __str__(self) -> str:
        return self.message


def _hint(name: str, valid: Iterable[str], listed: str = "valid") -> str:
    """``; did you mean 'x'?`` for the closest valid name, else the list of valid names."""
    names = sorted(valid)
    close = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else f" ({listed}: {', '.join(names) or 'none'})"


def check_config(path: Path | None = None, registry: Any = None) -> list[ConfigProblem]:
    """Every problem of the config file in force (none when there is no file)."""
    target = path or config_path()
    if target is None:
        return []
    where = str(target)
    try:
        data = load_config_file(target)
    except ConfigurationError as exc:
        return [ConfigProblem("file", str(exc))]
    if registry is None:
        from llm_core.registry import get_registry

        registry = get_registry()
    problems: list[ConfigProblem] = []
    for table, value in data.items():
        if table not in FILE_TABLES:
            close = difflib.get_close_matches(table, sorted(FILE_TABLES), n=1)
            part = close[0] if close else "file"
            problems.append(
                ConfigProblem(
                    part,
                    f"{where}: unknown table [{table}]{_hint(table, FILE_TABLES)}",
                )
            )
        elif not isinstance(value, Mapping):
            problems.append(ConfigProblem(table, f"{where}: {table} must be a table ([{table}])"))
        elif table == "providers":
            problems += _providers(value, registry, where)
        else:
            problems += _table(table, value, where, registry)
    return problems


def _providers(tables: Mapping[str, Any], registry: Any, where: str) -> list[ConfigProblem]:
    known = {spec.identifier: spec for spec in registry.providers()}
    problems = []
    for name, section in tables.items():
        part = f"providers.{name}"
        failed = _endpoint_error(registry, name, section)
        if failed is not None:  # a table with a plugin key the registry could not make a provider of
            problems.append(ConfigProblem(part, f"{where}: [providers.{name}]: {failed}"))
            continue
        if name not in known:
            problems.append(
                ConfigProblem(
                    part,
                    f"{where}: [providers.{name}]: unknown provider {name!r}{_hint(name, known, 'installed')}",
                )
            )
            continue
        if not isinstance(section, Mapping):
            problems.append(ConfigProblem(part, f"{where}: providers.{name} must be a table ([providers.{name}])"))
            continue
        if set(section) <= _every_provider_reads(section):
            continue  # valid whatever the class: no need to import it
        from llm_core.provider.settings import table_keys  # imports the provider machinery: only when needed

        keys = table_keys(provider_class(known[name]))
        if keys is None:
            continue
        for key in sorted(set(section) - keys):
            problems.append(
                ConfigProblem(
                    part,
                    f"{where}: unknown setting {key!r} in [providers.{name}]{_hint(key, keys)}",
                )
            )
    return problems


def _every_provider_reads(section: Mapping[str, Any]) -> frozenset[str]:
    """Keys valid in any provider's table (the core's settings; an endpoint's keys too, in a
    table with a ``plugin`` key: only a class serving endpoints gets one registered)."""
    from llm_core.endpoints import PLUGIN_KEY, EndpointSettings

    keys = set(CORE_SETTINGS)
    if PLUGIN_KEY in section:
        keys |= set(EndpointSettings.model_fields)
    return frozenset(keys)


def _endpoint_error(registry: Any, name: str, section: Any) -> BaseException | None:
    """Why the named endpoint ``[providers.NAME]`` (a table with a ``plugin`` key) was not
    registered, as the registry recorded it; ``None`` for any other table."""
    from llm_core.endpoints import PLUGIN_KEY

    if not isinstance(section, Mapping) or PLUGIN_KEY not in section:
        return None
    where = f"[providers.{name}]"
    return next((e.error for e in registry.plugin_errors if e.distribution == where), None)


def provider_class(spec: Any) -> type | None:
    """The class a spec builds, when its factory names one (a factory function tells nothing)."""
    if isinstance(spec.factory, type):
        return spec.factory
    if not isinstance(spec.factory, str):
        return None
    try:
        found = spec.resolve_factory()
    except Exception:  # noqa: BLE001 - a broken plugin is reported by the registry, not here
        return None
    return found if isinstance(found, type) else None


def _table(table: str, value: Mapping[str, Any], where: str, registry: Any) -> list[ConfigProblem]:
    """``[routing]``, ``[plugins]`` (their keys) and ``[prices."MODEL"]`` (each model's keys)."""
    keys = FILE_TABLES[table]
    problems = []
    if table == "prices":
        for model, fields in value.items():
            unknown = sorted(set(fields) - keys) if isinstance(fields, Mapping) else []
            problems += [
                ConfigProblem(
                    table,
                    f"{where}: unknown price {key!r} in [prices.{model!r}]{_hint(key, keys)}",
                )
                for key in unknown
            ]
        return problems
    for key in sorted(set(value) - keys):
        problems.append(
            ConfigProblem(
                table,
                f"{where}: unknown key {key!r} in [{table}]{_hint(key, keys)}",
            )
        )
    if table == "routing" and not os.environ.get("LLM_CORE_PREFER"):
        problems += _preferred(value.get("prefer", ()), registry, where)
    return problems


def _preferred(prefer: Any, registry: Any, where: str) -> list[ConfigProblem]:
    names = [prefer] if isinstance(prefer, str) else list(prefer) if isinstance(prefer, list) else []
    known = {spec.identifier for spec in registry.providers()}
    return [
        ConfigProblem(
            "routing",
            f"{where}: [routing] prefer: unknown provider {name!r}{_hint(str(name), known, 'installed')}",
        )
        for name in names
        if name not in known and name != "cheapest"
    ]


def config_source() -> str:
    """Where the config file in force comes from, for ``llm-core config check``."""
    if os.environ.get(CONFIG_ENV):
        return f"${CONFIG_ENV}"
    return "default location" if config_path() else "none"
