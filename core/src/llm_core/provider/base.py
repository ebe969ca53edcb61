"""The provider class that plugins subclass, and its async view ``provider.aio``.

A provider is made of three parts, each with one job:

- its settings (:class:`~.settings.ProviderSettings`, the base of :class:`BaseProvider`),
  resolved once from arguments, the config file and the environment;
- its :class:`~.requests.RequestBuilder` (``provider.builder``), which validates each call's
  arguments into a request before anything is sent;
- its :class:`~.execution.CallExecutor` (``provider.executor``): retries, error mapping, pricing
  and observers, shared by every operation.

The plugin's subclass adds the wire adapter: its SDK clients and, per family of operations, the
methods of a protocol of :mod:`llm_core.wire` (pure mapper, SDK call sync and async, pure
parser) and ``map_error``. Every public call comes from a declaration of
:mod:`llm_core.operations` and runs ``_plan`` (the route builds and plans the request), then
the executor once per request. See docs/architecture.md.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, cast

from llm_core.errors import (
    InvalidRequestError,
    LLMError,
    ProviderConnectionError,
    ProviderError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature
from llm_core.operation import AsyncCalls, Call, Operation, Stream
from llm_core.operations import Operations
from llm_core.provider.execution import CallExecutor
from llm_core.provider.requests import RequestBuilder
from llm_core.provider.settings import ProviderSettings
from llm_core.provider.streams import astream_events, stream_events
from llm_core.responses import ConnectionStatus
from llm_core.streaming import StreamEvent
from llm_core.wire import WIRES, ModelsWire, Plan, StreamParser, lacking, members

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation, Conversation

__all__ = ["AsyncProvider", "BaseProvider", "StreamParser"]


class BaseProvider(ProviderSettings, Operations):
    """Common behaviour of every provider: subclass it and implement the wire protocols of the
    operations the provider serves (:mod:`llm_core.wire`)."""

    #: The async view, built on first use of :attr:`aio`.
    _aio: AsyncProvider | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A family implemented in part is refused here, naming what is missing (a misspelt
        method would otherwise leave the feature silently unimplemented)."""
        super().__init_subclass__(**kwargs)
        for protocol in WIRES:
            missing = lacking(cls, protocol)
            if missing and len(missing) < len(members(protocol)) and not _shared_only(cls, protocol, missing):
                raise TypeError(
                    f"{cls.__name__} implements part of {protocol.__name__}: {_missing_words(cls, missing)}"
                )

    def _apply_settings(self) -> None:
        super()._apply_settings()
        #: What the class implements (read at every call).
        self._features = self.implemented_features()
        self.builder = RequestBuilder(self)
        self.executor = CallExecutor(self, self.map_error)
        #: The batch API (``submit``, ``find``, ``job``, ...; see :mod:`llm_core.batch`), or ``None``.
        self.batch: Any = None if self.batch_api is None else self.batch_api(self)

    @property
    def aio(self) -> AsyncProvider:
        """The async twins of every call: ``await provider.aio.chat_completion(...)``."""
        if self._aio is None:
            self._aio = AsyncProvider(self)
        return self._aio

    def map_error(self, error: BaseException) -> LLMError:
        """Map an SDK exception to the taxonomy (plugins override). The default wraps it as a
        :class:`ProviderError`."""
        return ProviderError(f"{type(error).__name__}: {error}", provider=self.identifier)

    # -- every operation: one plan, then each request through the plugin's hooks -------------

    def _plan(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Plan:
        """What a call of ``op`` sends: its request built and validated by the operation's route
        (bad input raises here, before anything is sent), and planned."""
        if self._key_pending:
            self._require_key()
        if op.feature not in self._features:
            raise UnsupportedFeatureError(f"{self.name} does not support {op.feature.value}", provider=self.identifier)
        route = op.route
        return route.plan(self, route.build(self, args, options))

    def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        return op.finished(self._respond(op, args, options), args, options)

    def _respond(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """The response of one call of ``op`` (before the operation's ``finish``)."""
        plan = self._plan(op, args, options)
        run = self.executor.run
        answers = []
        for request in plan.requests:
            try:
                answers.append(run(op, request, plan.hooks))
            except InvalidRequestError as exc:
                revised = plan.revise(request, exc) if plan.revise is not None else None
                if revised is None:
                    raise
                answers.append(run(op, revised, plan.hooks))
        return answers[0] if plan.combine is None else plan.combine(answers)

    async def _arespond(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """The async twin of :meth:`_respond` (same plan)."""
        plan = self._plan(op, args, options)
        run = self.executor.arun
        answers = []
        for request in plan.requests:
            try:
                answers.append(await run(op, request, plan.hooks))
            except InvalidRequestError as exc:
                revised = plan.revise(request, exc) if plan.revise is not None else None
                if revised is None:
                    raise
                answers.append(await run(op, revised, plan.hooks))
        return answers[0] if plan.combine is None else plan.combine(answers)

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[Any]:
        events = self._open_stream(op, args, options)
        return events if op.finish is None else op.finish(events)

    def _open_stream(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[StreamEvent]:
        """The event stream of one call of ``op``; its request is mapped now, so an input the
        plugin refuses raises at the call."""
        plan = self._plan(op, args, options)
        request, hooks = plan.requests[0], plan.hooks
        return stream_events(self.executor, op, request, hooks.map(request), hooks.send, hooks.parse(request))

    def _aopen_stream(
        self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]
    ) -> AsyncIterator[StreamEvent]:
        plan = self._plan(op, args, options)
        request, hooks = plan.requests[0], plan.hooks
        return astream_events(self.executor, op, request, hooks.map(request), hooks.asend, hooks.parse(request))

    # -- calls that are not operations -------------------------------------------------------

    def supports_streaming(self) -> bool:
        return self.supports_feature(Feature.STREAMING)

    def supports_tools(self) -> bool:
        return self.supports_feature(Feature.TOOLS)

    def supports_vision(self) -> bool:
        return self.supports_feature(Feature.VISION)

    def supports_documents(self) -> bool:
        return self.supports_feature(Feature.DOCUMENTS)

    def supports_batch(self) -> bool:
        return self.supports_feature(Feature.BATCH)

    def conversation(self, **options: Any) -> Conversation:
        """A conversation with automatic tool calls (``system``, ``tools``, ``model``,
        ``max_steps`` and call options; see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, ProviderBackend

        return Conversation(ProviderBackend(self), **options)

    def available_models(self) -> list[str]:
        """The live model list from the provider (``models/`` prefixes stripped)."""
        return self.executor.execute("list_models", None, self._models_wire()._send_list_models)

    def _models_wire(self) -> ModelsWire:
        """This provider as a :class:`ModelsWire` (refused when it cannot list its models)."""
        if lacking(type(self), ModelsWire):
            raise UnsupportedFeatureError(f"{self.name} cannot list its models", provider=self.identifier)
        return cast(ModelsWire, self)

    def test_connection(self) -> ConnectionStatus:
        """List models to prove key and network work; failures raise a connection error."""
        started = time.perf_counter()
        try:
            models = self.available_models()
        except LLMError as exc:
            raise self._connection_failed(exc) from exc
        return self._connected(models, started)

    def _connection_failed(self, error: LLMError) -> ProviderConnectionError:
        return ProviderConnectionError(f"connection test failed: {error.message}", provider=self.identifier)

    def _connected(self, models: list[str], started: float) -> ConnectionStatus:
        return ConnectionStatus(
            success=True,
            provider=self.identifier,
            models=models,
            message=f"connected to {self.name}: {len(models)} models available",
            latency_ms=(time.perf_counter() - started) * 1000,
        )


def _shared_only(cls: type, protocol: type, missing: list[str]) -> bool:
    """Whether ``cls`` has of ``protocol`` only what another family it implements shares with
    it (``map_chat_request`` is both the chat's and the stream's mapper): that is no part."""
    present = set(members(protocol)) - set(missing)
    others = {
        name for other in WIRES if other is not protocol for name in set(members(other)) - set(lacking(cls, other))
    }
    return present <= others


def _missing_words(cls: type, missing: list[str]) -> str:
    """``missing`` named, each with the method of ``cls`` its name is close to (a misspelling)."""
    own = [name for name in dir(cls) if not name.startswith("__")]
    words = []
    for name in missing:
        close = difflib.get_close_matches(name, own, n=1, cutoff=0.8)
        words.append(f"{name} (did you mean to name {close[0]} so?)" if close else name)
    return "no " + ", ".join(words)


class AsyncProvider(AsyncCalls, Operations):
    """Async view of a provider (``provider.aio``): the same calls, names and arguments, built,
    validated and mapped by the same functions as the sync calls; only the SDK call is awaited."""

    def __init__(self, provider: BaseProvider) -> None:
        self._p = provider

    @property
    def provider(self) -> BaseProvider:
        return self._p

    async def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        return op.finished(await self._p._arespond(op, args, options), args, options)

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> AsyncIterator[Any]:
        events = self._p._aopen_stream(op, args, options)
        return events if op.finish is None else op.finish(events)

    def conversation(self, **options: Any) -> AsyncConversation:
        """An async conversation (``await conversation.send(...)``); see ``BaseProvider.conversation``."""
        from llm_core.conversation import AsyncConversation, ProviderBackend

        return AsyncConversation(ProviderBackend(self._p), **options)

    async def available_models(self) -> list[str]:
        p = self._p
        return await p.executor.aexecute("list_models", None, p._models_wire()._asend_list_models)

    async def test_connection(self) -> ConnectionStatus:
        started = time.perf_counter()
        try:
            models = await self.available_models()
        except LLMError as exc:
            raise self._p._connection_failed(exc) from exc
        return self._p._connected(models, started)
