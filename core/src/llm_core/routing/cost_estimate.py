"""The expected size of one call, so that a router with ``prefer="cheapest"`` can order its
providers by what that call will cost at each one's prices (see docs/observability.md).

Nothing is tokenised (no provider's tokenizer is at hand, and routing must stay cheap): the
figures follow documented rules, the same for every candidate, so they rank rather than bill.

- **Prompt tokens**: the characters of every text the call sends, divided by
  :data:`CHARS_PER_TOKEN` and rounded up. Those texts are the messages or prompt (with their
  roles), ``system=``, the tools (names, descriptions, parameter schemas), the JSON schema of
  ``generate_json``, a decision's subject and questions, an embedding's input; mapping keys
  count too (a schema's property names are text the model reads). Each image adds
  :data:`IMAGE_TOKENS`; each document :data:`DOCUMENT_PAGE_TOKENS` per started
  :data:`DOCUMENT_PAGE_BYTES` of its data (one page when it is a URL).
- **Answer tokens**: the call's ``max_tokens`` (or its ``Prompt``'s), else
  :data:`~llm_core.pricing.EXPECTED_ANSWER_TOKENS`; none for embeddings and image generation
  (no catalogue lists per-image prices, so an image is ranked by its prompt).
- **Reasoning tokens**, only when the call asks for ``thinking``: its ``budget`` when positive,
  else as many as the answer tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from llm_core.features import Feature
from llm_core.messages import DocumentPart, ImagePart, TextPart
from llm_core.operation import Cost, Operation
from llm_core.operations import find
from llm_core.pricing import EXPECTED_ANSWER_TOKENS
from llm_core.responses import Usage

#: Characters per token: "a token is equivalent to about 4 characters" (Gemini,
#: ai.google.dev/gemini-api/docs/tokens); OpenAI's help on tokens gives the same ratio for English.
CHARS_PER_TOKEN = 4
#: Tokens per image: a round upper figure for a photo of about a megapixel (Gemini counts 258
#: tokens per 768x768 tile, same page; OpenAI's vision guide 85 + 170 per 512x512 tile in high
#: detail, 765 for 1024x1024).
IMAGE_TOKENS = 1000
#: Tokens per document page, "each document page is equivalent to 258 tokens"
#: (ai.google.dev/gemini-api/docs/document-processing), and the bytes taken as one page.
DOCUMENT_PAGE_TOKENS = 258
DOCUMENT_PAGE_BYTES = 50_000

#: Keyword options whose text is sent to the model (the rest are settings).
SENT_OPTIONS = ("system", "tools", "response_schema")
#: Fields of typed request objects (a ``Prompt``) that are settings, not text sent.
SETTING_FIELDS = frozenset({"model", "temperature", "max_tokens"})


def estimate_call(operation: str | Operation, args: tuple[Any, ...], options: Mapping[str, Any]) -> Usage:
    """The expected usage of the router call ``operation(*args, **options)`` (rules above)."""
    op = find(operation)
    sent = [*args, *(options[name] for name in SENT_OPTIONS if name in options)]
    chars, media = 0, 0
    if op.feature is Feature.VISION and args:  # analyze_image: its first argument is the image(s)
        images = args[0] if isinstance(args[0], list | tuple) else [args[0]]
        chars, media = _sum(_image_or_text(item) for item in images)
        sent = sent[1:]
    more_chars, more_media = _sum(_measure(value) for value in sent)
    prompt = math.ceil((chars + more_chars) / CHARS_PER_TOKEN) + media + more_media
    answer = _answer_tokens(args, options) if op.cost is Cost.TOKENS else 0
    return Usage(prompt_tokens=prompt, completion_tokens=answer, thinking_tokens=_thinking(options, answer))


def document_tokens(size: int | None) -> int:
    """Tokens for a document of ``size`` bytes (``None``: a URL, one page)."""
    return DOCUMENT_PAGE_TOKENS * max(1, math.ceil((size or 0) / DOCUMENT_PAGE_BYTES))


def _answer_tokens(args: tuple[Any, ...], options: Mapping[str, Any]) -> int:
    cap = options.get("max_tokens")
    if cap is None and args:
        cap = getattr(args[0], "max_tokens", None)  # a Prompt carries its own
    return cap if isinstance(cap, int) and cap > 0 else EXPECTED_ANSWER_TOKENS


def _thinking(options: Mapping[str, Any], answer: int) -> int | None:
    thinking = options.get("thinking")
    if thinking is None or thinking is False:
        return None
    budget = thinking.get("budget") if isinstance(thinking, Mapping) else getattr(thinking, "budget", None)
    return budget if isinstance(budget, int) and budget > 0 else answer


def _image_or_text(item: Any) -> tuple[int, int]:
    """An ``analyze_image`` input: a text part, else an image (bytes, a URL, an ImagePart)."""
    return (len(item.text), 0) if isinstance(item, TextPart) else (0, IMAGE_TOKENS)


def _measure(value: Any) -> tuple[int, int]:
    """``(characters, media tokens)`` of one value sent to the model."""
    if value is None or isinstance(value, bool):
        return 0, 0
    if isinstance(value, str):
        return len(value), 0
    if isinstance(value, bytes | bytearray | memoryview | ImagePart):
        return 0, IMAGE_TOKENS
    if isinstance(value, DocumentPart):
        return 0, document_tokens(value.size if value.data is not None else None)
    if isinstance(value, Mapping):
        return _mapping(value)
    if isinstance(value, list | tuple | set | frozenset):
        return _sum(_measure(item) for item in value)
    if isinstance(value, type) and hasattr(value, "model_json_schema"):  # a Pydantic schema class
        return _measure(value.model_json_schema())
    if hasattr(value, "__pydantic_fields__"):  # a typed request object: its values, not field names
        return _sum(_measure(item) for name, item in vars(value).items() if name not in SETTING_FIELDS)
    if callable(value):  # a tool's handler runs here, it is never sent
        return 0, 0
    return len(str(value)), 0


def _mapping(value: Mapping[Any, Any]) -> tuple[int, int]:
    """A mapping: a part given as ``{"type": "image" | "document", ...}``, else keys and values."""
    kind = value.get("type")
    if kind == "image":
        return 0, IMAGE_TOKENS
    if kind == "document":
        data = value.get("data")
        size = len(data) if isinstance(data, bytes) else len(data) * 3 // 4 if isinstance(data, str) else None
        return 0, document_tokens(size)
    return _sum((len(str(key)) + chars, media) for key, item in value.items() for chars, media in [_measure(item)])


def _sum(pairs: Any) -> tuple[int, int]:
    chars, media = 0, 0
    for more_chars, more_media in pairs:
        chars += more_chars
        media += more_media
    return chars, media
