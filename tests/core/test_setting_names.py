"""Every setting name is checked the same way: constructor keywords, ``configure``, the config
file and a router's per-provider settings are refused by one function (same error, same message,
the closest valid name suggested) against what the provider class declares; a class that declares
nothing keeps taking any option. Call defaults a class declares join every chat call, the call's
own value winning."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from llm_core import ConfigurationError, Feature, ProviderSpec, UnknownSettingError
from llm_core.registry import Registry
from llm_core.testing import FakeProvider, FakeReply, fake_spec

SECRET = "sk-canary-0123456789abcdef"


class AppProvider(FakeProvider):
    """A plugin's provider class: it declares its settings, and two call defaults."""

    spec = fake_spec("app")
    settings: ClassVar[tuple[Any, ...]] = ("region",)
    call_defaults: ClassVar[frozenset[str]] = frozenset({"temperature", "max_tokens", "seed"})


class UndeclaredProvider(FakeProvider):
    """A third-party class that declares no settings: its options are not checked."""

    spec = fake_spec("loose")


def _spec(identifier: str, factory: type[FakeProvider], **options: Any) -> ProviderSpec:
    base = fake_spec(identifier, **options)
    return ProviderSpec(base.identifier, base.name, base.features, factory, base.models, base.default_model,
                        base.credential_env, base.requires_credentials)


def _registry(*classes: type[FakeProvider]) -> Registry:
    registry = Registry()
    for cls in classes:
        assert cls.spec is not None
        registry.register(_spec(cls.spec.identifier, cls))
    return registry


def test_a_constructor_typo_is_refused_naming_the_closest_setting() -> None:
    with pytest.raises(UnknownSettingError) as caught:
        AppProvider(tempreature=0.1)
    error = caught.value
    assert isinstance(error, ConfigurationError) and error.provider == "app"
    assert "unknown setting 'tempreature' passed to AppProvider; did you mean 'temperature'?" in str(error)
    assert "region" in str(error)  # the valid names are listed


def test_registry_get_refuses_it_too() -> None:
    registry = _registry(AppProvider)
    with pytest.raises(UnknownSettingError, match="did you mean 'region'"):
        registry.get("app", regoin="eu")


def test_the_error_holds_names_never_values() -> None:
    with pytest.raises(UnknownSettingError) as caught:
        AppProvider(api_key=SECRET, secret_key=SECRET)
    for text in (str(caught.value), repr(caught.value), *map(str, caught.value.args)):
        assert SECRET not in text


def test_configure_is_checked_before_anything_changes() -> None:
    provider = AppProvider(region="eu")
    with pytest.raises(UnknownSettingError, match=r"unknown setting 'regoin'.*did you mean 'region'"):
        provider.configure({"regoin": "us", "timeout": 5})
    assert provider.options["region"] == "eu" and provider.timeout == provider.default_timeout
    provider.configure({"region": "us"})
    assert provider.options["region"] == "us"


def test_config_file_and_constructor_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[providers.app]\nregoin = 'eu'\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
    with pytest.raises(UnknownSettingError) as from_file:
        AppProvider()
    monkeypatch.delenv("LLM_CORE_CONFIG")
    with pytest.raises(UnknownSettingError) as from_argument:
        AppProvider(regoin="eu")
    for error in (from_file.value, from_argument.value):
        assert "unknown setting 'regoin'" in str(error) and "did you mean 'region'?" in str(error)
    assert "in [providers.app]" in str(from_file.value)


def test_a_class_that_declares_nothing_keeps_any_option() -> None:
    provider = UndeclaredProvider(anything="goes")
    assert provider.options["anything"] == "goes"
    provider.configure({"something_else": 1})
    assert provider.options["something_else"] == 1


def test_a_router_raises_a_typo_instead_of_skipping_the_provider() -> None:
    registry = _registry(AppProvider, UndeclaredProvider)
    router = registry.router(Feature.CHAT, prefer=["app", "loose"], app={"tempreature": 0.1})
    with pytest.raises(UnknownSettingError, match="did you mean 'temperature'"):
        router.chat_completion("Hi")
    loose = registry.get("loose")  # the instance the router would have used next
    assert isinstance(loose, FakeProvider) and loose.requests == []  # never asked


def test_a_router_still_falls_back_when_a_provider_has_no_key() -> None:
    registry = _registry(UndeclaredProvider)
    registry.register(_spec("keyed", AppProvider, requires_credentials=True, credential_env=["NO_SUCH_TEST_KEY"]))
    router = registry.router(Feature.CHAT, prefer=["keyed", "loose"])
    assert router.chat_completion("Hi").provider == "loose"


# -- call defaults ------------------------------------------------------------------------------


def test_call_defaults_join_every_chat_call_and_the_call_wins() -> None:
    provider = AppProvider(temperature=0.2, max_tokens=50, seed=7, default_reply=FakeReply(content="{}"))
    provider.chat_completion("Hi")
    provider.chat_completion("Hi", temperature=0.9, seed=1)
    provider.generate_json("Hi", max_tokens=10)
    first, second, third = provider.requests
    assert (first["temperature"], first["max_tokens"]) == (0.2, 50)
    assert (second["temperature"], second["max_tokens"]) == (0.9, 50)
    assert third["max_tokens"] == 10
    built = provider.builder.chat("Hi", seed=1)
    assert built.options == {"seed": 1}
    assert provider.builder.chat("Hi").options == {"seed": 7}


def test_call_defaults_come_from_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[providers.app]\ntemperature = 0.3\nseed = 11\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
    request = AppProvider().builder.chat("Hi")
    assert request.temperature == 0.3 and request.options == {"seed": 11}
    assert AppProvider(temperature=0.5).builder.chat("Hi").temperature == 0.5  # the argument first


def test_a_bad_default_fails_at_construction() -> None:
    with pytest.raises(ConfigurationError, match="call default invalid temperature"):
        AppProvider(temperature=7)
    with pytest.raises(ConfigurationError, match="call default invalid max_tokens"):
        AppProvider(max_tokens="many")


def test_a_per_call_option_the_class_does_not_take_as_default_is_refused_at_construction() -> None:
    with pytest.raises(UnknownSettingError, match="unknown setting 'top_k'"):
        AppProvider(top_k=3)
    AppProvider().chat_completion("Hi", top_k=3)  # per call it is the plugin's mapper that decides
