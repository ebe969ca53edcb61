"""Named endpoints: one plugin serving several providers, each its own provider identifier.

A ``[providers.NAME]`` table of the config file with a ``plugin`` key, or
``registry.add_endpoint(NAME, plugin=..., ...)``, declares an endpoint. The keys an endpoint
table may hold beyond the plugin's provider settings are the fields of :class:`EndpointSettings`
(declared once here: a provider class that serves endpoints lists this model in its ``settings``,
and every setting check derives the names from it). The plugin turns the settings into a
:class:`~llm_core.specs.ProviderSpec` with the function its spec names as ``endpoint_factory``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_core.config import PLUGIN_KEY, endpoint_tables
from llm_core.errors import ConfigurationError

__all__ = ["PLUGIN_KEY", "EndpointModel", "EndpointSettings", "endpoint_tables"]


class EndpointModel(BaseModel):
    """One model of an endpoint's ``models`` list given as a table: its id and what it offers
    (``features`` narrows the endpoint's; unset: the endpoint's features)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    features: list[str] | None = None
    description: str = ""


class EndpointSettings(BaseModel):
    """The settings that make a ``[providers.NAME]`` table an endpoint of a plugin.

    Other keys (``base_url``, ``api_key``, ``model``, ``timeout``, the plugin's own settings) are
    the provider's settings, checked by its class as for any provider.
    """

    model_config = ConfigDict(extra="allow")

    #: The plugin serving the endpoint: the provider identifier of its own provider (``"openai"``).
    plugin: str
    #: The plugin's API dialect (the OpenAI plugin: ``"chat_completions"`` or ``"responses"``).
    api: str | None = None
    #: A preset of the plugin for a known server (default base URL, key variable, dialect, quirks).
    preset: str | None = None
    #: Environment variable(s) holding the key; without one (and no ``api_key``, and a preset
    #: that needs none) the endpoint is keyless.
    api_key_env: str | list[str] | None = None
    #: The endpoint's models: ids, or tables (:class:`EndpointModel`). Unset: any model name.
    models: list[str | EndpointModel] | None = None
    #: What the endpoint offers (narrows what the plugin's dialect and the preset offer).
    features: list[str] | None = None

    @classmethod
    def read(cls, name: str, settings: Mapping[str, Any]) -> EndpointSettings:
        """``settings`` checked (a bad value is a :class:`ConfigurationError` naming the endpoint)."""
        try:
            return cls.model_validate(dict(settings))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'settings'}: {error['msg']}" for error in exc.errors()
            )
            raise ConfigurationError(f"endpoint {name!r}: {problems}", provider=name) from None

    @property
    def key_variables(self) -> tuple[str, ...]:
        """``api_key_env`` as a tuple of variable names."""
        given = self.api_key_env
        return () if given is None else (given,) if isinstance(given, str) else tuple(given)

    def model_entries(self) -> list[EndpointModel]:
        """``models`` as tables."""
        return [EndpointModel(id=entry) if isinstance(entry, str) else entry for entry in self.models or ()]
