"""The provider base class that plugins subclass, and its async view ``provider.aio``.

A plugin writes, per operation, a pure request mapper (``map_*``), the SDK call in sync and
async form (``_send_*`` / ``_asend_*``), a pure response parser (``parse_*``) and one error
mapper (``map_error``). The public calls come from the declarations of
:mod:`llm_core.operations`; every one of them runs through :meth:`BaseProvider._plan` (request
built and validated, what to send decided) and then :meth:`~CallExecution._run` per request,
for the sync methods and their :attr:`BaseProvider.aio` twins alike. See docs/architecture.md.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import TYPE_CHECKING, Any

from llm_core.errors import InvalidRequestError, LLMError, ProviderConnectionError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.operation import AsyncCalls, Call, Calls, Operation, Plan, Stream
from llm_core.operations import Operations
from llm_core.provider.chat_requests import ChatRequestBuilding
from llm_core.provider.streams import StreamDriver, StreamParser
from llm_core.requests import ChatRequest
from llm_core.responses import CompletionResponse, ConnectionStatus
from llm_core.streaming import StreamEvent

if TYPE_CHECKING:
    from llm_core.conversation import AsyncConversation, Conversation

__all__ = ["AsyncProvider", "BaseProvider", "StreamParser"]


class BaseProvider(Calls, Operations, StreamDriver, ChatRequestBuilding):
    """Common behaviour of every provider. Subclass it together with capability interfaces."""

    #: The async view, built on first use of :attr:`aio`.
    _aio: AsyncProvider | None = None

    @property
    def aio(self) -> AsyncProvider:
        """The async twins of every call: ``await provider.aio.chat_completion(...)``."""
        if self._aio is None:
            self._aio = AsyncProvider(self)
        return self._aio

    # -- hooks every plugin implements ---------------------------------------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Any]:
        """An awaitable of the SDK's answer: an ``async def``, or a plain ``def`` that returns
        the SDK's own coroutine."""
        raise NotImplementedError

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        raise NotImplementedError

    def _send_list_models(self) -> list[str]:
        raise NotImplementedError

    async def _asend_list_models(self) -> list[str]:
        raise NotImplementedError

    # -- every operation: one plan, then each request through the plugin's hooks -------------

    def _plan(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Plan:
        """What a call of ``op`` sends: its request built and validated (bad input raises
        here, before anything is sent), through the operation's hooks or its own plan."""
        self._require_key()
        if op.feature not in self.implemented_features():
            raise UnsupportedFeatureError(f"{self.name} does not support {op.feature.value}", provider=self.identifier)
        request = getattr(self, op.build)(*args, **op.fixed, **options)
        if op.plan is not None:
            plan: Plan = getattr(self, op.plan)(request, op.hooks)
            return plan
        return Plan(op.hooks, (request,))

    def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        return op.finished(self._respond(op, args, options), args, options)

    def _respond(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """The response of one call of ``op`` (before the operation's ``finish``)."""
        plan = self._plan(op, args, options)
        answers = []
        for request in plan.requests:
            try:
                answers.append(self._run(op, request, plan.hooks))
            except InvalidRequestError as exc:
                revised = plan.revise(request, exc) if plan.revise is not None else None
                if revised is None:
                    raise
                answers.append(self._run(op, revised, plan.hooks))
        return plan.combine(answers)

    async def _arespond(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """The async twin of :meth:`_respond` (same plan)."""
        plan = self._plan(op, args, options)
        answers = []
        for request in plan.requests:
            try:
                answers.append(await self._arun(op, request, plan.hooks))
            except InvalidRequestError as exc:
                revised = plan.revise(request, exc) if plan.revise is not None else None
                if revised is None:
                    raise
                answers.append(await self._arun(op, revised, plan.hooks))
        return plan.combine(answers)

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[Any]:
        events = self._open_stream(op, args, options)
        return events if op.finish is None else op.finish(events)

    def _open_stream(self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[StreamEvent]:
        """The event stream of one call of ``op``; its request is mapped now, so an input the
        plugin refuses raises at the call."""
        plan = self._plan(op, args, options)
        request = plan.requests[0]
        payload = getattr(self, plan.hooks.map)(request)
        parser = getattr(self, plan.hooks.parse)(request)
        return self._stream_events(op, request, payload, getattr(self, plan.hooks.send), parser)

    def _aopen_stream(
        self, op: Operation, args: tuple[Any, ...], options: dict[str, Any]
    ) -> AsyncIterator[StreamEvent]:
        plan = self._plan(op, args, options)
        request = plan.requests[0]
        payload = getattr(self, plan.hooks.map)(request)
        parser = getattr(self, plan.hooks.parse)(request)
        return self._astream_events(op, request, payload, getattr(self, plan.hooks.asend), parser)

    # -- calls that are not operations -------------------------------------------------------

    def conversation(self, **options: Any) -> Conversation:
        """A conversation with automatic tool calls (``system``, ``tools``, ``model``,
        ``max_steps`` and call options; see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, ProviderBackend

        return Conversation(ProviderBackend(self), **options)

    def available_models(self) -> list[str]:
        """The live model list from the provider (``models/`` prefixes stripped)."""
        return self._execute("list_models", None, self._send_list_models)

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
        return await self._p._aexecute("list_models", None, self._p._asend_list_models)

    async def test_connection(self) -> ConnectionStatus:
        started = time.perf_counter()
        try:
            models = await self.available_models()
        except LLMError as exc:
            raise self._p._connection_failed(exc) from exc
        return self._p._connected(models, started)

    async def submit_batch(self, items: Any, **options: Any) -> Any:
        """``provider.asubmit_batch`` (see :mod:`llm_core.batch`)."""
        p = self._p
        if Feature.BATCH not in p.implemented_features():
            raise UnsupportedFeatureError(f"{p.name} does not support {Feature.BATCH.value}", provider=p.identifier)
        return await p.asubmit_batch(items, **options)  # type: ignore[attr-defined]
