"""``Conversation`` (sync) and ``AsyncConversation``: the tool loop.

``send(message)`` appends the user turn, calls the model, runs the tools it asks for, sends the
results back and repeats until the model answers without tool calls (or ``max_steps`` model
calls were made: :class:`~llm_core.conversation.errors.MaxStepsError`). ``stream(message)``
does the same and yields events; their order is given in ``docs/conversations.md``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from llm_core.conversation import observing
from llm_core.conversation.calls import as_decision
from llm_core.conversation.errors import ToolServerError
from llm_core.conversation.history import UserInput, streamed_response, user_turn
from llm_core.conversation.saved import saved_settings
from llm_core.conversation.state import ConversationResponse, ConversationState, ToolRun, tool_call_event
from llm_core.errors import InvalidInputError, LLMError
from llm_core.responses import CompletionResponse
from llm_core.streaming import StreamEvent, StreamEventType, StreamMetadata, aclose_stream
from llm_core.tools import ToolCall


class _StreamedTurn:
    """Collects one streamed model turn: the events to pass on, then its response."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.meta: StreamMetadata | None = None
        self.error: LLMError | None = None

    def take(self, event: StreamEvent) -> bool:
        """Whether to pass ``event`` on (END is the conversation's own, at the very end)."""
        if event.type is StreamEventType.TOKEN:
            (self.thinking if event.is_thinking else self.text).append(event.text or "")
        elif event.type is StreamEventType.METADATA:
            self.meta = event.metadata
        elif event.type is StreamEventType.ERROR:
            self.error = event.error
        return event.type is not StreamEventType.END

    def response(self) -> CompletionResponse:
        if self.meta is None:  # a stream without METADATA or ERROR breaks the stream contract
            raise LLMError("the stream ended without METADATA", provider=self.provider)
        return streamed_response("".join(self.text), "".join(self.thinking), self.meta, self.provider)


