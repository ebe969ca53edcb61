"""Fallback routing: a provider-shaped object that moves to the next capable provider when a
call fails in a way retries could not cure (rate limit, server error, timeout, connection).

Its calls are the operations of :mod:`llm_core.operations`, sync and ``router.aio``; each runs
the one fallback loop of :mod:`llm_core.routing.fallback` over the providers
:mod:`llm_core.routing.policy` picks for it (by cost with :mod:`llm_core.routing.cost_estimate`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from llm_core.config import hide_secrets
from llm_core.errors import ConfigurationError, LLMError, PluginLoadError, UnknownSettingError
from llm_core.features import Feature, parse_features
from llm_core.operation import AsyncCalls, Call, Calls, Operation, Stream
from llm_core.operations import Operations, find
from llm_core.provider.base import BaseProvider
from llm_core.provider.settings import without_secrets
from llm_core.registry.candidates import Candidate
from llm_core.routing.fallback import Fallback, acall_each, astream_each, call_each, stream_each
from llm_core.routing.policy import CallArguments, ProviderSource, call_candidates, should_fall_back
from llm_core.streaming import StreamEvent

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation, Conversation

__all__ = ["AsyncRouter", "ProviderSource", "Router", "should_fall_back"]

RouterT = TypeVar("RouterT", bound="Router")


class Router(Calls, Operations):
    """Same call surface as a provider (sync and ``router.aio``). Each response names the
    provider that answered (``response.provider``, ``metadata["answered_by"]``) and the ones
    that failed before it (``metadata["fallback_from"]``); ``last_provider`` holds it too.

    ``prefer`` is the preference order (identifiers), or ``"cheapest"``: each call tries the
    capable providers in order of what that call is expected to cost at their prices
    (:mod:`llm_core.routing.cost_estimate`). A router pickles by its settings, never with a key."""

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
        self.aio = AsyncRouter(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its settings: the registry (by its specs), features, preference, the
        per-provider settings without any key (a :class:`~llm_core.config.Secret` is left out) and
        the fallback rule (a function pickles by its name). No provider or SDK client goes along:
        the copy builds its providers on first use, each resolving its key from the environment
        or config file of the process that unpickled it."""
        config = {identifier: without_secrets(settings) for identifier, settings in self.config.items()}
        settings = (self.registry, sorted(self.features), self.prefer, config, self.fall_back)
        return (_rebuild_router, (type(self), *settings))

    # -- the operations: each one call through the fallback loop ------------------------------

    def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        response = call_each(self._walk(op, (args, options)), lambda p: p._respond(op, args, options))
        return op.finished(response, args, options)

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[Any]:
        walk = self._walk(op, (args, options))
        events = stream_each(walk, lambda p: p._open_stream(op, args, options))
        return events if op.finish is None else op.finish(events)

    def _walk(self, op: Operation, call: CallArguments) -> Fallback:
        """The fallback walk of one call of ``op`` (raises at once when no provider fits)."""
        return Fallback(self._built_in_turn(self.candidates(op, call)), self.can_fall_back, self._answered_by)

    def _answered_by(self, identifier: str) -> None:
        self.last_provider = identifier

    # -- candidates --------------------------------------------------------------------------

    def candidates(self, operation: str | Operation, call: CallArguments | None = None) -> list[Candidate]:
        """The providers a call of ``operation`` (a name such as ``"chat_completion"``) tries,
        best first (for ``call``, its ``(args, options)``, when the router orders by the call's
        cost: ``prefer="cheapest"``)."""
        return call_candidates(self.registry, self.features, self.prefer, find(operation), call, settings=self.config)

    def can_fall_back(self, error: LLMError) -> bool:
        """Whether the next provider may serve after ``error``: the provider cannot be built (no
        key, a broken plugin) or failed in a way retries did not cure (see ``fall_back``). A
        setting the provider does not read is the caller's mistake: raised, never skipped."""
        if isinstance(error, UnknownSettingError):
            return False
        return isinstance(error, ConfigurationError | PluginLoadError) or self.fall_back(error)

    def fallback_providers(
        self, features: Iterable[Feature | str] = (), model: str | None = None
    ) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        """``(identifier, provider)`` for each provider offering the router's features and
        ``features`` (and ``model``, when given), best first, built when reached (the error in
        its place when it cannot be built). Raises :class:`NoMatchingProviderError` at once when
        none fits. With ``prefer="cheapest"`` the order is that of the nominal request (a
        conversation's next turn is not known yet)."""
        wanted = self.features | parse_features(features)
        found = call_candidates(self.registry, wanted, self.prefer, model=model, settings=self.config)
        return self._built_in_turn(found)

    def _built_in_turn(self, found: list[Candidate]) -> Iterator[tuple[str, BaseProvider | LLMError]]:
        for candidate in found:
            try:
                yield candidate.identifier, self._provider(candidate)
            except (ConfigurationError, PluginLoadError) as exc:
                yield candidate.identifier, exc

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

    def conversation(self, **options: Any) -> Conversation:
        """A conversation whose every model call may fall back to the next capable provider
        (see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, RouterBackend

        return Conversation(RouterBackend(self), **options)


class AsyncRouter(AsyncCalls, Operations):
    """``router.aio``: the async twins of a router's calls, with the same fallback loop."""

    def __init__(self, router: Router) -> None:
        self._r = router

    async def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        walk = self._r._walk(op, (args, options))
        response = await acall_each(walk, lambda p: p._arespond(op, args, options))
        return op.finished(response, args, options)

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> AsyncIterator[Any]:
        walk = self._r._walk(op, (args, options))
        events: AsyncIterator[StreamEvent] = astream_each(walk, lambda p: p._aopen_stream(op, args, options))
        return events if op.finish is None else op.finish(events)

    def conversation(self, **options: Any) -> AsyncConversation:
        """An async conversation that falls back per model call (see ``Router.conversation``)."""
        from llm_core.conversation import AsyncConversation, RouterBackend

        return AsyncConversation(RouterBackend(self._r), **options)


def _rebuild_router(
    cls: type[RouterT],
    registry: ProviderSource,
    features: list[Feature],
    prefer: Sequence[str] | str | None,
    config: dict[str, Any],
    fall_back: Callable[[LLMError], bool],
) -> RouterT:
    """A router unpickled: built anew from its settings (see ``Router.__reduce__``)."""
    return cls(registry, features, prefer=prefer, config=config, fall_back=fall_back)
