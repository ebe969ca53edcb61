"""The registry: process-wide instance, registration, get/caching, supporting and select."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llm_core import (
    ConfigurationError,
    DuplicateProviderError,
    Feature,
    LLMError,
    ModelInfo,
    NoMatchingProviderError,
    PluginLoadError,
    ProviderSpec,
    Registry,
    UnknownFeatureError,
    UnknownProviderError,
    get_registry,
    reset_registry,
)
from llm_core.testing import FakeProvider, fake_spec

FACTORY = "llm_core.testing.fake:FakeProvider"


def spec(identifier: str, features: list[str], models: list[ModelInfo] | None = None, **kwargs: Any) -> ProviderSpec:
    models = models if models is not None else [ModelInfo(f"{identifier}-1", features)]
    kwargs.setdefault("requires_credentials", False)
    return ProviderSpec(identifier, identifier.title(), features, FACTORY, models,
                        kwargs.pop("default_model", models[0].id if models else None), **kwargs)


@pytest.fixture
def catalogue(registry: Registry) -> Registry:
    """alpha: chat+vision+streaming; beta: chat+tools with a text model and a vision-less default;
    gamma: declares vision at provider level but none of its models offers it."""
    registry.register(spec("alpha", ["chat", "vision", "streaming"]))
    registry.register(spec("beta", ["chat", "tools", "vision"], [
        ModelInfo("beta-text", ["chat", "tools"]), ModelInfo("beta-vision", ["chat", "vision"]),
    ]))
    registry.register(spec("gamma", ["chat", "vision"], [ModelInfo("gamma-1", ["chat"])]))
    return registry


# -- the process-wide registry ------------------------------------------------------------------


def test_get_registry_is_built_once_even_when_many_threads_ask_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = Registry.discover.__func__  # type: ignore[attr-defined]

    def slow_discover(cls: type[Registry], **kwargs: Any) -> Registry:
        calls.append(threading.get_ident())
        time.sleep(0.05)  # widen the race window
        return original(cls, entry_points=[], **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Registry, "discover", classmethod(slow_discover))
    barrier = threading.Barrier(16)
    results: list[Registry] = []

    def worker() -> None:
        barrier.wait()
        results.append(get_registry())

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 16
    assert all(r is results[0] for r in results)
    assert len(calls) == 1
    assert get_registry() is results[0]
    reset_registry()
    assert get_registry() is not results[0]
    assert len(calls) == 2


# -- registration --------------------------------------------------------------------------------


def test_providers_in_registration_order(catalogue: Registry) -> None:
    assert [s.identifier for s in catalogue.providers()] == ["alpha", "beta", "gamma"]
    assert "alpha" in catalogue and "delta" not in catalogue


def test_register_by_hand_replaces_unless_told_not_to(registry: Registry) -> None:
    registry.register(spec("alpha", ["chat"]))
    first = registry.get("alpha")
    registry.register(spec("alpha", ["chat", "vision"]))
    assert registry.spec("alpha").features == {Feature.CHAT, Feature.VISION}
    assert registry.get("alpha") is not first  # the old instance is dropped with its spec
    with pytest.raises(DuplicateProviderError, match="alpha"):
        registry.register(spec("alpha", ["chat"]), replace=False)


def test_register_takes_only_specs(registry: Registry) -> None:
    with pytest.raises(PluginLoadError, match="ProviderSpec"):
        registry.register({"identifier": "x"})  # type: ignore[arg-type]


# -- get ---------------------------------------------------------------------------------------


def test_get_shares_one_instance_without_config_and_builds_new_ones_with_config(catalogue: Registry) -> None:
    shared = catalogue.get("alpha")
    assert isinstance(shared, FakeProvider)
    assert catalogue.get("alpha") is shared
    configured = catalogue.get("alpha", model="custom-model", temperature_hint=1)
    assert configured is not shared
    assert configured.default_model() == "custom-model"
    assert configured.options == {"temperature_hint": 1}
    assert configured.provider_spec is catalogue.spec("alpha")


def test_get_is_thread_safe(catalogue: Registry) -> None:
    results: list[object] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(catalogue.get("beta"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(r) for r in results}) == 1


def test_unknown_provider_lists_the_known_ones(catalogue: Registry, registry: Registry) -> None:
    with pytest.raises(UnknownProviderError) as info:
        catalogue.get("delta")
    error = info.value
    assert isinstance(error, KeyError) and isinstance(error, LLMError)
    assert str(error) == "unknown provider 'delta'; registered providers: alpha, beta, gamma"
    with pytest.raises(UnknownProviderError, match="install a plugin"):
        Registry().get("anything")


def test_building_a_provider_that_needs_a_missing_key_names_the_variable(registry: Registry) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    with pytest.raises(ConfigurationError, match="FAKE_A_KEY"):
        registry.get("keyed")


def test_a_factory_with_the_wrong_signature_is_a_plugin_load_error(registry: Registry) -> None:
    def factory() -> None:  # does not take spec=
        return None

    registry.register(ProviderSpec("odd", "Odd", ["chat"], factory, requires_credentials=False))
    with pytest.raises(PluginLoadError, match="cannot build provider 'odd'"):
        registry.get("odd")


# -- supporting and select ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("features", "model", "expected"),
    [
        (["chat"], None, ["alpha", "beta", "gamma"]),
        (["vision"], None, ["alpha", "beta"]),  # gamma's models offer no vision
        (["chat", "tools"], None, ["beta"]),
        (["vision", "tools"], None, []),  # no beta model has both
        (["streaming", "vision"], None, ["alpha"]),
        (["decision"], None, []),
        (["vision"], "beta-vision", ["beta"]),
        (["vision"], "beta-text", []),
        (["chat"], "gamma-1", ["gamma"]),
        (["chat"], "models/alpha-1", ["alpha"]),
    ],
)
def test_supporting(catalogue: Registry, features: list[str], model: str | None, expected: list[str]) -> None:
    assert [s.identifier for s in catalogue.supporting(*features, model=model)] == expected


def test_select_picks_the_provider_and_a_model_that_offers_the_features(catalogue: Registry) -> None:
    selection = catalogue.select("vision")
    assert (selection.identifier, selection.model) == ("alpha", "alpha-1")
    assert [c.identifier for c in selection.alternatives] == ["beta"]
    # beta's default model has no vision, so its vision model is chosen
    beta = catalogue.select("vision", prefer="beta")
    assert (beta.identifier, beta.model) == ("beta", "beta-vision")
    assert beta.features == {Feature.VISION}
    assert any("beta-vision" in reason for reason in beta.reasons)


def test_select_per_model(catalogue: Registry) -> None:
    assert catalogue.select("chat", model="beta-text").identifier == "beta"
    with pytest.raises(NoMatchingProviderError, match="beta-text"):
        catalogue.select("vision", model="beta-text")
    with pytest.raises(NoMatchingProviderError):
        catalogue.select("chat", model="no-such-model")


def test_select_accepts_names_in_any_case_and_refuses_unknown_features(catalogue: Registry) -> None:
    assert catalogue.select("STREAMING", Feature.CHAT).identifier == "alpha"
    with pytest.raises(UnknownFeatureError):
        catalogue.select("visoin")


def test_selection_builds_its_provider_with_its_model(catalogue: Registry) -> None:
    provider = catalogue.select("vision", prefer="beta").provider()
    assert provider.identifier == "beta"
    assert provider.default_model() == "beta-vision"
    assert catalogue.select("chat").provider() is catalogue.get("alpha")


@pytest.mark.parametrize(
    ("features", "missing"),
    [
        (["decision"], ["decision"]),
        (["chat", "audio", "decision"], ["audio", "decision"]),
    ],
)
def test_no_match_names_the_missing_features(catalogue: Registry, features: list[str], missing: list[str]) -> None:
    with pytest.raises(NoMatchingProviderError) as info:
        catalogue.select(*features)
    assert info.value.missing == tuple(missing)
    for name in missing:
        assert name in str(info.value)


def test_no_match_when_features_exist_only_apart(catalogue: Registry) -> None:
    with pytest.raises(NoMatchingProviderError, match="not together") as info:
        catalogue.select("vision", "tools")
    assert "tools" in str(info.value) and "vision" in str(info.value)


def test_no_match_for_a_feature_only_declared_at_provider_level(registry: Registry) -> None:
    registry.register(spec("gamma", ["chat", "vision"], [ModelInfo("gamma-1", ["chat"])]))
    with pytest.raises(NoMatchingProviderError) as info:
        registry.select("vision")
    assert info.value.missing == ("vision",)


def test_no_match_without_any_provider_says_to_install_a_plugin(registry: Registry) -> None:
    with pytest.raises(NoMatchingProviderError, match="install a plugin") as info:
        registry.select("chat")
    assert info.value.missing == ("chat",)


# -- credentials and preference ---------------------------------------------------------------------


@pytest.fixture
def keyed(registry: Registry) -> Registry:
    for name, variable in (("first", "FAKE_A_KEY"), ("second", "FAKE_B_KEY")):
        registry.register(spec(name, ["chat"], requires_credentials=True, credential_env=(variable,)))
    return registry


def test_select_prefers_providers_whose_credentials_are_present(keyed: Registry,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    first = keyed.select("chat")
    assert first.identifier == "first"  # no keys at all: registration order
    assert "no credentials (FAKE_A_KEY not set)" in first.reasons
    monkeypatch.setenv("FAKE_B_KEY", "k")
    chosen = keyed.select("chat")
    assert chosen.identifier == "second"
    assert "credentials present" in chosen.reasons
    monkeypatch.setenv("FAKE_A_KEY", "k")
    assert keyed.select("chat").identifier == "first"


def test_preference_order_from_argument_attribute_env_and_file(keyed: Registry, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert keyed.select("chat", prefer="second").identifier == "second"
    assert keyed.select("chat", prefer=["nobody", "second", "first"]).identifier == "second"
    assert "preference #2" in keyed.select("chat", prefer=["nobody", "second"]).reasons

    config = tmp_path / "c.toml"
    config.write_text('[routing]\nprefer = ["second"]\n')
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    assert keyed.select("chat").identifier == "second"  # TOML [routing] prefer
    monkeypatch.setenv("LLM_CORE_PREFER", "first")
    assert keyed.select("chat").identifier == "first"  # the env variable beats the file
    keyed.preference = ("second",)
    assert keyed.select("chat").identifier == "second"  # the registry's own setting beats both
    assert keyed.select("chat", prefer="first").identifier == "first"  # and the argument beats all


def test_candidates_rank_credentials_then_preference_then_registration(keyed: Registry,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    keyed.register(spec("third", ["chat"], requires_credentials=False))
    monkeypatch.setenv("FAKE_B_KEY", "k")
    assert [c.identifier for c in keyed.candidates("chat")] == ["second", "third", "first"]
    # a preferred provider without its key still ranks after every usable one
    assert [c.identifier for c in keyed.candidates("chat", prefer="first")] == ["second", "third", "first"]
    assert [c.identifier for c in keyed.candidates("chat", prefer="third")] == ["third", "second", "first"]
