"""The light plugin module named by the ``llm_core`` entry point: spec and hook, no SDK import."""

from __future__ import annotations

from collections.abc import Callable

from core_openai_plugin.models import DEFAULT_MODEL, MODELS, PROVIDER_FEATURES
from llm_core.hooks import hookimpl
from llm_core.specs import ProviderSpec

IDENTIFIER = "openai"
DISTRIBUTION = "core-openai-plugin"

SPEC = ProviderSpec(
    identifier=IDENTIFIER,
    name="OpenAI",
    features=PROVIDER_FEATURES,
    factory="core_openai_plugin.provider:OpenAIProvider",
    models=MODELS,
    default_model=DEFAULT_MODEL,
    credential_env=("OPENAI_API_KEY",),
    description="OpenAI Responses, Embeddings, Images and Decisions APIs (and OpenAI-compatible servers)",
    distribution=DISTRIBUTION,
    endpoint_factory="core_openai_plugin.endpoints:endpoint_spec",
)


@hookimpl
def llm_core_register_providers(register: Callable[[ProviderSpec], None]) -> None:
    """Register the OpenAI provider."""
    register(SPEC)
