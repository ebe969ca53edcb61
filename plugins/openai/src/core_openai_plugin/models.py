"""The OpenAI model catalogue: which model offers which feature. Imports no SDK.

Model ids follow the literals of the installed ``openai`` SDK (``openai/types/shared/chat_model.py``,
``embedding_model.py``, ``image_model.py``); models whose announced shutdown date has passed
(o4-mini, o3-mini, gpt-4.1-nano, o1, ...) are left out. ``extra`` carries the facts the request
mapper needs:

- ``reasoning``: a reasoning model (``reasoning`` options, encrypted reasoning items; OpenAI
  rejects ``temperature``/``top_p`` for it);
- ``native_decisions``: served by ``POST /v1/decisions`` (the SDK names ``gpt-6-luna`` only);
- ``dimensions`` / ``max_dimensions``: embedding size control;
- ``gpt_image``: an image model that always answers with base64 and takes ``output_format``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llm_core.features import Feature
from llm_core.pricing import Prices, PriceTable, listed_prices
from llm_core.specs import ModelInfo

#: Where the list prices come from. Read on 2026-12-01 from third-party copies of OpenAI's pricing
#: page (platform.openai.com/docs/pricing; no network here to read it first-hand): standard
#: processing, context under 270k tokens, USD per million tokens (input, cached input, output);
#: reasoning tokens are billed as output. Models without a figure we could read carry no prices.
PRICE_SOURCE = "platform.openai.com/docs/pricing as quoted by third parties, read 2026-12-01 (unverified)"

_PRICES: PriceTable = {
    "gpt-5.5": ("5.00", "0.50", "30.00"),
    "gpt-5.4": ("2.50", "0.25", "15.00"),
    "gpt-5.4-mini": ("0.75", "0.075", "4.50"),
    "gpt-5.4-nano": ("0.20", "0.02", "1.25"),
    "gpt-5.2": ("1.75", "0.175", "14.00"),
    "gpt-5.1": ("1.25", "0.125", "10.00"),
}

#: The OpenAI Batch API charges half the list price for input and output tokens: OpenAI's Batch
#: API guide (platform.openai.com/docs/guides/batch, a 50% discount), as quoted by third parties
#: (unverified, read 2026-12-01).
BATCH_FACTOR = "0.5"


#: Fees per use of the built-in tools (USD), from the "Built-in tools" table of the same pricing
#: page as quoted by third parties and OpenAI's community forum (unverified, read 2026-12-01):
#: web search $10.00 / 1k calls (search content tokens billed as input tokens), file search
#: $2.50 / 1k calls, code interpreter $0.03 per container (1 GB, the default).
TOOL_FEES = {"web_search": "0.01", "file_search": "0.0025", "code_execution": "0.03"}


def _prices(model_id: str) -> Prices | None:
    return listed_prices(_PRICES, model_id, source=PRICE_SOURCE, batch_factor=BATCH_FACTOR, tool_fees=TOOL_FEES)


#: Chat models without image input.
TEXT = frozenset(
    {
        Feature.CHAT,
        Feature.COMPLETION,
        Feature.STREAMING,
        Feature.TOOLS,
        Feature.JSON_MODE,
        Feature.DECISION,
        Feature.BATCH,  # the Batch API's /v1/responses
        Feature.TOKEN_COUNTING,  # POST /v1/responses/input_tokens counts a Responses request
    }
)
#: The built-in tools of the Responses API (web_search, code_interpreter, file_search,
#: image_generation, mcp), which every chat model of the catalogue is offered.
BUILTIN = frozenset(
    {Feature.WEB_SEARCH, Feature.CODE_EXECUTION, Feature.FILE_SEARCH, Feature.IMAGE_GENERATION, Feature.REMOTE_MCP}
)
#: Chat models that also read images and PDFs.
MULTIMODAL = TEXT | {Feature.VISION, Feature.DOCUMENTS} | BUILTIN
#: Reasoning models: multimodal plus reasoning summaries and (GPT-5 and later) custom tools.
REASONING = MULTIMODAL | {Feature.THINKING}

DEFAULT_MODEL = "gpt-5.4-mini"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
DEFAULT_IMAGE_MODEL = "gpt-image-2"
DECISION_MODEL = "gpt-6-luna"

_SHUTDOWN_2026_12 = "OpenAI announced its shutdown for 2026-12-11"
_SHUTDOWN_2027_01 = "OpenAI announced its shutdown for 2027-01-14"


def _reasoning(model_id: str, description: str, **extra: Any) -> ModelInfo:
    # custom (freeform) tools came with GPT-5: o3 has none
    features = REASONING | ({Feature.CUSTOM_TOOLS} if model_id.startswith("gpt-") else set())
    return ModelInfo(model_id, features, description, {"reasoning": True, **extra}, prices=_prices(model_id))


def _chat(model_id: str, description: str) -> ModelInfo:
    return ModelInfo(model_id, MULTIMODAL, description, {"reasoning": False})


CHAT_MODELS: tuple[ModelInfo, ...] = (
    _reasoning("gpt-5.4-mini", "GPT-5.4 mini: fast, low-cost reasoning model (default)"),
    _reasoning("gpt-6-astra", "GPT-6 Astra reasoning model"),
    _reasoning("gpt-6.2-astra", "GPT-6.2 Astra reasoning model"),
    _reasoning("gpt-6-sol", "GPT-6 Sol reasoning model"),
    _reasoning("gpt-6.1-sol", "GPT-6.1 Sol reasoning model"),
    _reasoning("gpt-6.2-sol", "GPT-6.2 Sol reasoning model"),
    _reasoning("gpt-6.1-terra", "GPT-6.1 Terra reasoning model"),
    _reasoning(DECISION_MODEL, "GPT-6 Luna: the model of the native Decisions API", native_decisions=True),
    _reasoning("gpt-5.6-sol", "GPT-5.6 Sol reasoning model"),
    _reasoning("gpt-5.6-terra", "GPT-5.6 Terra reasoning model"),
    _reasoning("gpt-5.6-luna", "GPT-5.6 Luna reasoning model"),
    _reasoning("gpt-5.5", "GPT-5.5 reasoning model"),
    _reasoning("gpt-5.4", "GPT-5.4 reasoning model"),
    _reasoning("gpt-5.4-nano", "GPT-5.4 nano (OpenAI announced its shutdown for 2027-04-01)"),
    _reasoning("gpt-5.2", "GPT-5.2 reasoning model"),
    _reasoning("gpt-5.1", "GPT-5.1 (OpenAI announced its shutdown for 2027-04-01)"),
    _reasoning("gpt-5", f"GPT-5 ({_SHUTDOWN_2026_12})"),
    _reasoning("gpt-5-mini", f"GPT-5 mini ({_SHUTDOWN_2026_12})"),
    _reasoning("gpt-5-nano", f"GPT-5 nano ({_SHUTDOWN_2026_12})"),
    _reasoning("o3", f"o3 reasoning model ({_SHUTDOWN_2026_12})"),
    _chat("gpt-4.1", f"GPT-4.1: non-reasoning, accepts temperature ({_SHUTDOWN_2027_01})"),
    _chat("gpt-4.1-mini", f"GPT-4.1 mini: non-reasoning ({_SHUTDOWN_2027_01})"),
    _chat("gpt-4o", f"GPT-4o: non-reasoning ({_SHUTDOWN_2027_01})"),
    _chat("gpt-4o-mini", f"GPT-4o mini: non-reasoning ({_SHUTDOWN_2027_01})"),
)

# Embedding and image models do not count tokens: /v1/responses/input_tokens counts the input of
# a Responses API request, and neither kind of model is served by the Responses API.
EMBEDDING_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        DEFAULT_EMBEDDING_MODEL,
        {Feature.EMBEDDINGS, Feature.BATCH},
        "1536 dimensions, shortenable",
        {"dimensions": True, "max_dimensions": 1536},
    ),
    ModelInfo(
        "text-embedding-3-large",
        {Feature.EMBEDDINGS, Feature.BATCH},
        "3072 dimensions, shortenable",
        {"dimensions": True, "max_dimensions": 3072},
    ),
    ModelInfo(
        "text-embedding-ada-002",
        {Feature.EMBEDDINGS, Feature.BATCH},
        "1536 dimensions, fixed",
        {"dimensions": False, "max_dimensions": 1536},
    ),
)

IMAGE_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(DEFAULT_IMAGE_MODEL, {Feature.IMAGE}, "GPT Image 2", {"gpt_image": True}),
    ModelInfo("gpt-image-1.5", {Feature.IMAGE}, "GPT Image 1.5", {"gpt_image": True}),
    ModelInfo("gpt-image-1-mini", {Feature.IMAGE}, "GPT Image 1 mini", {"gpt_image": True}),
    ModelInfo(
        "gpt-image-1",
        {Feature.IMAGE},
        "GPT Image 1 (shut down by OpenAI on 2026-10-23; kept for compatible servers)",
        {"gpt_image": True},
    ),
)

MODELS: tuple[ModelInfo, ...] = CHAT_MODELS + EMBEDDING_MODELS + IMAGE_MODELS

#: Every feature some model offers: the provider-level feature set.
PROVIDER_FEATURES: frozenset[Feature] = frozenset().union(*(m.features for m in MODELS))


def fact(info: ModelInfo | None, name: str, default: Any = None) -> Any:
    """A catalogue fact of ``info`` (``default`` for models missing from the catalogue)."""
    extra: Mapping[str, Any] = info.extra if info is not None else {}
    return extra.get(name, default)
