"""Named endpoints of the OpenAI plugin: OpenAI-compatible servers, each its own provider.

:func:`endpoint_spec` is the plugin's endpoint factory (named by its spec): a
``[providers.NAME]`` table with ``plugin = "openai"`` (or ``registry.add_endpoint``) becomes the
spec of provider ``NAME``, speaking the Chat Completions API (``api = "chat_completions"``, the
default for an endpoint) or the Responses API (``api = "responses"``). :data:`PRESETS` hold what
is known of common servers. Light: imports neither the SDK nor the provider.

Where each preset's facts come from (no network here to try the hosted services):

- base URLs, key variables: each server's documentation of its OpenAI-compatible API;
- reasoning fields: the recorded traffic of pydantic-ai's tests (``reasoning_content``: DeepSeek;
  ``reasoning``: Ollama, Groq, OpenRouter; ``reasoning_details``: OpenRouter) and the servers'
  documentation (vLLM and llama.cpp server send ``reasoning_content`` when run with a reasoning
  parser);
- quirks: Groq's structured-outputs documentation (no ``json_schema`` together with tool use or
  streaming), DeepSeek's JSON Output documentation (``json_object`` only), OpenAI's Chat
  Completions reference (``max_completion_tokens``; ``file`` parts);
- features: what each server's API has (DeepSeek and Groq have no ``/embeddings``; DeepSeek's
  chat models read no images). Vision, tools and embeddings on local servers depend on the model
  loaded: the preset claims them, ``features`` or a model's ``features`` narrow them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from llm_core.config import check_names, hide_secret
from llm_core.endpoints import EndpointSettings
from llm_core.errors import ConfigurationError
from llm_core.features import Feature, parse_features
from llm_core.specs import ModelInfo, ProviderSpec

CHAT_COMPLETIONS = "chat_completions"
RESPONSES = "responses"
FACTORIES = {
    CHAT_COMPLETIONS: "core_openai_plugin.chat_provider:ChatCompletionsProvider",
    RESPONSES: "core_openai_plugin.provider:OpenAIProvider",
}
#: What each dialect can offer (an endpoint, its preset and its models narrow it).
DIALECT_FEATURES = {
    CHAT_COMPLETIONS: frozenset(
        {
            Feature.CHAT,
            Feature.COMPLETION,
            Feature.STREAMING,
            Feature.TOOLS,
            Feature.JSON_MODE,
            Feature.VISION,
            Feature.DOCUMENTS,
            Feature.EMBEDDINGS,
            Feature.DECISION,
            Feature.THINKING,
            Feature.WEB_SEARCH,  # web_search_options, OpenAI's search models only (its preset)
        }
    ),
}
DIALECT_FEATURES[RESPONSES] = DIALECT_FEATURES[CHAT_COMPLETIONS]
_LOCAL = DIALECT_FEATURES[CHAT_COMPLETIONS] - {Feature.DOCUMENTS, Feature.WEB_SEARCH}


@dataclass(frozen=True)
class Preset:
    """A known server: display name, default base URL, key variables (``keyless``: a key is
    optional), dialect, features and request quirks (:class:`~core_openai_plugin.chat_mapper.Quirks`
    fields)."""

    name: str
    base_url: str
    key_env: tuple[str, ...] = ()
    keyless: bool = False
    api: str = CHAT_COMPLETIONS
    features: frozenset[Feature] = _LOCAL
    quirks: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        "ollama": Preset("Ollama", "http://localhost:11434/v1", keyless=True),
        "vllm": Preset("vLLM", "http://localhost:8000/v1", ("VLLM_API_KEY",), keyless=True),
        "llamacpp": Preset("llama.cpp server", "http://localhost:8080/v1", ("LLAMA_API_KEY",), keyless=True),
        "lmstudio": Preset("LM Studio", "http://localhost:1234/v1", keyless=True),
        "litellm": Preset("LiteLLM proxy", "http://localhost:4000/v1", ("LITELLM_API_KEY",), keyless=True),
        "openrouter": Preset("OpenRouter", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",)),
        "groq": Preset(
            "Groq",
            "https://api.groq.com/openai/v1",
            ("GROQ_API_KEY",),
            features=_LOCAL - {Feature.EMBEDDINGS},
            quirks=MappingProxyType({"json_schema_with_tools": False}),
        ),
        "deepseek": Preset(
            "DeepSeek",
            "https://api.deepseek.com",
            ("DEEPSEEK_API_KEY",),
            features=_LOCAL - {Feature.EMBEDDINGS, Feature.VISION},
            quirks=MappingProxyType({"json_schema": False}),
        ),
        "together": Preset("Together AI", "https://api.together.xyz/v1", ("TOGETHER_API_KEY",)),
        "mistral": Preset("Mistral AI", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
        "openai": Preset(
            "OpenAI Chat Completions",
            "https://api.openai.com/v1",
            ("OPENAI_API_KEY",),
            features=DIALECT_FEATURES[CHAT_COMPLETIONS],
            quirks=MappingProxyType({"max_tokens_field": "max_completion_tokens", "documents": True}),
        ),
    }
)


def preset_of(name: str, given: str | None) -> Preset | None:
    """The preset an endpoint names (an unknown name is a :class:`ConfigurationError` naming the
    closest preset)."""
    if given is None:
        return None
    check_names(
        [given], PRESETS, what="preset", where=f" for endpoint {name!r}", provider=name, error=ConfigurationError
    )
    return PRESETS[given]


def endpoint_spec(name: str, settings: EndpointSettings) -> ProviderSpec:
    """The spec of endpoint ``name``: its dialect's provider class, its features (dialect ∩
    preset ∩ ``features``), its catalogue (``models``, each narrowed by its own ``features``),
    its key variables and whether it needs a key, and the settings its providers are built with
    (the base URL: the table's, else the preset's)."""
    preset = preset_of(name, settings.preset)
    api = settings.api or (preset.api if preset else CHAT_COMPLETIONS)
    check_names([api], FACTORIES, what="api", where=f" for endpoint {name!r}", provider=name, error=ConfigurationError)
    extra = settings.model_extra or {}
    base_url = extra.get("base_url") or (preset.base_url if preset else None)
    if not base_url:
        raise ConfigurationError(
            f"endpoint {name!r} needs a base_url (or a preset: {', '.join(PRESETS)})", provider=name
        )
    features = DIALECT_FEATURES[api] & (preset.features if preset else _LOCAL)
    if settings.features is not None:
        features &= parse_features(settings.features)
    models = tuple(
        ModelInfo(
            entry.id, features & parse_features(entry.features) if entry.features else features, entry.description
        )
        for entry in settings.model_entries()
    )
    default_model = extra.get("model") or (models[0].id if models else None)
    if models and default_model not in {model.id for model in models}:
        models = (*models, ModelInfo(str(default_model), features))
    key_env = settings.key_variables or (preset.key_env if preset else ())
    keyless = extra.get("api_key") is None and (not key_env or (preset is not None and preset.keyless))
    shown = preset.name if preset else name
    return ProviderSpec(
        identifier=name,
        name=shown,
        features=features,
        factory=FACTORIES[api],
        models=models,
        default_model=default_model,
        credential_env=key_env,
        requires_credentials=not keyless,
        description=f"{shown}: the {'Chat Completions' if api == CHAT_COMPLETIONS else 'Responses'} API",
        settings={"base_url": hide_secret("base_url", base_url), "api": api},
    )
