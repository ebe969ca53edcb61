"""ProviderSpec and ModelInfo: validation, per-model features, lazy factories."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given, strategies as st

from llm_core import Feature, ModelInfo, PluginLoadError, ProviderSpec, UnknownFeatureError
from llm_core.testing import FakeProvider

CHAT_VISION = [Feature.CHAT, Feature.VISION]


def spec(**overrides: Any) -> ProviderSpec:
    values: dict[str, Any] = {"identifier": "acme", "name": "Acme", "features": CHAT_VISION,
                              "factory": "acme_plugin.provider:AcmeProvider"}
    values.update(overrides)
    return ProviderSpec(**values)


def test_a_valid_spec_keeps_its_declarations() -> None:
    models = [ModelInfo("big", CHAT_VISION, description="large", extra={"native_decisions": True}),
              ModelInfo("small", ["chat"])]
    s = spec(models=models, default_model="big", credential_env=["ACME_KEY"])
    assert s.features == {Feature.CHAT, Feature.VISION}
    assert s.models == tuple(models)
    assert s.credential_env == ("ACME_KEY",)
    assert s.model("big") is models[0]
    assert s.model("models/small") is models[1]
    assert s.model("nope") is None
    assert models[0].extra["native_decisions"] is True
    assert models[1].supports("CHAT") and not models[1].supports(Feature.VISION)


def test_specs_and_model_infos_are_immutable() -> None:
    s = spec(models=[ModelInfo("m", ["chat"], extra={"a": 1})])
    with pytest.raises(AttributeError):
        s.identifier = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.models[0].extra["a"] = 2  # type: ignore[index]


@given(st.text(max_size=70))
def test_identifiers_are_lower_case_names(identifier: str) -> None:
    import re

    if re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", identifier):
        assert spec(identifier=identifier).identifier == identifier
    else:
        with pytest.raises(PluginLoadError, match="identifier"):
            spec(identifier=identifier)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"identifier": "Gemini"}, "identifier"),
        ({"identifier": "gemini\n"}, "identifier"),
        ({"identifier": 7}, "identifier"),
        ({"factory": "no_colon"}, "factory"),
        ({"factory": "pkg.mod:"}, "factory"),
        ({"factory": "pkg.mod:Cls\n"}, "factory"),
        ({"factory": 42}, "factory"),
        ({"models": [ModelInfo("m", ["chat"]), ModelInfo("m", ["chat"])]}, "duplicate model"),
        ({"models": [ModelInfo("m", ["chat"])], "default_model": "other"}, "not in its catalogue"),
    ],
)
def test_invalid_specs_are_plugin_load_errors(overrides: dict[str, Any], match: str) -> None:
    with pytest.raises(PluginLoadError, match=match):
        spec(**overrides)


def test_unknown_feature_names_are_refused_with_the_valid_list() -> None:
    with pytest.raises(UnknownFeatureError, match="json_mode"):
        spec(features=["chat", "visoin"])
    with pytest.raises(UnknownFeatureError):
        ModelInfo("m", ["telepathy"])


@pytest.mark.parametrize("model_id", ["", "  "])
def test_model_ids_are_not_empty(model_id: str) -> None:
    with pytest.raises(PluginLoadError):
        ModelInfo(model_id, ["chat"])


def test_a_default_model_outside_an_empty_catalogue_is_allowed() -> None:
    assert spec(default_model="whatever").default_model == "whatever"
    assert spec(name="").name == "acme"


def test_model_features_are_narrowed_per_model_and_by_the_provider() -> None:
    s = spec(features=["chat", "vision"], models=[
        ModelInfo("text", ["chat"]),
        ModelInfo("multi", ["chat", "vision", "tools"]),  # tools is not offered by the provider
    ])
    assert s.model_features("text") == {Feature.CHAT}
    assert s.model_features("multi") == {Feature.CHAT, Feature.VISION}
    assert s.model_features(None) == {Feature.CHAT, Feature.VISION}
    assert s.model_features("unknown-model") == {Feature.CHAT, Feature.VISION}


def test_with_distribution_copies_everything_else() -> None:
    s = spec(models=[ModelInfo("m", ["chat"])], default_model="m", credential_env=["K"],
             requires_credentials=False, description="d", credential_check=bool, credential_help="h")
    copy = s.with_distribution("acme-plugin")
    assert copy.distribution == "acme-plugin"
    assert (copy.identifier, copy.features, copy.models, copy.default_model, copy.credential_env,
            copy.requires_credentials, copy.description, copy.credential_check, copy.credential_help) == (
        s.identifier, s.features, s.models, s.default_model, s.credential_env, s.requires_credentials,
        s.description, s.credential_check, s.credential_help)


def test_credentials_present() -> None:
    s = spec(credential_env=["ACME_KEY", "ACME_OTHER_KEY"])
    assert not s.credentials_present({})
    assert not s.credentials_present({"ACME_KEY": ""})
    assert s.credentials_present({"ACME_OTHER_KEY": "k"})
    assert spec(requires_credentials=False).credentials_present({})
    assert s.missing_credentials() == "set ACME_KEY or ACME_OTHER_KEY"


def test_credentials_other_than_a_key_are_found_by_the_specs_check() -> None:
    """A provider that also authenticates otherwise (Google Cloud credentials) says how it finds
    them and what to do when they are missing."""
    s = spec(credential_env=["ACME_KEY"], credential_check=lambda env: env.get("ACME_CLOUD") == "on",
             credential_help="set ACME_KEY, or ACME_CLOUD=on with cloud credentials")
    assert not s.credentials_present({"ACME_CLOUD": "off"})
    assert s.credentials_present({"ACME_CLOUD": "on"}) and s.credentials_present({"ACME_KEY": "k"})
    assert s.missing_credentials() == "set ACME_KEY, or ACME_CLOUD=on with cloud credentials"


def test_the_factory_is_imported_only_when_resolved(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    module = "lazy_factory_target_mod"
    (tmp_path / f"{module}.py").write_text("IMPORTED = True\nclass Provider:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    s = spec(factory=f"{module}:Provider")
    assert module not in sys.modules
    factory = s.resolve_factory()
    assert module in sys.modules
    assert factory.__name__ == "Provider"


def test_a_callable_factory_is_returned_as_is() -> None:
    def build(**_: Any) -> None:
        return None

    assert spec(factory=build).resolve_factory() is build
    assert spec(factory=FakeProvider).resolve_factory() is FakeProvider


@pytest.mark.parametrize("factory", ["no_such_module_xyz.sub:Thing", "llm_core.testing.fake:Missing",
                                     "llm_core.testing.fake:PNG_1X1"])
def test_a_broken_factory_is_a_plugin_load_error_naming_the_distribution(factory: str) -> None:
    s = spec(factory=factory).with_distribution("acme-plugin")
    with pytest.raises(PluginLoadError) as info:
        s.resolve_factory()
    assert factory in str(info.value)
    assert info.value.distribution == "acme-plugin"