class Conversation(ConversationState):
    """A conversation over a provider or a router, with automatic tool calls (sync)."""

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any], *, provider: Any, **options: Any) -> Conversation:
        """Resume a saved conversation (:meth:`to_json`) on ``provider`` (a provider or a
        router); give ``tools=`` again, and any setting to change."""
        conversation: Conversation = provider.conversation(**{**saved_settings(data), **options})
        return conversation

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def send(self, message: UserInput | None = None, *, output: type[BaseModel] | None = None) -> ConversationResponse:
        """The model's answer to ``message`` after every tool call it made was run; with
        ``output`` a structured answer validated into that model (``response.output``).
        Without a message, a loop stopped by ``max_steps`` or by calls the application must
        answer goes on."""
        with observing.turn(self):
            return self._send(message, output)

    def _send(self, message: UserInput | None, output: type[BaseModel] | None) -> ConversationResponse:
        self._begin(message)
        steps: list[CompletionResponse] = []
        calls = self.pending_calls
        if calls:
            self._load_tools()
            runs = self._run(calls, output)
            self._settle(runs)
            if _waiting(runs):
                return self._paused()
        for _ in range(self.max_steps):
            self._load_tools()
            specs, options = self._request(output)
            response = self._backend.call(self._prepare, specs, options, self.features())
            steps.append(response)
            calls = self._record(response)
            if not calls:
                return self._final(response, steps, output)
            runs = self._run(calls, output)
            self._settle(runs)
            if _done(runs, output):
                return self._final(response, steps, output)
        raise self._too_many_steps(calls)

    def stream(self, message: UserInput | None = None) -> Iterator[StreamEvent]:
        """The events of :meth:`send`: per model turn ``TOKEN*`` and ``METADATA``, then a
        ``TOOL_CALL`` per call and a ``TOOL_RESULT`` per result; ``END`` once, last; a failure
        is ``ERROR`` then ``END``. An invalid message raises here, before anything is sent."""
        if message is not None:
            user_turn(message)
        return observing.turn_stream(self, self._stream(message))

    def _stream(self, message: UserInput | None) -> Iterator[StreamEvent]:
        try:
            self._begin(message)
            calls = self.pending_calls
            if calls:
                self._load_tools()
                runs = self._run(calls, None)
                yield from self._settle(runs)
                if _waiting(runs):
                    yield StreamEvent.end()
                    return
            for _ in range(self.max_steps):
                self._load_tools()
                specs, options = self._request(None)
                turn = _StreamedTurn(self._backend.name)
                for event in self._backend.stream(self._prepare, specs, options, self.features()):
                    if turn.take(event):
                        yield event
                if turn.error is not None:
                    yield StreamEvent.end()
                    return
                calls = self._record(turn.response())
                if not calls:
                    yield StreamEvent.end()
                    return
                yield from (tool_call_event(call) for call in calls)
                runs = self._run(calls, None)
                yield from self._settle(runs)
                if _done(runs, None):
                    yield StreamEvent.end()
                    return
            raise self._too_many_steps(calls)
        except LLMError as exc:
            yield StreamEvent.failure(exc)
            yield StreamEvent.end()

    def _run(self, calls: list[ToolCall], output: type[BaseModel] | None) -> list[ToolRun]:
        """Check every call, then run them one after the other, in call order."""
        runs = [self._plan(call, self._decide(call), output) for call in calls]
        for run in runs:
            if run.kwargs is not None and run.tool is not None and run.tool.handler is not None:
                self._starting([run.call])
                with observing.tool_execution(run):
                    try:
                        value = run.tool.handler(**run.kwargs)
                        if inspect.isawaitable(value):  # an async def tool in sync code
                            value = _run_coroutine(value)
                    except ToolServerError as exc:  # not the model's to hear: the loop stops
                        run.stopped_by = run.error = exc
                        break
                    except Exception as exc:  # noqa: BLE001 - a tool's failure goes back to the model
                        self._finished(run, error=exc)
                    else:
                        self._finished(run, value)
        return runs

    def _decide(self, call: ToolCall) -> Any:
        recorded = self._recorded_decision(call)
        if recorded is not None:
            return recorded
        if self.before_tool_call is None:
            return as_decision(None)
        decision = self.before_tool_call(call)
        if inspect.isawaitable(decision):
            raise InvalidInputError("before_tool_call is async: use it with provider.aio.conversation(...)")
        return as_decision(decision)


