"""Scopes that observers nest calls under: a conversation turn, a tool execution, a batch fetch.

A scope has an id (from the call-id counter) and a start and an end hook. While it is entered,
its id is the current scope of the context: every call event (``llm_core_before_request``)
and every scope opened inside names it as ``parent_id``, so an observer can make the turn's
span the parent of its model calls and tool executions. Nothing is built when no observer is
installed: :func:`open_scope` returns ``None`` after one check.

Generators are the delicate case: a context variable set inside one would leak into the caller
between two items, and could not be reset when the generator is closed from another context.
:func:`scoped_iter` and :func:`scoped_aiter` enter the scope for each step of the wrapped
iterator only, never across a ``yield``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any, TypeVar

from llm_core.errors import cancellation
from llm_core.observe import observers

T = TypeVar("T")

_current: ContextVar[int] = ContextVar("llm_core_observer_scope", default=0)


def current() -> int:
    """The id of the scope the current context runs in (0: none)."""
    return _current.get()


class Scope:
    """One open scope: its id, its parent's, the hook that ends it."""

    __slots__ = ("closed", "end_hook", "id", "parent_id")

    def __init__(self, scope_id: int, parent_id: int, end_hook: str) -> None:
        self.id = scope_id
        self.parent_id = parent_id
        self.end_hook = end_hook
        self.closed = False

    def enter(self) -> Token[int]:
        return _current.set(self.id)

    def close(self, **event: Any) -> None:
        """Tell observers the scope is over (``event`` adds to ``scope_id``), once. An ``error``
        that cancelled the scope (a cancelled task, an interrupt) is reported as a
        :class:`~llm_core.errors.CancelledCallError`, as a cancelled call is."""
        if self.closed:
            return
        self.closed = True
        if "error" in event:
            event["error"] = cancellation(event["error"]) or event["error"]
        observers.emit(self.end_hook, {"scope_id": self.id, **event})


def open_scope(start_hook: str, end_hook: str, **event: Any) -> Scope | None:
    """A new scope, announced through ``start_hook``; ``None`` when nobody listens."""
    if not observers.active():
        return None
    scope = Scope(observers.next_call_id(), current(), end_hook)
    observers.emit(start_hook, {"scope_id": scope.id, "parent_id": scope.parent_id, **event})
    return scope


def scoped_iter(scope: Scope, items: Iterator[T], on_item: Callable[[T], None] | None = None) -> Iterator[T]:
    """``items`` with ``scope`` entered while each one is produced (not while the caller holds
    it); closing this closes ``items``."""
    try:
        while True:
            token = scope.enter()
            try:
                item = next(items)
            except StopIteration:
                return
            finally:
                _current.reset(token)
            if on_item is not None:
                on_item(item)
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


async def scoped_aiter(
    scope: Scope, items: AsyncIterator[T], on_item: Callable[[T], None] | None = None
) -> AsyncGenerator[T]:
    """The async twin of :func:`scoped_iter`."""
    try:
        while True:
            token = scope.enter()
            try:
                item = await items.__anext__()
            except StopAsyncIteration:
                return
            finally:
                _current.reset(token)
            if on_item is not None:
                on_item(item)
            yield item
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()


def reset(token: Token[int]) -> None:
    _current.reset(token)
