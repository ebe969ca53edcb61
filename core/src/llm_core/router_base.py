"""What a router's sync surface (:class:`llm_core.routing.Router`) and its async twin share: its
settings, the providers it has built, the steps of a fallback, and pickling by settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from llm_core import observers
from llm_core.candidates import Candidate
from llm_core.config import hide_secrets
from llm_core.decisions import DecisionResponse
from llm_core.errors import ConfigurationError, LLMError, PluginLoadError
from llm_core.features import Feature, parse_features
from llm_core.provider import BaseProvider
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse
from llm_core.routing_policy import CallArguments, ProviderSource, call_candidates, should_fall_back
from llm_core.settings import without_secrets
from llm_core.streaming import StreamEvent, StreamEventType

T = TypeVar("T")
RouterT = TypeVar("RouterT", bound="RouterBase")

_RESPONSE_TYPES = (CompletionResponse, EmbeddingResponse, ImageResponse, DecisionResponse)


class RouterBase:
    """A router's settings and fallback steps (the call surface is :class:`~llm_core.routing.Router`)."""

    def __init__(
        self,
        registry: ProviderSource,
        features: Iterable[Feature | str],
        *,
        prefer: Sequence[str] | str | None = None,
        config: dict[str, Any] | None = None,
        fall_back: Callable[[LLMError], bool] = should_fall_back,
    ) -> None:
        self.registry = registry
        self.features = parse_features(features)
        self.prefer = prefer
        self.config = hide_secrets(config or {})  # per-provider settings, keys as Secret
        self.fall_back = fall_back
        self.last_provider: str | None = None
        self._built: dict[str, BaseProvider] = {}
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its settings: the registry (by its specs), features, preference, the
        per-provider settings without any key (a :class:`~llm_core.config.Secret` is left out) and
        the fallback rule (a function pickles by its name). No provider or SDK client goes along:
        the copy builds its providers on first use, each resolving its key from the environment
        or config file of the process that unpickled it."""
        config = {identifier: without_secrets(settings) for identifier, settings in self.config.items()}
        settings = (self.registry, sorted(self.features), self.prefer, config, self.fall_back)
        return (_rebuild_router, (type(self), *settings))

    def candidates(self, operation: str, call: CallArguments | None = None) -> list[Candidate]:
        """The providers ``operation`` tries, best first (for ``call``, its ``(args, options)``,
        when the router orders by the call's cost: ``prefer="cheapest"``)."""
        return call_candidates(self.registry, self.features, self.prefer, operation, call)

    def _provider(self, candidate: Candidate) -> BaseProvider:
        """The candidate's provider, built once per router (thread-safe)."""
        built = self._built.get(candidate.identifier)
        if built is not None:
            return built
        with self._lock:
            built = self._built.get(candidate.identifier)
            if built is None:
                config = dict(self.config.get(candidate.identifier, {}))
                if candidate.model and candidate.model != candidate.spec.default_model:
                    config.setdefault("model", candidate.model)
                built = self.registry.get(candidate.identifier, **config)
                self._built[candidate.identifier] = built
            return built

    def _can_skip(self, error: LLMError) -> bool:
        """Whether the next candidate may serve after ``error``: the provider cannot be built
        (no key, a broken plugin) or failed in a way retries did not cure."""
        return isinstance(error, ConfigurationError | PluginLoadError) or self.fall_back(error)

    def can_fall_back(self, error: LLMError) -> bool:
        """Whether the next provider may serve after ``error`` (see ``fall_back``)."""
        return self._can_skip(error)

    def _stream_step(
        self, identifier: str, event: StreamEvent, delivered: bool, errors: dict[str, LLMError]
    ) -> StreamEvent | None:
        """What a router stream passes on for ``event``: ``None`` to move to the next candidate
        (a curable failure before any token), else the event (METADATA names the fallbacks)."""
        failed = event.error if event.type is StreamEventType.ERROR and not delivered else None
        if failed is not None and self.fall_back(failed):
            errors[identifier] = failed
            return None
        if event.type is StreamEventType.METADATA and event.metadata is not None:
            self.last_provider = identifier
            extra = {**event.metadata.extra, "fallback_from": list(errors)}
            return StreamEvent.meta(event.metadata.model_copy(update={"extra": extra}))
        return event

    def _answered(self, identifier: str, result: T, errors: dict[str, LLMError]) -> T:
        self.last_provider = identifier
        metadata = getattr(result, "metadata", None) if isinstance(result, _RESPONSE_TYPES) else None
        if isinstance(metadata, dict):
            metadata["answered_by"] = identifier
            metadata["fallback_from"] = list(errors)
        if errors:
            observers.emit(
                "llm_core_after_response",
                {
                    "provider": identifier,
                    "operation": "fallback",
                    "fallback_from": list(errors),
                    "model": getattr(result, "model", None),
                    "usage": None,
                    "latency_ms": 0.0,
                    "attempts": len(errors) + 1,
                    "call_id": 0,
                },
            )
        return result

    def fallback_providers(
        self, features: Iterable[Feature | str] = ()
    ) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        """``(identifier, provider)`` for each provider offering the router's features and
        ``features``, best first, built when reached (the error in its place when it cannot be
        built). Raises :class:`NoMatchingProviderError` at once when none fits. With
        ``prefer="cheapest"`` the order is that of the nominal request (a conversation's next
        turn is not known yet)."""
        found = call_candidates(self.registry, self.features | parse_features(features), self.prefer, "")
        return self._built_in_turn(found)

    def _built_in_turn(self, found: list[Candidate]) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        for candidate in found:
            try:
                yield candidate.identifier, self._provider(candidate)
            except (ConfigurationError, PluginLoadError) as exc:
                yield candidate.identifier, exc


def _rebuild_router(
    cls: type[RouterT],
    registry: ProviderSource,
    features: list[Feature],
    prefer: Sequence[str] | str | None,
    config: dict[str, Any],
    fall_back: Callable[[LLMError], bool],
) -> RouterT:
    """A router unpickled: built anew from its settings (see ``RouterBase.__reduce__``)."""
    return cls(registry, features, prefer=prefer, config=config, fall_back=fall_back)
