"""Plugin discovery through the ``llm_core`` entry-point group, with fake distributions on disk."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from llm_core import (
    DuplicateProviderError,
    PluginLoadError,
    Registry,
    UnknownFeatureError,
    get_registry,
)
from llm_core.testing import FakeProvider

if TYPE_CHECKING:
    from tests.core.conftest import PluginDir

SpecPlugin = Callable[..., str]

BROKEN_IMPORT = """
raise ImportError("No module named 'acme_sdk'")
"""

RAISING_HOOK = """
from llm_core import hookimpl

@hookimpl
def llm_core_register_providers(register):
    raise RuntimeError("the hook exploded")
"""

INVALID_SPEC = """
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier="Bad Name", name="Bad", features=["chat"], factory="x.y:Z"))
"""

NOT_A_SPEC = """
from llm_core import hookimpl

@hookimpl
def llm_core_register_providers(register):
    register({"identifier": "dict-spec"})
"""

UNKNOWN_FEATURE = """
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier="typo", name="Typo", features=["chat", "visoin"], factory="x.y:Z"))
"""

TWO_PROVIDERS = """
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    for name in ("first", "second"):
        register(ProviderSpec(identifier=name, name=name.title(), features=["chat"],
                              factory="llm_core.testing.fake:FakeProvider", requires_credentials=False))
