"""A plugin cannot end discovery: ``SystemExit`` from its import or hook is a plugin error,
``KeyboardInterrupt`` still stops the program; a duplicate identifier is reported loudly and can
be pinned to a distribution; each loaded plugin's load time is recorded and shown.

The plugins are real distributions (``*.dist-info`` with an ``llm_core`` entry point) in a
temporary folder; in-process tests hand their entry points to ``Registry.discover`` (so that the
installed plugins do not take part), the CLI tests put the folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_core.errors import DuplicateProviderError, PluginLoadError
from llm_core.registry import Registry

SPEC = """
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier={identifier!r}, name={name!r}, features=["chat"],
                          factory="llm_core.testing.fake:FakeProvider", requires_credentials=False))
"""

EXIT_AT_IMPORT = "import sys\nsys.exit('the plugin gave up')\n"
EXIT_IN_HOOK = """
import sys
from llm_core import hookimpl

@hookimpl
def llm_core_register_providers(register):
    raise SystemExit(3)
"""
INTERRUPT_AT_IMPORT = "raise KeyboardInterrupt\n"
SLOW_IMPORT = "import time\ntime.sleep(0.05)\n" + SPEC.format(identifier="slow", name="Slow")


class Site:
    """A folder of plugin distributions, each with one ``llm_core`` entry point."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, distribution: str, source: str) -> None:
        module = "isoplugin_" + distribution.replace("-", "_")
        (self.root / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.root / f"{distribution.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[llm_core]\nmain = {module}\n")
        importlib.invalidate_caches()

    def discover(self, **kwargs: bool) -> Registry:
        points = [
            point
            for dist in importlib.metadata.distributions(path=[str(self.root)])
            for point in dist.entry_points
            if point.group == "llm_core"
        ]
        return Registry.discover(entry_points=points, **kwargs)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    for name in ("LLM_CORE_PLUGINS", "LLM_CORE_STRICT_PLUGINS", "LLM_CORE_PROVIDER_OWNERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_CORE_CONFIG", str(tmp_path / "no-config.toml"))
    (tmp_path / "no-config.toml").write_text("")
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield Site(root)
    for name in list(sys.modules):
        if name.startswith("isoplugin_"):
            del sys.modules[name]


@pytest.mark.parametrize(("source", "stage"), [(EXIT_AT_IMPORT, "import"), (EXIT_IN_HOOK, "register")])
def test_system_exit_from_a_plugin_is_a_plugin_error_and_discovery_goes_on(site: Site, source: str, stage: str) -> None:
    site.add("aaa-good", SPEC.format(identifier="before", name="Before"))
    site.add("bbb-exits", source)
    site.add("ccc-good", SPEC.format(identifier="after", name="After"))
    registry = site.discover(strict=False)
    assert [s.identifier for s in registry.providers()] == ["before", "after"]
    [error] = registry.plugin_errors
    assert (error.distribution, error.stage) == ("bbb-exits", stage)
    assert isinstance(error.error, SystemExit)


def test_system_exit_in_strict_mode_is_a_plugin_load_error_naming_the_distribution(site: Site) -> None:
    site.add("bbb-exits", EXIT_AT_IMPORT)
    with pytest.raises(PluginLoadError, match="bbb-exits") as caught:
        site.discover(strict=True)
    assert isinstance(caught.value.__cause__, SystemExit)


def test_keyboard_interrupt_during_discovery_still_stops_the_program(site: Site) -> None:
    site.add("bbb-interrupted", INTERRUPT_AT_IMPORT)
    with pytest.raises(KeyboardInterrupt):
        site.discover(strict=False)


