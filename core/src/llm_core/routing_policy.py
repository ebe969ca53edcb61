"""What a router asks of a registry, which providers it tries for a call and in which order, and
when it moves on to the next one. The router (:mod:`llm_core.routing`) runs these rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from llm_core.candidates import Candidate, no_match
from llm_core.cost_estimate import estimate_call
from llm_core.errors import LLMError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.pricing import CHEAPEST
from llm_core.provider import BaseProvider
from llm_core.responses import Usage
from llm_core.specs import ProviderSpec

IfaceT = TypeVar("IfaceT")

#: A call as a router received it: its positional arguments and its keyword options.
CallArguments = tuple[tuple[Any, ...], Mapping[str, Any]]


class ProviderSource(Protocol):
    """What a router needs of a registry (:class:`llm_core.registry.Registry` is one)."""

    def providers(self) -> list[ProviderSpec]: ...

    def candidates(
        self,
        *features: Feature | str,
        prefer: Sequence[str] | str | None = None,
        model: str | None = None,
        estimate: Usage | None = None,
    ) -> list[Candidate]: ...

    def get(self, identifier: str, **config: Any) -> BaseProvider: ...


#: Extra features a call needs beyond the router's own.
CALL_FEATURES: dict[str, frozenset[Feature]] = {
    "chat_completion": frozenset({Feature.CHAT}),
    "complete": frozenset({Feature.COMPLETION}),
    "generate_text": frozenset({Feature.COMPLETION}),
    "answer": frozenset({Feature.COMPLETION}),
    "stream_chat_completion": frozenset({Feature.STREAMING}),
    "stream_text": frozenset({Feature.STREAMING}),
    "chat_completion_with_tools": frozenset({Feature.TOOLS}),
    "analyze_image": frozenset({Feature.VISION}),
    "generate_json": frozenset({Feature.JSON_MODE}),
    "embeddings": frozenset({Feature.EMBEDDINGS}),
    "generate_image_bytes": frozenset({Feature.IMAGE}),
    "generate_image": frozenset({Feature.IMAGE}),
    "decide": frozenset({Feature.DECISION}),
}


def should_fall_back(error: LLMError) -> bool:
    """Fall back on transient failures only; a bad request would fail everywhere."""
    return error.fallback


def call_candidates(
    source: ProviderSource,
    features: frozenset[Feature],
    prefer: Sequence[str] | str | None,
    operation: str,
    call: CallArguments | None = None,
) -> list[Candidate]:
    """The providers to try for ``operation``, best first. With ``prefer="cheapest"`` and the
    ``call`` at hand they are ordered by the expected cost of that very call (see
    :mod:`llm_core.cost_estimate`); without it, of the registry's nominal request. Raises
    :class:`~llm_core.errors.NoMatchingProviderError` when none fits."""
    wanted = features | CALL_FEATURES.get(operation, frozenset())
    if call is not None and prefer == CHEAPEST:
        found = source.candidates(*wanted, prefer=CHEAPEST, estimate=estimate_call(operation, *call))
    else:
        found = source.candidates(*wanted, prefer=prefer)
    if not found:
        raise no_match(source.providers(), wanted, None)
    return found


def as_capable(provider: BaseProvider, interface: type[IfaceT]) -> IfaceT:
    """The provider as ``interface``; candidates were chosen by feature, so this holds unless a
    plugin's spec and class disagree."""
    if not isinstance(provider, interface):
        raise UnsupportedFeatureError(
            f"{provider.name} does not implement {getattr(interface, '__name__', interface)}",
            provider=provider.identifier,
        )
    return provider