"""


def test_a_plugin_registers_its_specs_with_its_distribution(plugins: PluginDir, spec_plugin: SpecPlugin) -> None:
    plugins.add("acme-plugin", spec_plugin("acme", "Acme AI"))
    registry = plugins.discover()
    [spec] = registry.providers()
    assert (spec.identifier, spec.name, spec.distribution) == ("acme", "Acme AI", "acme-plugin")
    assert registry.plugin_errors == []
    [loaded] = registry.plugins
    assert (loaded.distribution, loaded.version) == ("acme-plugin", "1.0")


def test_one_plugin_may_register_several_providers(plugins: PluginDir) -> None:
    plugins.add("multi-plugin", TWO_PROVIDERS)
    assert [s.identifier for s in plugins.discover().providers()] == ["first", "second"]


def test_discovery_reads_installed_entry_points(plugins: PluginDir, spec_plugin: SpecPlugin,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    plugins.add("acme-plugin", spec_plugin("acme"))
    monkeypatch.setenv("LLM_CORE_PLUGINS", "acme-plugin")  # ignore whatever else is installed
    registry = Registry.discover()
    assert [s.identifier for s in registry.providers()] == ["acme"]
    assert "acme" in get_registry()


@pytest.mark.parametrize(
    ("body", "stage", "error_type", "text"),
    [
        (BROKEN_IMPORT, "import", ImportError, "acme_sdk"),
        (RAISING_HOOK, "register", RuntimeError, "the hook exploded"),
        (INVALID_SPEC, "register", PluginLoadError, "Bad Name"),
        (NOT_A_SPEC, "register", PluginLoadError, "takes a ProviderSpec"),
        (UNKNOWN_FEATURE, "register", UnknownFeatureError, "visoin"),
    ],
)
def test_a_broken_plugin_is_recorded_and_the_others_still_load(
    plugins: PluginDir, spec_plugin: SpecPlugin, body: str, stage: str, error_type: type[Exception], text: str,
) -> None:
    plugins.add("aaa-plugin", spec_plugin("before"))
    plugins.add("broken-plugin", body)
    plugins.add("zzz-plugin", spec_plugin("after"))
    registry = plugins.discover()
    assert [s.identifier for s in registry.providers()] == ["before", "after"]
    [error] = registry.plugin_errors
    assert error.distribution == "broken-plugin"
    assert error.stage == stage
    assert isinstance(error.error, error_type)
    assert text in str(error.error)
    assert "broken-plugin" in str(error)


def test_two_plugins_claiming_one_identifier_first_distribution_alphabetically_keeps_it(
    plugins: PluginDir, spec_plugin: SpecPlugin,
) -> None:
    plugins.add("zeta-plugin", spec_plugin("shared", "From Zeta"))
    plugins.add("alpha-plugin", spec_plugin("shared", "From Alpha"))
    plugins.add("Mid-Plugin", spec_plugin("shared", "From Mid"))  # case does not change the order
    registry = plugins.discover()
    [spec] = registry.providers()
    assert (spec.name, spec.distribution) == ("From Alpha", "alpha-plugin")
    assert [(e.distribution, e.stage) for e in registry.plugin_errors] == [
        ("Mid-Plugin", "duplicate"), ("zeta-plugin", "duplicate"),
    ]
    for error in registry.plugin_errors:
        assert isinstance(error.error, DuplicateProviderError)
        assert "'shared'" in str(error.error) and "alpha-plugin" in str(error.error)


@pytest.mark.parametrize("body", [BROKEN_IMPORT, RAISING_HOOK, INVALID_SPEC, NOT_A_SPEC, UNKNOWN_FEATURE])
def test_strict_mode_makes_plugin_failures_fatal_and_names_the_distribution(
    plugins: PluginDir, body: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins.add("broken-plugin", body)
    monkeypatch.setenv("LLM_CORE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError) as info:
        plugins.discover()
    assert info.value.distribution == "broken-plugin"
    assert "broken-plugin" in str(info.value)


def test_strict_mode_makes_duplicates_fatal(plugins: PluginDir, spec_plugin: SpecPlugin) -> None:
    plugins.add("alpha-plugin", spec_plugin("shared"))
    plugins.add("beta-plugin", spec_plugin("shared"))
    with pytest.raises(DuplicateProviderError, match="beta-plugin"):
        plugins.discover(strict=True)


@pytest.mark.parametrize("value", ["0", "", "no"])
def test_strict_mode_is_off_unless_switched_on(plugins: PluginDir, value: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    plugins.add("broken-plugin", RAISING_HOOK)
    monkeypatch.setenv("LLM_CORE_STRICT_PLUGINS", value)
    assert len(plugins.discover().plugin_errors) == 1


def test_strict_get_registry_raises_and_tries_again_next_time(plugins: PluginDir, spec_plugin: SpecPlugin,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    plugins.add("broken-plugin", RAISING_HOOK)
    monkeypatch.setenv("LLM_CORE_PLUGINS", "broken-plugin")
    monkeypatch.setenv("LLM_CORE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError):
        get_registry()
    monkeypatch.delenv("LLM_CORE_STRICT_PLUGINS")
    assert len(get_registry().plugin_errors) == 1


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        ("beta-plugin", ["beta"]),
        ("Beta_Plugin", ["beta"]),  # names are normalised
        (" alpha-plugin , beta-plugin ", ["alpha", "beta"]),
        ("", []),  # empty: no plugin at all
        ("other-plugin", []),
    ],
)
def test_llm_core_plugins_limits_which_distributions_load(
    plugins: PluginDir, spec_plugin: SpecPlugin, allowed: str, expected: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins.add("alpha-plugin", spec_plugin("alpha"))
    plugins.add("beta-plugin", spec_plugin("beta"))
    broken = plugins.add("gamma-plugin", BROKEN_IMPORT)
    monkeypatch.setenv("LLM_CORE_PLUGINS", allowed)
    registry = plugins.discover()
    assert [s.identifier for s in registry.providers()] == expected
    assert registry.plugin_errors == []  # gamma was never imported
    import sys

    assert broken not in sys.modules


def test_discovery_does_not_import_the_provider_module(plugins: PluginDir) -> None:
    import sys

    provider_module = f"lazy_provider_{id(plugins)}"
    plugins.add("lazy-plugin", f"""
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier="lazy", name="Lazy", features=["chat"],
                          factory="{provider_module}:Provider", requires_credentials=False))
""", extra_modules={provider_module: "raise ImportError('the SDK is not installed')\n"})
    registry = plugins.discover()
    assert "lazy" in registry
    assert provider_module not in sys.modules
    assert registry.select("chat").identifier == "lazy"
    with pytest.raises(PluginLoadError, match="the SDK is not installed") as info:
        registry.get("lazy")
    assert info.value.distribution == "lazy-plugin"


def test_specs_from_plugins_build_their_providers(plugins: PluginDir, spec_plugin: SpecPlugin) -> None:
    plugins.add("acme-plugin", spec_plugin("acme"))
    provider = plugins.discover().get("acme")
    assert isinstance(provider, FakeProvider)
    assert provider.identifier == "acme"
    assert provider.provider_spec.distribution == "acme-plugin"
