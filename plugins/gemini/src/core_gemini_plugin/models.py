"""The Gemini model catalogue: which model does what. Imports no SDK.

``extra`` keys used by the plugin:

- ``thinking``: ``"budget"`` (Gemini 2.5: ``thinking_budget``) or ``"level"`` (Gemini 3 and
  later: ``thinking_level``; a budget is still accepted);
- ``api``: ``"imagen"`` for Imagen models (``models.generate_images`` on Vertex AI) — other
  image models answer ``generate_content`` with ``response_modalities=["IMAGE"]``;
- ``native_decisions``: the model serves ``client.decisions.create``; every other text model
  answers decisions through structured output (probability kind ``"none"``);
- ``builtin_combined``: built-in tools together with function declarations or a JSON-schema
  answer in one request (Gemini 3 and later; earlier models refuse both combinations).

Built-in tools per model: Google Search, code execution and URL context on every text model;
Google Maps grounding on Gemini 2.5; file search on 2.5 Pro/Flash and Gemini 3 Pro/Flash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from llm_core.features import Feature
from llm_core.pricing import Prices, PriceTable, listed_prices
from llm_core.specs import ModelInfo

#: Where the list prices come from. Read on 2026-12-01 from third-party copies of Google's
#: pricing page (ai.google.dev/gemini-api/docs/pricing; no network here to read it first-hand):
#: standard paid tier, prompts up to 200k tokens, USD per million tokens (input, cached input,
#: output); thinking tokens are billed as output. Cached input is the context-caching price (the
#: cache's hourly storage is not a per-call cost); where no copy quoted one it is unset, and
#: cached tokens are then priced as input (an upper bound). Models without a figure we could
#: read carry no prices (cost unknown).
PRICE_SOURCE = "ai.google.dev/gemini-api/docs/pricing as quoted by third parties, read 2026-12-01 (unverified)"

_PRICES: PriceTable = {
    "gemini-2.5-flash": ("0.30", "0.03", "2.50"),
    "gemini-2.5-pro": ("1.25", "0.125", "10.00"),
    "gemini-2.5-flash-lite": ("0.10", None, "0.40"),
    "gemini-3-flash-preview": ("0.50", "0.05", "3.00"),
    "gemini-3.1-pro-preview": ("2.00", None, "12.00"),
    "gemini-3.1-flash-lite": ("0.25", None, "1.50"),
    "gemini-3.5-flash": ("1.50", "0.15", "9.00"),
}

#: Gemini Batch Mode charges half the list price for input and output tokens: Google's batch-mode
#: announcement ("priced at 50% less than the standard rate for a given model", Google Developers
#: Blog), as quoted by third parties (unverified, read 2026-12-01).
BATCH_FACTOR = "0.5"


#: Fees per use of the built-in tools (USD), from the same pricing page as quoted by third
#: parties (unverified, read 2026-12-01): Grounding with Google Search $35 / 1,000 grounded
#: prompts on Gemini 2.5 (counted once per answer that searched), $14 / 1,000 search queries on
#: Gemini 3 and later (counted per query); Grounding with Google Maps $25 / 1,000 grounded prompts
#: on Gemini 2.5; code execution and file search queries are billed as tokens only. The free
#: daily allowances are not counted: costs are at list price.
_FEES_25 = {"web_search": "0.035", "google_maps": "0.025", "code_execution": "0", "file_search": "0"}
_FEES_3 = {"web_search": "0.014", "code_execution": "0", "file_search": "0"}


def _prices(model_id: str, thinking: str) -> Prices | None:
    fees = _FEES_25 if thinking == "budget" else _FEES_3
    return listed_prices(_PRICES, model_id, source=PRICE_SOURCE, batch_factor=BATCH_FACTOR, tool_fees=fees)


TEXT_FEATURES = frozenset(
    {
        Feature.CHAT,
        Feature.COMPLETION,
        Feature.STREAMING,
        Feature.TOOLS,
        Feature.VISION,
        Feature.DOCUMENTS,
        Feature.JSON_MODE,
        Feature.THINKING,
        Feature.DECISION,
        Feature.BATCH,  # batch mode: batches.create
        Feature.TOKEN_COUNTING,  # models.count_tokens (countTokens), listed for every generateContent model
    }
)
IMAGE_MODEL_FEATURES = frozenset(
    {
        Feature.IMAGE,
        Feature.CHAT,
        Feature.COMPLETION,
        Feature.STREAMING,
        Feature.VISION,
        Feature.TOKEN_COUNTING,  # generateContent models: countTokens counts the chat turns they are sent
    }
)

DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_IMAGEN_MODEL = "imagen-4.0-generate-001"


#: Built-in tools of every text model: Google Search, code execution, URL context.
BUILTIN = frozenset({Feature.WEB_SEARCH, Feature.CODE_EXECUTION, Feature.URL_CONTEXT})


def _text(model_id: str, description: str, thinking: str, *more: Feature) -> ModelInfo:
    """A text model; Gemini 3 and later (thinking levels) also combine built-in tools with
    function declarations and structured output in one request (``builtin_combined``)."""
    extra = {"thinking": thinking, "builtin_combined": thinking == "level"}
    features = TEXT_FEATURES | BUILTIN | set(more)
    return ModelInfo(model_id, features, description, extra=extra, prices=_prices(model_id, thinking))


_MAPS, _FILES = Feature.GOOGLE_MAPS, Feature.FILE_SEARCH


MODELS: tuple[ModelInfo, ...] = (
    _text("gemini-2.5-flash", "Fast hybrid reasoning model, 1M context, thinking budgets.", "budget", _MAPS, _FILES),
    _text("gemini-2.5-pro", "Most capable 2.5 model for coding and complex reasoning.", "budget", _MAPS, _FILES),
    _text("gemini-2.5-flash-lite", "Smallest, most cost-effective 2.5 model.", "budget", _MAPS),
    _text("gemini-3-flash-preview", "Gemini 3 Flash (preview).", "level", _FILES),
    _text("gemini-3.1-pro-preview", "Gemini 3.1 Pro (preview): deep reasoning, multimodal.", "level", _FILES),
    _text("gemini-3.1-flash-lite", "Gemini 3.1 Flash-Lite: high-volume, low-cost.", "level"),
    _text("gemini-3.5-flash", "Gemini 3.5 Flash.", "level"),
    _text("gemini-3.8-flash", "Gemini 3.8 Flash: long-horizon agents and coding.", "level"),
    ModelInfo("gemini-2.5-flash-image", IMAGE_MODEL_FEATURES, "Native image generation and editing (1K)."),
    ModelInfo("gemini-3-pro-image", IMAGE_MODEL_FEATURES, "Gemini 3 Pro Image: up to 4K output."),
    ModelInfo("gemini-3.1-flash-image", IMAGE_MODEL_FEATURES, "Gemini 3.1 Flash Image."),
    ModelInfo(
        "imagen-4.0-generate-001", {Feature.IMAGE}, "Imagen 4 (Vertex AI predict endpoint).", extra={"api": "imagen"}
    ),
    ModelInfo(
        "imagen-4.0-fast-generate-001",
        {Feature.IMAGE},
        "Imagen 4 Fast (Vertex AI predict endpoint).",
        extra={"api": "imagen"},
    ),
    ModelInfo(
        "gemini-embedding-001",
        {Feature.EMBEDDINGS, Feature.BATCH},
        "Text embeddings (3072 dimensions, MRL-truncatable).",
    ),
    ModelInfo("gemini-embedding-2", {Feature.EMBEDDINGS, Feature.BATCH}, "Multimodal embeddings."),
    ModelInfo(
        "decisions-prerelease",
        {Feature.DECISION},
        "Native calibrated decisions (client.decisions).",
        extra={"native_decisions": True},
    ),
)

# Not counted: Imagen models (served by Vertex AI's predict endpoint, which has no countTokens) and
# the embedding models (the service counts their text with countTokens too, but count_tokens
# counts a chat request, with roles, that an embedding model is never sent).
PROVIDER_FEATURES = frozenset().union(*(m.features for m in MODELS))


#: What Vertex AI does not offer of the catalogue, and why (the ``vertex`` provider's spec and a
#: ``gemini`` provider switched to Vertex AI leave it out; asking for it says why).
VERTEX_LACKS: Mapping[Feature, str] = MappingProxyType(
    {
        Feature.BATCH: (
            "Vertex AI batch prediction reads its input from Cloud Storage or BigQuery and writes its output "
            "there, and llm-core's batch runner uploads through the Gemini Developer API's Files API; use the "
            "'gemini' provider (Developer API) for batch mode, or llm_core.batch.run(mode='local')"
        ),
        Feature.FILE_SEARCH: (
            "file search stores are the Gemini Developer API's (google-genai refuses the file_search tool "
            "outside Developer API mode); use the 'gemini' provider on the Developer API for it"
        ),
    }
)
#: Models not served on Vertex AI: the native decision API is the Developer API's (decisions
#: go through structured output on Vertex AI, probability kind "none").
VERTEX_MISSING_MODELS = frozenset(m.id for m in MODELS if m.extra.get("native_decisions"))


def on_vertex(models: Iterable[ModelInfo]) -> tuple[ModelInfo, ...]:
    """``models`` as Vertex AI serves them: same ids and prices (Google's Developer API list
    prices; Vertex AI bills its own), without :data:`VERTEX_LACKS` and :data:`VERTEX_MISSING_MODELS`."""
    return tuple(
        ModelInfo(m.id, m.features - VERTEX_LACKS.keys(), m.description, m.extra, m.prices)
        for m in models
        if m.id not in VERTEX_MISSING_MODELS
    )


VERTEX_MODELS = on_vertex(MODELS)
VERTEX_FEATURES = frozenset().union(*(m.features for m in VERTEX_MODELS))


def model_info(model: str) -> ModelInfo | None:
    """The catalogue entry for ``model`` (``models/`` prefix ignored)."""
    wanted = model.removeprefix("models/")
    return next((m for m in MODELS if m.id == wanted), None)


def is_imagen(model: str) -> bool:
    """Imagen models go to ``generate_images``; unknown ``imagen-*`` names count too."""
    info = model_info(model)
    if info is not None:
        return info.extra.get("api") == "imagen"
    return model.removeprefix("models/").startswith("imagen-")


def thinking_style(model: str) -> str | None:
    """``"budget"``, ``"level"`` or ``None`` (unknown model or one that does not think)."""
    info = model_info(model)
    return None if info is None else info.extra.get("thinking")
