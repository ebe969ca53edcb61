"""Registers the Gemini provider with llm-core. Light: imports neither the SDK nor the provider."""

from __future__ import annotations

from collections.abc import Callable

from core_gemini_plugin.models import DEFAULT_MODEL, MODELS, PROVIDER_FEATURES
from llm_core.hooks import hookimpl
from llm_core.specs import ProviderSpec

SPEC = ProviderSpec(
    identifier="gemini",
    name="Google Gemini",
    features=PROVIDER_FEATURES,
    factory="core_gemini_plugin.provider:GeminiProvider",
    models=MODELS,
    default_model=DEFAULT_MODEL,
    credential_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    description="Google Gemini through the google-genai SDK (Gemini Developer API, v1).",
    distribution="core-gemini-plugin",
)


@hookimpl
def llm_core_register_providers(register: Callable[[ProviderSpec], None]) -> None:
    """Register the ``gemini`` provider."""
    register(SPEC)
