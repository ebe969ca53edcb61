"""List prices of models and the cost of a call.

A :class:`Prices` rides on a catalogue's :class:`~llm_core.specs.ModelInfo`; a ``[prices.MODEL]``
table of the config file overrides it field by field. Costs are :class:`~decimal.Decimal` US
dollars, ``None`` when a needed price is unknown (an unknown price is never taken as zero).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_core.errors import ConfigurationError

if TYPE_CHECKING:  # specs imports this module: discovery must not import pydantic
    from llm_core.responses import Usage

_MILLION = Decimal(1_000_000)

#: ``prefer=`` value that orders candidates by expected cost (``Registry.candidates``).
CHEAPEST = "cheapest"
#: Answer tokens expected when a request does not cap them (``max_tokens``).
EXPECTED_ANSWER_TOKENS = 500


@dataclass(frozen=True, slots=True)
class Prices:
    """US dollars per million tokens (``input``, ``cached_input``, ``output``, ``reasoning``)
    and per generated image (``image``); per use of a built-in tool that bills one
    (``web_search``, ``code_execution``, ``file_search``, ``google_maps``: what a provider bills
    per call, query or container, counted in :attr:`~llm_core.responses.Usage.tool_uses`; ``0``
    for a tool billed by its tokens only). ``reasoning`` unset means reasoning tokens are billed
    at ``output`` (as both OpenAI and Gemini bill them); ``cached_input`` unset means cached
    tokens cost ``input``. ``batch_factor`` is the share of these prices a provider's batch API
    charges (``0.5``: half price; unset: a batch item's cost is unknown). ``source`` says where
    and when the figures were read."""

    input: Decimal | None = None
    cached_input: Decimal | None = None
    output: Decimal | None = None
    reasoning: Decimal | None = None
    image: Decimal | None = None
    web_search: Decimal | None = None
    code_execution: Decimal | None = None
    file_search: Decimal | None = None
    google_maps: Decimal | None = None
    batch_factor: Decimal | None = None
    source: str = ""

    @classmethod
    def of(cls, source: str = "", **prices: str | float | Decimal | None) -> Prices:
        """Prices from numbers or strings (``Prices.of(input="0.30", output="2.50")``)."""
        return cls(**{name: _decimal(name, value) for name, value in prices.items()}, source=source)

    def cost(self, usage: Usage, images: int = 0, *, batch: bool = False) -> Decimal | None:
        """What ``usage`` (and ``images`` generated images) cost; ``None`` if a price it needs is
        unknown. ``batch``: the call was an item of a provider batch job (``batch_factor`` applies).

        The prompt's cached tokens (``usage.cached_tokens``, part of ``prompt_tokens``) are billed
        at ``cached_input``, the rest of the prompt at ``input``. Each use of a built-in tool with
        a fee field adds its fee (unknown fee: unknown cost); other tools bill tokens only.
        """
        total = Decimal(0)
        thinking = usage.thinking_tokens or 0
        cached = min(usage.cached_tokens or 0, usage.prompt_tokens)
        for count, price in (
            (usage.prompt_tokens - cached, self.input),
            (cached, self.cached_input if self.cached_input is not None else self.input),
            (usage.completion_tokens, self.output),
            (thinking, self.reasoning if self.reasoning is not None else self.output),
        ):
            if count:
                if price is None:
                    return None
                total += count * price / _MILLION
        if images:
            if self.image is None:
                return None
            total += images * self.image
        uses = {tool: count for tool, count in (usage.tool_uses or {}).items() if tool in TOOL_FEES and count}
        for tool, count in uses.items():
            fee = getattr(self, tool)
            if fee is None:
                return None
            total += count * fee
        if not (usage.prompt_tokens or usage.completion_tokens or thinking or images or uses):
            return None  # nothing was counted: the cost is unknown, not zero
        if batch:
            return None if self.batch_factor is None else total * self.batch_factor
        return total


_FIELDS = tuple(f.name for f in fields(Prices) if f.name != "source")
#: The built-in tools priced per use (a field of :class:`Prices` each).
TOOL_FEES = ("web_search", "code_execution", "file_search", "google_maps")


def _decimal(name: str, value: Any) -> Decimal | None:
    if value is None:
        return None
    if name not in _FIELDS:
        raise ConfigurationError(f"unknown price {name!r}; use one of {', '.join(_FIELDS)}")
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        raise ConfigurationError(f"price {name!r} must be a number, not {value!r}") from None
    if not price.is_finite() or price < 0:
        raise ConfigurationError(f"price {name!r} must be a non-negative number, not {value!r}")
    return price


#: A catalogue's list prices: model id -> (input, cached input or ``None``, output), US dollars
#: per million tokens, as text.
PriceTable = Mapping[str, tuple[str, str | None, str]]


def listed_prices(
    table: PriceTable,
    model_id: str,
    *,
    source: str,
    batch_factor: str | None = None,
    tool_fees: Mapping[str, str | None] | None = None,
) -> Prices | None:
    """``model_id``'s prices from a catalogue's ``table`` (and its per-use ``tool_fees``, by
    tool); ``None`` when the table lists none."""
    if model_id not in table:
        return None
    input_, cached, output = table[model_id]
    return Prices.of(
        source, input=input_, cached_input=cached, output=output, batch_factor=batch_factor, **(tool_fees or {})
    )


def effective_prices(model: str, catalogue: Prices | None, path: Path | None = None) -> Prices | None:
    """``catalogue`` with the config file's ``[prices."MODEL"]`` fields laid over it."""
    from llm_core.config import load_config_file

    table = load_config_file(path).get("prices", {})
    override = table.get(model.removeprefix("models/")) if isinstance(table, Mapping) else None
    if not isinstance(override, Mapping):
        return catalogue
    given = {name: _decimal(name, value) for name, value in override.items()}
    base = catalogue or Prices()
    return replace(base, **given, source=f"config file [prices.{model}]")


def nominal_usage() -> Usage:
    """The request ``prefer="cheapest"`` prices when it knows none: 1,000 prompt and 500 answer tokens."""
    from llm_core.responses import Usage

    return Usage(prompt_tokens=1000, completion_tokens=EXPECTED_ANSWER_TOKENS)
