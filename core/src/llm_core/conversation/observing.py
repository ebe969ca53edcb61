"""What observers hear of a conversation: each turn (``send`` / ``stream``) and each tool
execution is a scope (:mod:`llm_core.observe.scopes`), so an observer can nest the turn's
model calls and tool runs under it. With no observer installed each costs one check.

Hooks: ``llm_core_turn_start`` / ``llm_core_turn_end`` and ``llm_core_tool_start`` /
``llm_core_tool_end`` (see :mod:`llm_core.hooks` and docs/observers.md); decisions about calls
that wait for approval are ``llm_core_tool_approval`` (:mod:`llm_core.conversation.calls`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AbstractContextManager, nullcontext
from contextvars import Token
from types import TracebackType
from typing import Any

from llm_core.conversation.history import add_usage
from llm_core.conversation.state import ConversationState, ToolRun
from llm_core.observe.scopes import Scope, open_scope, reset, scoped_aiter, scoped_iter
from llm_core.responses import Usage
from llm_core.streaming import StreamEvent, StreamEventType

_NOTHING: AbstractContextManager[None] = nullcontext()


class _Turn:
    """One observed turn: entered for ``send``, or step by step around a stream."""

    def __init__(self, scope: Scope, conversation: ConversationState) -> None:
        self.scope = scope
        self.conversation = conversation
        self.first_step = len(conversation.responses)
        self.error: BaseException | None = None
        self.token: Token[int] | None = None

    def __enter__(self) -> None:
        self.token = self.scope.enter()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.token is not None:
            reset(self.token)
        self.end(error)

    def see(self, event: StreamEvent) -> None:
        if event.type is StreamEventType.ERROR:
            self.error = event.error

    def end(self, error: BaseException | None = None) -> None:
        abandoned = isinstance(error, GeneratorExit)  # the caller stopped a stream: no failure
        if abandoned:
            error = None
        steps = self.conversation.responses[self.first_step :]
        usage = Usage()
        for response in steps:
            usage = add_usage(usage, response.usage)
        last = steps[-1] if steps else None
        self.scope.close(
            steps=len(steps),
            usage=usage.model_dump() if steps else None,
            provider=last.provider if last else None,
            response_model=last.model if last else None,
            finish_reason=last.finish_reason if last else None,
            error=error or self.error,
            abandoned=abandoned,
        )


def _start(conversation: ConversationState, operation: str) -> _Turn | None:
    backend = conversation._backend
    scope = open_scope(
        "llm_core_turn_start",
        "llm_core_turn_end",
        operation=operation,
        provider=getattr(backend, "name", None),
        model=conversation.model,
    )
    return None if scope is None else _Turn(scope, conversation)


def turn(conversation: ConversationState) -> AbstractContextManager[None]:
    """The scope of one ``send``: entered for all of it (a plain call or a coroutine)."""
    observed = _start(conversation, "send")
    return _NOTHING if observed is None else observed


def turn_stream(conversation: ConversationState, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """``events`` of one ``stream`` turn, each produced inside the turn's scope."""
    observed = _start(conversation, "stream")
    if observed is None:
        yield from events
        return
    try:
        yield from scoped_iter(observed.scope, events, observed.see)
    except BaseException as exc:
        observed.end(exc)
        raise
    observed.end()


async def turn_astream(
    conversation: ConversationState, events: AsyncGenerator[StreamEvent]
) -> AsyncIterator[StreamEvent]:
    """The async twin of :func:`turn_stream`. ``async for`` does not close what it iterates:
    closing this closes ``events`` here, so that the provider's stream is released at once."""
    observed = _start(conversation, "stream")
    source = events if observed is None else scoped_aiter(observed.scope, events, observed.see)
    try:
        async for event in source:
            yield event
    except BaseException as exc:
        if observed is not None:
            observed.end(exc)
        raise
    finally:
        await source.aclose()
    if observed is not None:
        observed.end()


class _ToolExecution:
    """One tool run observers hear of; entered while its handler runs, so that model calls the
    tool makes nest under it."""

    def __init__(self, scope: Scope, run: ToolRun) -> None:
        self.scope = scope
        self.run = run
        self.token: Token[int] | None = None

    def __enter__(self) -> None:
        self.token = self.scope.enter()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.token is not None:
            reset(self.token)
        self.scope.close(error=error or self.run.error, result=self.run.output, tool_name=self.run.call.name)


def tool_execution(run: ToolRun) -> AbstractContextManager[Any]:
    """The scope of running ``run``'s handler (a no-op when nobody listens)."""
    tool = run.tool
    scope = open_scope(
        "llm_core_tool_start",
        "llm_core_tool_end",
        tool_name=run.call.name,
        tool_call_id=run.call.id,
        tool_type="function" if tool is None or tool.server is None else "extension",
        description=tool.spec.description if tool is not None else "",
        server=tool.server if tool is not None else None,
        call=run.call,
    )
    return _NOTHING if scope is None else _ToolExecution(scope, run)
