"""Which registered providers fit a set of features, best first, and why none does.

Pure functions over provider specs: the registry ranks with them for ``select()``, the router
for its fallback order. Light: no Pydantic, no provider code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llm_core.errors import NoMatchingProviderError
from llm_core.features import Feature
from llm_core.specs import ProviderSpec


@dataclass(frozen=True)
class Candidate:
    """A provider (and model) that offers the requested features, and why it ranks where it does."""

    spec: ProviderSpec
    model: str | None
    credentials: bool
    rank: int
    reasons: tuple[str, ...] = ()

    @property
    def identifier(self) -> str:
        return self.spec.identifier


def fits(spec: ProviderSpec, wanted: frozenset[Feature], model: str | None) -> str | bool | None:
    """The model to use when ``spec`` fits (``None`` = provider default), ``False`` if not."""
    if not wanted <= spec.features:
        return False
    if model is not None:
        info = spec.model(model)
        if info is not None:
            return model if wanted <= info.features else False
        return False if spec.models else model
    default = spec.model(spec.default_model) if spec.default_model else None
    if default is None or wanted <= default.features:
        return spec.default_model
    for info in spec.models:
        if wanted <= info.features:
            return info.id
    return False


def rank(
    specs: Sequence[ProviderSpec], wanted: frozenset[Feature], order: Sequence[str], model: str | None
) -> list[Candidate]:
    """Every fitting spec as a candidate, best first: credentials present, then the preferred
    ``order``, then registration order."""
    found: list[Candidate] = []
    for spec in specs:
        fit = fits(spec, wanted, model)
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
        reasons.append(
            "credentials present" if has_key else f"no credentials ({' / '.join(spec.credential_env) or 'key'} not set)"
        )
        found.append(Candidate(spec, chosen_model, has_key, position, tuple(reasons)))
    # A provider that can be used (credentials present) beats one that cannot; among usable
    # ones the preference order decides, then registration order (sort is stable).
    found.sort(key=lambda c: (not c.credentials, c.rank))
    return found


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
