"""What a router asks of a registry, which providers it tries for a call and in which order, and
when it moves on to the next one. The router (:mod:`llm_core.routing.router`) runs these rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from llm_core.builtin_tools import features_of_call
from llm_core.errors import LLMError
from llm_core.features import Feature
from llm_core.operation import Operation
from llm_core.pricing import CHEAPEST
from llm_core.provider.base import BaseProvider
from llm_core.registry.candidates import Candidate, fits, no_match
from llm_core.responses import Usage
from llm_core.routing.cost_estimate import estimate_call
from llm_core.specs import ProviderSpec

#: A call as a router received it: its positional arguments and its keyword options.
CallArguments = tuple[tuple[Any, ...], Mapping[str, Any]]


class ProviderSource(Protocol):
    """What a router needs of a registry (:class:`llm_core.registry.registry.Registry` is one)."""

    def providers(self) -> list[ProviderSpec]: ...

    def candidates(
        self,
        *features: Feature | str,
        prefer: Sequence[str] | str | None = None,
        model: str | None = None,
        estimate: Usage | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[Candidate]: ...

    def get(self, identifier: str, **config: Any) -> BaseProvider: ...


def should_fall_back(error: LLMError) -> bool:
    """Fall back on transient failures only; a bad request would fail everywhere."""
    return error.fallback


def call_candidates(
    source: ProviderSource,
    features: frozenset[Feature],
    prefer: Sequence[str] | str | None,
    op: Operation | None = None,
    call: CallArguments | None = None,
    *,
    model: str | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Candidate]:
    """The providers to try for a call of ``op`` (its feature and those of its built-in and
    custom tools beside the router's ``features``), best first. With ``prefer="cheapest"`` and
    the ``call`` at hand they are ordered by the expected cost of that very call (see
    :mod:`llm_core.routing.cost_estimate`); without it, of the registry's nominal request. A call
    that names its model (``model=`` among its options, or ``model``) goes only to providers that
    offer that model: in their catalogue, or by their ``unknown_model_features`` setting (in
    ``settings``, the router's per-provider settings, or the config file); see
    :func:`~llm_core.registry.candidates.fits`. Raises
    :class:`~llm_core.errors.NoMatchingProviderError`, naming the model, when none fits."""
    wanted = features | {op.feature} if op is not None else features
    if call is not None:
        wanted |= features_of_call(*call)
    if model is None and call is not None:
        model = _requested_model(call[1])
    estimate = estimate_call(op, *call) if op is not None and call is not None and prefer == CHEAPEST else None
    found = source.candidates(*wanted, prefer=prefer, model=model, estimate=estimate, settings=settings)
    if not found:
        raise no_match(source.providers(), wanted, model)
    if model is None:
        return found
    # the call passes its model itself: each provider is built as for a call naming none
    return [replace(c, model=_built_model(c.spec, wanted)) for c in found]


def _requested_model(options: Mapping[str, Any]) -> str | None:
    """The model a call names (its ``model=`` option), if it names one."""
    model = options.get("model")
    return model if isinstance(model, str) and model.strip() else None


def _built_model(spec: ProviderSpec, wanted: frozenset[Feature]) -> str | None:
    fit = fits(spec, wanted, None)
    return fit if isinstance(fit, str) else None
