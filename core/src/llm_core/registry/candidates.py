"""Which registered providers fit a set of features, best first, and why none does.

Pure functions over provider specs: the registry ranks with them for ``select()``, the router
for its fallback order. Light: no Pydantic, no provider code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_core.config import provider_section
from llm_core.errors import NoMatchingProviderError
from llm_core.features import Feature, parse_features
from llm_core.pricing import effective_prices, nominal_usage
from llm_core.specs import ProviderSpec

if TYPE_CHECKING:
    from llm_core.responses import Usage


@dataclass(frozen=True)
class Candidate:
    """A provider (and model) that offers the requested features, and why it ranks where it does."""

    spec: ProviderSpec
    model: str | None
    credentials: bool
    rank: int
    reasons: tuple[str, ...] = ()
    #: With ``prefer="cheapest"``: the expected cost of the request on this candidate (None: unknown).
    expected_cost: Decimal | None = None

    @property
    def identifier(self) -> str:
        return self.spec.identifier


def fits(
    spec: ProviderSpec, wanted: frozenset[Feature], model: str | None, unknown: frozenset[Feature] | None = None
) -> str | bool | None:
    """The model to use when ``spec`` fits (``None`` = provider default), ``False`` if not.

    A provider offers ``model`` when its catalogue lists it (with the ``wanted`` features), when
    it has no catalogue, or when its settings declare what models missing from its catalogue
    offer (``unknown``: see :func:`unknown_model_features`) and that covers ``wanted``. A model
    of another provider's catalogue is never sent to one that merely accepts any name."""
    if not wanted <= spec.features:
        return False
    if model is not None:
        info = spec.model(model)
        if info is not None:
            return model if wanted <= info.features else False
        if not spec.models or (unknown is not None and wanted <= unknown):
            return model
        return False
    default = spec.model(spec.default_model) if spec.default_model else None
    if default is None or wanted <= default.features:
        return spec.default_model
    for info in spec.models:
        if wanted <= info.features:
            return info.id
    return False


def rank(
    specs: Sequence[ProviderSpec],
    wanted: frozenset[Feature],
    order: Sequence[str],
    model: str | None,
    cheapest: Usage | None = None,
    unknown: Mapping[str, frozenset[Feature] | None] | None = None,
) -> list[Candidate]:
    """Every fitting spec as a candidate, best first: credentials present, then the preferred
    ``order``, then registration order. With ``cheapest`` (an expected usage), usable candidates
    are ordered by its cost at their model's prices first: unknown prices last, ties by ``order``.
    ``unknown``: per identifier, what its settings give models missing from its catalogue."""
    found: list[Candidate] = []
    for spec in specs:
        fit = fits(spec, wanted, model, (unknown or {}).get(spec.identifier))
        if fit is False:
            continue
        chosen_model = fit if isinstance(fit, str) else None
        has_key = spec.credentials_present()
        position = order.index(spec.identifier) if spec.identifier in order else len(order)
        reasons = [
            f"offers {', '.join(sorted(f.value for f in wanted)) or 'any feature'}"
            + (f" with model {chosen_model}" if chosen_model else "")
        ]
        if spec.identifier in order:
            reasons.append(f"preference #{position + 1}")
        missing = spec.credential_help or f"{' / '.join(spec.credential_env) or 'key'} not set"
        reasons.append("credentials present" if has_key else f"no credentials ({missing})")
        cost = None
        if cheapest is not None:
            cost = expected_cost(spec, chosen_model or spec.default_model, cheapest)
            reasons.append(f"expected cost ${cost}" if cost is not None else "no prices (cost unknown)")
        found.append(Candidate(spec, chosen_model, has_key, position, tuple(reasons), cost))
    # A provider that can be used (credentials present) beats one that cannot; among usable
    # ones the cost (when asked for) and the preference order decide, then registration order
    # (sort is stable).
    if cheapest is not None:
        found.sort(key=lambda c: (not c.credentials, c.expected_cost is None, c.expected_cost or 0, c.rank))
    else:
        found.sort(key=lambda c: (not c.credentials, c.rank))
    return found


def unknown_model_features(spec: ProviderSpec, settings: Mapping[str, Any] | None = None) -> frozenset[Feature] | None:
    """What the ``unknown_model_features`` setting of ``spec``'s provider gives a model missing
    from its catalogue: from ``settings`` (what the provider is built with, e.g. a router's
    settings for it), else from its ``[providers.NAME]`` table of the config file; ``None`` when
    neither sets it."""
    given = settings or {}
    value = given.get("unknown_model_features")
    if value is None:
        config_file = given.get("config_file")
        section = provider_section(spec.identifier, Path(config_file) if config_file else None)
        value = section.get("unknown_model_features")
    return None if value is None else parse_features(value) & spec.features


def expected_cost(spec: ProviderSpec, model: str | None, usage: Usage | None = None) -> Decimal | None:
    """What ``usage`` (a nominal request by default) costs on ``model`` of ``spec``, at its
    catalogue prices with the config file's overrides; None when unknown."""
    if model is None:
        return None
    info = spec.model(model)
    prices = effective_prices(model, info.prices if info else None)
    return prices.cost(usage or nominal_usage()) if prices else None


def no_match(specs: Sequence[ProviderSpec], wanted: frozenset[Feature], model: str | None) -> NoMatchingProviderError:
    """The error for features that no spec (or none together) offers, naming what is missing."""
    if not specs:
        return NoMatchingProviderError(
            "no providers are registered: install a plugin (pip install core-gemini-plugin or core-openai-plugin)",
            missing=sorted(f.value for f in wanted),
        )
    offered = set().union(*(_offered(s, model) for s in specs))
    missing = sorted(f.value for f in wanted - offered)
    names = ", ".join(sorted(f.value for f in wanted))
    where = f" with model {model!r}" if model else ""
    if missing:
        return NoMatchingProviderError(
            f"no registered provider{where} supports {', '.join(missing)} (asked for {names}; "
            f"registered: {', '.join(s.identifier for s in specs)})",
            missing=missing,
        )
    return NoMatchingProviderError(
        f"no single provider{where} supports all of {names}; each is offered somewhere, but not together",
        missing=[],
    )


def _offered(spec: ProviderSpec, model: str | None) -> frozenset[Feature]:
    """What ``spec`` can serve at all (for ``model`` when given): its models' features, or the
    provider-level ones when it has no catalogue (or ``model`` is not in it)."""
    if model is not None:
        info = spec.model(model)
        if info is not None:
            return info.features & spec.features
        return frozenset() if spec.models else spec.features
    if not spec.models:
        return spec.features
    return frozenset().union(*(m.features for m in spec.models)) & spec.features