def test_a_duplicate_identifier_is_logged_as_a_warning_and_recorded(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    site.add("alpha-plugin", SPEC.format(identifier="shared", name="From Alpha"))
    site.add("beta-plugin", SPEC.format(identifier="shared", name="From Beta"))
    with caplog.at_level(logging.WARNING, logger="llm_core.registry.discovery"):
        registry = site.discover(strict=False)
    assert registry.spec("shared").name == "From Alpha"
    [error] = registry.plugin_errors
    assert (error.distribution, error.stage) == ("beta-plugin", "duplicate")
    assert isinstance(error.error, DuplicateProviderError)
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = record.getMessage()
    assert "beta-plugin" in message and "'shared'" in message and "alpha-plugin" in message
    assert "LLM_CORE_PROVIDER_OWNERS=shared=" in message, "the warning says how to pin the owner"


@pytest.mark.parametrize("how", ["env", "config"])
def test_a_pinned_owner_keeps_the_identifier_quietly(
    site: Site, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site.add("alpha-plugin", SPEC.format(identifier="shared", name="From Alpha"))
    site.add("beta-plugin", SPEC.format(identifier="shared", name="From Beta"))
    if how == "env":
        monkeypatch.setenv("LLM_CORE_PROVIDER_OWNERS", "other=x, shared = Beta_Plugin")
    else:
        config = tmp_path / "config.toml"
        config.write_text('[plugins.owners]\nshared = "beta-plugin"\n')
        monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    with caplog.at_level(logging.INFO, logger="llm_core.registry.discovery"):
        registry = site.discover(strict=True)  # a pinned duplicate is not an error, even when strict
    assert (registry.spec("shared").name, registry.spec("shared").distribution) == ("From Beta", "beta-plugin")
    assert registry.plugin_errors == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("alpha-plugin" in r.getMessage() and "pinned" in r.getMessage() for r in caplog.records)


def test_a_pin_to_a_distribution_that_does_not_register_the_identifier_is_a_warning(
    site: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site.add("alpha-plugin", SPEC.format(identifier="shared", name="From Alpha"))
    site.add("beta-plugin", SPEC.format(identifier="shared", name="From Beta"))
    monkeypatch.setenv("LLM_CORE_PROVIDER_OWNERS", "shared=gamma-plugin")
    with caplog.at_level(logging.WARNING, logger="llm_core.registry.discovery"):
        registry = site.discover(strict=False)
    assert registry.spec("shared").distribution == "alpha-plugin"
    assert [e.distribution for e in registry.plugin_errors] == ["beta-plugin"]
    assert any("gamma-plugin" in r.getMessage() for r in caplog.records)


def test_each_loaded_plugin_records_how_long_it_took_to_load(site: Site) -> None:
    site.add("fast-plugin", SPEC.format(identifier="fast", name="Fast"))
    site.add("slow-plugin", SLOW_IMPORT)
    loaded = {p.distribution: p for p in site.discover().plugins}
    assert loaded["slow-plugin"].load_ms >= 50, "the import's 50 ms sleep is part of its load time"
    assert 0 < loaded["fast-plugin"].load_ms < loaded["slow-plugin"].load_ms


def _cli(site: Site, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "llm-core"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LLM_CORE_")}
    environment.update({"PYTHONPATH": str(site.root), "LLM_CORE_CONFIG": "", "LLM_CORE_DISCOVERY_CACHE": "0", **env})
    return subprocess.run(
        [str(script), *args], capture_output=True, text=True, env=environment, timeout=60, check=False
    )


def test_the_cli_shows_load_times_and_duplicates(site: Site) -> None:
    site.add("slow-plugin", SLOW_IMPORT)
    site.add("zzz-second-slow", SPEC.format(identifier="slow", name="Another Slow"))
    listed = json.loads(_cli(site, "plugins", "--json").stdout)
    [slow] = [p for p in listed["plugins"] if p["distribution"] == "slow-plugin"]
    assert slow["load_ms"] >= 50
    table = _cli(site, "plugins")
    assert "LOAD (MS)" in table.stdout
    providers = _cli(site, "providers")
    assert providers.returncode == 0
    assert "zzz-second-slow (duplicate)" in providers.stderr and "'slow'" in providers.stderr
    pinned = _cli(site, "providers", "--json", LLM_CORE_PROVIDER_OWNERS="slow=zzz-second-slow")
    rows = {r["provider"]: r for r in json.loads(pinned.stdout)["providers"]}
    assert rows["slow"]["distribution"] == "zzz-second-slow"
    assert json.loads(pinned.stdout)["plugin_errors"] == []
