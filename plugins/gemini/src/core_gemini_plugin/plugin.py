"""Registers the Gemini providers with llm-core. Light: imports neither the SDK nor the provider.

Two identifiers, one class: ``gemini`` talks to the Gemini Developer API unless its settings or
google-genai's environment variables choose Vertex AI (``vertexai=True``,
``GOOGLE_GENAI_USE_VERTEXAI=true``), and ``vertex`` always talks to Vertex AI, so that a router
can fall back from one to the other.
"""

from __future__ import annotations

from collections.abc import Callable

from core_gemini_plugin.backend import VERTEX_HELP, gemini_credentials_found, vertex_credentials_found
from core_gemini_plugin.models import DEFAULT_MODEL, MODELS, PROVIDER_FEATURES, VERTEX_FEATURES, VERTEX_MODELS
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
    description="Google Gemini through the google-genai SDK (Gemini Developer API, v1; Vertex AI when configured).",
    distribution="core-gemini-plugin",
    credential_check=gemini_credentials_found,
    credential_help=(
        "set GEMINI_API_KEY or GOOGLE_API_KEY; for Vertex AI, GOOGLE_GENAI_USE_VERTEXAI=true with "
        "GOOGLE_CLOUD_PROJECT and application default credentials (or see the 'vertex' provider)"
    ),
)

VERTEX_SPEC = ProviderSpec(
    identifier="vertex",
    name="Google Gemini on Vertex AI",
    features=VERTEX_FEATURES,
    factory="core_gemini_plugin.provider:VertexProvider",
    models=VERTEX_MODELS,
    default_model=DEFAULT_MODEL,
    credential_env=(),  # the key variables hold Developer API keys unless the environment switches to Vertex AI
    description="Google Gemini on Vertex AI through the google-genai SDK (project and location, or express mode).",
    distribution="core-gemini-plugin",
    credential_check=vertex_credentials_found,
    credential_help=VERTEX_HELP,
)


@hookimpl
def llm_core_register_providers(register: Callable[[ProviderSpec], None]) -> None:
    """Register the ``gemini`` and ``vertex`` providers."""
    register(SPEC)
    register(VERTEX_SPEC)
