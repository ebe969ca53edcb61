"""What a plugin declares about its providers, without importing any SDK."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from llm_core.errors import PluginLoadError
from llm_core.features import Feature, parse_features
from llm_core.pricing import Prices

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_FACTORY_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

#: A factory is an import path ``"package.module:Class"`` or a callable building the provider.
Factory = str | Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model of a provider and the features it offers.

    ``extra`` carries plugin-specific facts (e.g. ``{"native_decisions": True}``); ``prices``
    the model's list prices, when the plugin knows them.
    """

    id: str
    features: frozenset[Feature]
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    prices: Prices | None = None

    def __init__(
        self,
        id: str,  # noqa: A002 - the natural name for a model id
        features: Iterable[Feature | str],
        description: str = "",
        extra: Mapping[str, Any] | None = None,
        prices: Prices | None = None,
    ) -> None:
        if not id or not id.strip():
            raise PluginLoadError("ModelInfo.id must not be empty")
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "features", parse_features(features))
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "extra", MappingProxyType(dict(extra or {})))
        object.__setattr__(self, "prices", prices)

    def __reduce__(self) -> tuple[Any, ...]:  # a read-only mapping does not pickle: its dict does
        return (ModelInfo, (self.id, self.features, self.description, dict(self.extra), self.prices))

    def supports(self, feature: Feature | str) -> bool:
        return Feature.parse(feature) in self.features


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """A provider as a plugin registers it.

    ``features`` are the provider-level features; each :class:`ModelInfo` narrows them per
    model. ``factory`` is resolved (imported) only when the provider is first built.
    ``credential_env`` lists environment variables that hold the API key, first one preferred;
    ``requires_credentials=False`` marks providers that work without a key (local servers).
    ``endpoint_factory`` (a path ``"package.module:function"`` or a callable) makes the spec of a
    named endpoint of this plugin, ``(name, EndpointSettings) -> ProviderSpec`` (see
    :mod:`llm_core.endpoints`); ``settings`` are the settings a provider of this spec is built
    with, under the ones given when it is built (an endpoint's base URL and dialect).
    ``credential_check`` finds credentials other than a key (Google Cloud's application default
    credentials): given the environment, it says whether they are there, reading files at most
    (it must stay light: no SDK, no network); ``credential_help`` then says how to provide them
    (``llm-core providers``, ``select()``'s reasons).
    """

    identifier: str
    name: str
    features: frozenset[Feature]
    factory: Factory
    models: tuple[ModelInfo, ...] = ()
    default_model: str | None = None
    credential_env: tuple[str, ...] = ()
    requires_credentials: bool = True
    description: str = ""
    distribution: str | None = None
    endpoint_factory: Factory | None = None
    settings: Mapping[str, Any] = field(default_factory=dict, compare=False)
    credential_check: Callable[[Mapping[str, str]], bool] | None = None
    credential_help: str = ""
    _by_id: Mapping[str, ModelInfo] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        identifier: str,
        name: str,
        features: Iterable[Feature | str],
        factory: Factory,
        models: Iterable[ModelInfo] = (),
        default_model: str | None = None,
        credential_env: Iterable[str] = (),
        requires_credentials: bool = True,
        description: str = "",
        distribution: str | None = None,
        endpoint_factory: Factory | None = None,
        settings: Mapping[str, Any] | None = None,
        credential_check: Callable[[Mapping[str, str]], bool] | None = None,
        credential_help: str = "",
    ) -> None:
        if not isinstance(identifier, str) or not _IDENTIFIER.fullmatch(identifier):
            raise PluginLoadError(f"provider identifier {identifier!r} must match {_IDENTIFIER.pattern}")
        if isinstance(factory, str) and not _FACTORY_PATH.fullmatch(factory):
            raise PluginLoadError(f"provider {identifier!r}: factory {factory!r} must look like 'package.module:Class'")
        if not isinstance(factory, str) and not callable(factory):
            raise PluginLoadError(f"provider {identifier!r}: factory must be a path or callable")
        model_tuple = tuple(models)
        ids = [m.id for m in model_tuple]
        if len(set(ids)) != len(ids):
            raise PluginLoadError(f"provider {identifier!r}: duplicate model ids in catalogue")
        if default_model is not None and model_tuple and default_model not in ids:
            raise PluginLoadError(f"provider {identifier!r}: default model {default_model!r} is not in its catalogue")
        object.__setattr__(self, "identifier", identifier)
        object.__setattr__(self, "name", name or identifier)
        object.__setattr__(self, "features", parse_features(features))
        object.__setattr__(self, "factory", factory)
        object.__setattr__(self, "models", model_tuple)
        object.__setattr__(self, "default_model", default_model)
        object.__setattr__(self, "credential_env", tuple(credential_env))
        object.__setattr__(self, "requires_credentials", requires_credentials)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "distribution", distribution)
        object.__setattr__(self, "endpoint_factory", endpoint_factory)
        object.__setattr__(self, "settings", MappingProxyType(dict(settings or {})))
        object.__setattr__(self, "credential_check", credential_check)
        object.__setattr__(self, "credential_help", credential_help)
        object.__setattr__(self, "_by_id", {m.id: m for m in model_tuple})  # every call looks a model up

    def _fields(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "name": self.name,
            "features": self.features,
            "factory": self.factory,
            "models": self.models,
            "default_model": self.default_model,
            "credential_env": self.credential_env,
            "requires_credentials": self.requires_credentials,
            "description": self.description,
            "distribution": self.distribution,
            "endpoint_factory": self.endpoint_factory,
            "settings": dict(self.settings),
            "credential_check": self.credential_check,
            "credential_help": self.credential_help,
        }

    def with_distribution(self, distribution: str | None) -> ProviderSpec:
        """A copy that records which plugin distribution registered it."""
        return ProviderSpec(**{**self._fields(), "distribution": distribution})

    def with_settings(self, settings: Mapping[str, Any]) -> ProviderSpec:
        """A copy whose providers are built with ``settings`` over its own."""
        return ProviderSpec(**{**self._fields(), "settings": {**self.settings, **settings}})

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled without the secrets among its settings (a key given to ``add_endpoint``): the
        copy's provider resolves its key where it is built, as every provider does."""
        from llm_core.config import Secret

        kept = {name: value for name, value in self.settings.items() if not isinstance(value, Secret)}
        return (_rebuild_spec, (tuple({**self._fields(), "settings": kept}.items()),))

    def model(self, model_id: str) -> ModelInfo | None:
        """The catalogue entry for ``model_id`` (``models/`` prefix ignored), if any."""
        return self._by_id.get(model_id.removeprefix("models/"))

    def model_features(self, model_id: str | None) -> frozenset[Feature]:
        """Features of ``model_id``; the provider-level set for unknown or unspecified models."""
        if model_id is None:
            return self.features
        info = self.model(model_id)
        return self.features if info is None else info.features & self.features

    def credentials_present(self, env: Mapping[str, str] | None = None) -> bool:
        """Whether a credential is available in the environment or the key store (``llm-core
        keys set``), or none is needed. With ``env`` given only that mapping is consulted."""
        if not self.requires_credentials:
            return True
        source = os.environ if env is None else env
        if any(source.get(name) for name in self.credential_env):
            return True
        if self.credential_check is not None and self.credential_check(source):
            return True
        if env is not None:
            return False
        from llm_core.keystore import has_key

        return has_key(self.identifier)

    def missing_credentials(self) -> str:
        """How to provide this provider's credentials, for a message saying they are missing."""
        return self.credential_help or f"set {' or '.join(self.credential_env) or 'its API key'}"

    def resolve_factory(self) -> Callable[..., Any]:
        """Import and return the factory (imports the provider module, not necessarily its SDK)."""
        return self._resolve(self.factory, "provider factory")

    def resolve_endpoint_factory(self) -> Callable[..., Any]:
        """Import and return the endpoint factory; a plugin without one serves no named endpoints."""
        if self.endpoint_factory is None:
            raise PluginLoadError(
                f"plugin {self.identifier!r} serves no named endpoints", distribution=self.distribution
            )
        return self._resolve(self.endpoint_factory, "endpoint factory")

    def _resolve(self, factory: Factory, what: str) -> Callable[..., Any]:
        if not isinstance(factory, str):
            return factory
        try:
            target = import_object(factory)
        except (ImportError, AttributeError) as exc:
            raise PluginLoadError(f"cannot import {what} {factory!r}: {exc}", distribution=self.distribution) from exc
        if not callable(target):
            raise PluginLoadError(f"{what} {factory!r} is not callable", distribution=self.distribution)
        return target  # type: ignore[no-any-return]


def _rebuild_spec(fields: tuple[tuple[str, Any], ...]) -> ProviderSpec:
    return ProviderSpec(**dict(fields))


def import_object(path: str) -> Any:
    """The object named by ``"package.module"`` or ``"package.module:attr.attr"`` (an entry
    point's value; a trailing ``[extras]`` is ignored), importing the module."""
    module_name, _, attr = path.partition("[")[0].strip().partition(":")
    target: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        target = getattr(target, part)
    return target
