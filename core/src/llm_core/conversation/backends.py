"""Where a conversation's model calls go: one provider, or a router that falls back per call.

A conversation knows providers only through the public contract below (:class:`ChatAPI`), so
the fake provider and any third-party plugin get conversations for free; a router through the
two methods of :class:`FallbackRouter`, and its fallback loop (:mod:`llm_core.routing.fallback`).
Nothing here imports the provider, capability or router modules (they import this package, for
their ``conversation()`` methods).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from llm_core.errors import LLMError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.messages import ChatMessage
from llm_core.responses import CompletionResponse
from llm_core.routing.fallback import Fallback, acall_each, astream_each, call_each, stream_each
from llm_core.streaming import StreamEvent
from llm_core.tools import ToolSpec

#: The history as one provider gets it (see :func:`~llm_core.conversation.history.for_provider`).
Prepare = Callable[[str], list[ChatMessage]]


class ChatAPI(Protocol):
    """The part of the provider contract a conversation relies on. It also calls
    ``chat_completion_with_tools`` when it has tools and ``stream_chat_completion`` when it
    streams (a provider has them when it offers those features, checked when the conversation
    is made), and the same calls of ``aio``."""

    @property
    def identifier(self) -> str: ...

    @property
    def aio(self) -> Any: ...

    def supports_feature(self, feature: Feature | str, model: str | None = None) -> bool: ...

    def chat_completion(self, messages: Sequence[ChatMessage], **options: Any) -> CompletionResponse: ...


class FallbackRouter(Protocol):
    """What a conversation needs of a router (:class:`~llm_core.routing.Router`)."""

    def fallback_providers(self, features: Iterable[Feature], model: str | None = None) -> Iterator[tuple[str, Any]]:
        """``(identifier, provider or the LLMError that kept it from being built)`` for every
        provider offering the router's features and ``features`` (and ``model`` when given),
        best first. Raises :class:`~llm_core.errors.NoMatchingProviderError` at once when none
        does."""
        ...

    def can_fall_back(self, error: LLMError) -> bool: ...


def _call(api: Any, messages: list[ChatMessage], tools: Sequence[ToolSpec], options: dict[str, Any]) -> Any:
    """One model call (sync result, or an awaitable from ``provider.aio``)."""
    if tools:
        return api.chat_completion_with_tools(messages, tools, **options)
    return api.chat_completion(messages, **options)


def _stream(api: Any, messages: list[ChatMessage], tools: Sequence[ToolSpec], options: dict[str, Any]) -> Any:
    return api.stream_chat_completion(messages, **({"tools": list(tools)} if tools else {}), **options)


class ProviderBackend:
    """Every call goes to one provider."""

    def __init__(self, provider: ChatAPI) -> None:
        self.provider = provider
        self.name = provider.identifier

    def begin_turn(self) -> None:
        """A new ``send``: nothing to reset for one provider."""

    def check(self, features: Iterable[Feature], model: str | None) -> None:
        """Refuse, before anything is sent, a conversation the provider cannot hold."""
        for feature in sorted(features):
            if not self.provider.supports_feature(feature, model):
                where = f" with model {model!r}" if model else ""
                raise UnsupportedFeatureError(
                    f"{self.provider.identifier} does not support {feature.value}{where}, "
                    "which this conversation needs",
                    provider=self.provider.identifier,
                )

    def call(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> CompletionResponse:
        response: CompletionResponse = _call(self.provider, prepare(self.provider.identifier), tools, options)
        return response

    async def acall(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> CompletionResponse:
        response: CompletionResponse = await _call(self.provider.aio, prepare(self.provider.identifier), tools, options)
        return response

    def stream(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> Iterator[StreamEvent]:
        events: Iterator[StreamEvent] = _stream(self.provider, prepare(self.provider.identifier), tools, options)
        return events

    def astream(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> AsyncIterator[StreamEvent]:
        events: AsyncIterator[StreamEvent] = _stream(
            self.provider.aio, prepare(self.provider.identifier), tools, options
        )
        return events


class RouterBackend:
    """Each model call goes to the first capable provider that answers: on a failure retries
    could not cure (rate limit, server error, timeout, connection) the next one is asked, with
    the history as that provider must get it. Within one ``send`` the tool loop stays with the
    provider that answered (a fallback continues there); the next ``send`` starts again from the
    router's preferred order. Every response names who answered (``metadata["answered_by"]``)
    and who failed before (``metadata["fallback_from"]``), as a router's own calls do."""

    def __init__(self, router: FallbackRouter) -> None:
        self.router = router
        self.name = "router"
        self._answering: str | None = None

    def begin_turn(self) -> None:
        self._answering = None

    def check(self, features: Iterable[Feature], model: str | None) -> None:
        self.router.fallback_providers(features, model)  # raises when no provider offers them all

    def _walk(self, features: Iterable[Feature], options: dict[str, Any]) -> Fallback:
        """The router's candidates for the call's model (if it names one), from the one that
        answered this turn so far (if any)."""
        found = self.router.fallback_providers(features, options.get("model"))
        if self._answering is not None:
            sticky = self._answering
            found = itertools.dropwhile(lambda item: item[0] != sticky, found)
        return Fallback(found, self.router.can_fall_back, self._answered_by)

    def _answered_by(self, identifier: str) -> None:
        self._answering = identifier

    def call(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> CompletionResponse:
        walk = self._walk(features, options)
        response: CompletionResponse = call_each(
            walk, lambda provider: _call(provider, prepare(provider.identifier), tools, options)
        )
        return response

    async def acall(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> CompletionResponse:
        walk = self._walk(features, options)
        return await acall_each(
            walk, lambda provider: _call(provider.aio, prepare(provider.identifier), tools, options)
        )

    def stream(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> Iterator[StreamEvent]:
        """Falls back while no token was delivered; afterwards an ERROR ends the turn."""
        walk = self._walk(features | {Feature.STREAMING}, options)
        return stream_each(walk, lambda provider: _stream(provider, prepare(provider.identifier), tools, options))

    def astream(
        self, prepare: Prepare, tools: Sequence[ToolSpec], options: dict[str, Any], features: set[Feature]
    ) -> AsyncIterator[StreamEvent]:
        walk = self._walk(features | {Feature.STREAMING}, options)
        return astream_each(walk, lambda provider: _stream(provider.aio, prepare(provider.identifier), tools, options))