class AsyncConversation(ConversationState):
    """The async twin of :class:`Conversation` (``provider.aio.conversation(...)``): the same
    history and rules; several tool calls of one turn run concurrently."""

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any], *, provider: Any, **options: Any) -> AsyncConversation:
        """Resume a saved conversation on ``provider`` (``provider.aio`` or ``router.aio``)."""
        conversation: AsyncConversation = provider.conversation(**{**saved_settings(data), **options})
        return conversation

    async def __aenter__(self) -> AsyncConversation:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        if self._sources:
            await asyncio.to_thread(self.close)

    async def send(
        self, message: UserInput | None = None, *, output: type[BaseModel] | None = None
    ) -> ConversationResponse:
        """See :meth:`Conversation.send`."""
        with observing.turn(self):
            return await self._send(message, output)

    async def _send(self, message: UserInput | None, output: type[BaseModel] | None) -> ConversationResponse:
        self._begin(message)
        steps: list[CompletionResponse] = []
        calls = self.pending_calls
        if calls:
            await self._aload_tools()
            runs = await self._run(calls, output)
            self._settle(runs)
            if _waiting(runs):
                return self._paused()
        for _ in range(self.max_steps):
            await self._aload_tools()
            specs, options = self._request(output)
            response = await self._backend.acall(self._prepare, specs, options, self.features())
            steps.append(response)
            calls = self._record(response)
            if not calls:
                return self._final(response, steps, output)
            runs = await self._run(calls, output)
            self._settle(runs)
            if _done(runs, output):
                return self._final(response, steps, output)
        raise self._too_many_steps(calls)

    def stream(self, message: UserInput | None = None) -> AsyncIterator[StreamEvent]:
        """See :meth:`Conversation.stream` (the same events, in the same order)."""
        if message is not None:
            user_turn(message)
        return observing.turn_astream(self, self._stream(message))

    async def _stream(self, message: UserInput | None) -> AsyncGenerator[StreamEvent]:
        try:
            self._begin(message)
            calls = self.pending_calls
            if calls:
                await self._aload_tools()
                runs = await self._run(calls, None)
                for event in self._settle(runs):
                    yield event
                if _waiting(runs):
                    yield StreamEvent.end()
                    return
            for _ in range(self.max_steps):
                await self._aload_tools()
                specs, options = self._request(None)
                turn = _StreamedTurn(self._backend.name)
                events = self._backend.astream(self._prepare, specs, options, self.features())
                try:
                    async for event in events:
                        if turn.take(event):
                            yield event
                finally:  # a caller that stops: the provider's stream is released now, not at collection
                    await aclose_stream(events)
                if turn.error is not None:
                    yield StreamEvent.end()
                    return
                calls = self._record(turn.response())
                if not calls:
                    yield StreamEvent.end()
                    return
                for call in calls:
                    yield tool_call_event(call)
                runs = await self._run(calls, None)
                for event in self._settle(runs):
                    yield event
                if _done(runs, None):
                    yield StreamEvent.end()
                    return
            raise self._too_many_steps(calls)
        except LLMError as exc:
            yield StreamEvent.failure(exc)
            yield StreamEvent.end()

    async def _run(self, calls: list[ToolCall], output: type[BaseModel] | None) -> list[ToolRun]:
        """Check every call, then run them concurrently (plain functions in worker threads);
        results keep the order of the calls."""
        runs = [self._plan(call, await self._decide(call), output) for call in calls]
        self._starting([run.call for run in runs if run.kwargs is not None])
        await asyncio.gather(*(self._execute(run) for run in runs))
        return runs

    async def _aload_tools(self) -> None:
        if self._sources:  # a server may start, or list: not on the event loop
            await asyncio.to_thread(self._load_tools)

    async def _execute(self, run: ToolRun) -> None:
        if run.kwargs is None or run.tool is None or run.tool.handler is None:
            return
        with observing.tool_execution(run):
            try:
                if run.tool.is_async:
                    value = await run.tool.handler(**run.kwargs)
                else:
                    value = await asyncio.to_thread(run.tool.handler, **run.kwargs)
                    if inspect.isawaitable(value):
                        value = await value
            except ToolServerError as exc:  # not the model's to hear: the loop stops
                run.stopped_by = run.error = exc
            except Exception as exc:  # noqa: BLE001 - a tool's failure goes back to the model
                self._finished(run, error=exc)
            else:
                self._finished(run, value)

    async def _decide(self, call: ToolCall) -> Any:
        recorded = self._recorded_decision(call)
        if recorded is not None:
            return recorded
        if self.before_tool_call is None:
            return as_decision(None)
        decision = self.before_tool_call(call)
        if inspect.isawaitable(decision):
            decision = await decision
        return as_decision(decision)


def _waiting(runs: list[ToolRun]) -> bool:
    """Whether a call waits for the application (approval, or a ToolSpec without handler)."""
    return any(run.output is None for run in runs)


def _done(runs: list[ToolRun], output: type[BaseModel] | None) -> bool:
    """Whether the loop stops after these calls: a valid structured answer was given, or a
    call waits for the application."""
    if _waiting(runs):
        return True
    return output is not None and any(run.call.name == "final_result" and run.error is None for run in runs)


def _run_coroutine(awaitable: Any) -> Any:
    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
    raise InvalidInputError("an async def tool in a sync conversation inside a running event loop: use provider.aio")
