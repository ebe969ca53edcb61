"""What an operation is, and how its declaration becomes a method of every surface.

An :class:`Operation` holds the facts of one public call (see :mod:`llm_core.operations`, where
every operation is declared). Declared in a class with :func:`call` or :func:`stream`, it is a
descriptor: read on a sync surface (a :class:`Calls`: a provider, a router) it is a method that
runs ``surface._call(op, args, options)`` (or ``_stream``); on an async surface
(:class:`AsyncCalls`: ``provider.aio``, ``router.aio``) the same, awaited. The method has the
declared name, docstring and signature, for ``help()``, IDEs and type checkers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, Self, TypeVar, overload

from llm_core.features import Feature

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
R2 = TypeVar("R2")
Y = TypeVar("Y")
Y2 = TypeVar("Y2")


class Hooks(NamedTuple):
    """The names of the plugin methods one operation goes through. For a stream, ``parse``
    names the method that makes its :class:`~llm_core.provider.streams.StreamParser`."""

    map: str
    send: str
    asend: str
    parse: str


CHAT_HOOKS = Hooks("map_chat_request", "_send_chat", "_asend_chat", "parse_chat_response")
STREAM_HOOKS = Hooks("map_chat_request", "_send_stream", "_asend_stream", "new_stream_parser")


class Cost(Enum):
    """How an answer is priced (and how a ``prefer="cheapest"`` router estimates it)."""

    #: Prompt, thinking and answer tokens.
    TOKENS = "tokens"
    #: Prompt tokens only: the answer is not text (embeddings).
    PROMPT = "prompt"
    #: Prompt tokens and one generated image.
    IMAGE = "image"
    #: Nothing: the provider does not charge for it (token counting).
    FREE = "free"


@dataclass(frozen=True)
class Plan:
    """What one call sends: each request through ``hooks`` (in order), their answers combined
    into the operation's response. ``revise`` may change a request the provider refused, once."""

    hooks: Hooks
    requests: Sequence[Any]
    combine: Callable[[list[Any]], Any] = field(default=lambda answers: answers[0])
    revise: Callable[[Any, Any], Any] | None = None


@dataclass(frozen=True, eq=False)
class Operation:
    """The facts of one operation (see the module docstring); shared by :class:`Call` and
    :class:`Stream`, which turn a declaration into the methods of every surface."""

    name: str
    doc: str
    feature: Feature
    #: The provider method that builds the validated request from the call's arguments ...
    build: str
    #: ... called with these keywords added (e.g. the feature a chat-shaped call needs).
    fixed: Mapping[str, Any]
    hooks: Hooks
    #: The operation name observers hear (``event["operation"]``).
    observed_as: str
    cost: Cost
    #: A provider method ``plan(request) -> Plan`` for calls that are not one request through
    #: ``hooks`` (split into batches, answered another way, revised after a refusal).
    plan: str | None
    #: The public answer made from the response: ``finish(response, *args, **options)``.
    finish: Callable[..., Any] | None
    #: A call the testing kit makes to probe the operation: ``(args, options)``.
    example: tuple[tuple[Any, ...], Mapping[str, Any]]

    @property
    def streams(self) -> bool:
        return isinstance(self, Stream)

    def implemented_by(self, cls: type) -> bool:
        """Whether ``cls`` has this operation's request builder and every hook."""
        return all(hasattr(cls, name) for name in (self.build, *self.hooks))

    def finished(self, response: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> Any:
        """The public answer of a call of this operation, from its response."""
        return response if self.finish is None else self.finish(response, *args, **options)


class Calls:
    """A sync surface: runs every operation's call (``_call``) and stream (``_stream``)."""

    def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Iterator[Any]:
        raise NotImplementedError


class AsyncCalls:
    """An async surface (``provider.aio``, ``router.aio``): the same operations, awaited."""

    async def _call(self, op: Call[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _stream(self, op: Stream[Any, Any], args: tuple[Any, ...], options: dict[str, Any]) -> AsyncIterator[Any]:
        raise NotImplementedError


def _method(signature: Callable[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` dressed as the declared method: its name, docstring and (for ``inspect`` and
    IDEs) signature."""
    run.__name__ = run.__qualname__ = signature.__name__
    run.__doc__ = signature.__doc__
    run.__wrapped__ = signature  # type: ignore[attr-defined]
    return run


class _Declared(Operation):
    """A declaration as a descriptor: read on a surface, the method that runs it there."""

    def __init__(self, signature: Callable[..., Any], **facts: Any) -> None:
        super().__init__(name=signature.__name__, doc=signature.__doc__ or "", **facts)
        sync, asynchronous = self._runners()
        object.__setattr__(self, "_sync", _method(signature, sync))
        object.__setattr__(self, "_async", _method(signature, asynchronous))

    def _runners(self) -> tuple[Callable[..., Any], Callable[..., Any]]:
        raise NotImplementedError

    def _facts(self, **changes: Any) -> dict[str, Any]:
        """This declaration's facts but its name and docstring, with ``changes``."""
        kept = {f.name: getattr(self, f.name) for f in fields(Operation) if f.name not in ("name", "doc")}
        return {**kept, **changes}

    def _bound(self, instance: object, owner: type[Any]) -> Any:
        if instance is None:
            return self
        method = vars(self)["_async" if isinstance(instance, AsyncCalls) else "_sync"]
        return method.__get__(instance, owner)


class Call(_Declared, Generic[P, R]):
    """An operation answered once: ``surface.name(...)`` returns ``R`` (awaitable on an async
    surface)."""

    def _runners(self) -> tuple[Callable[..., Any], Callable[..., Any]]:
        op = self

        def sync(surface: Calls, *args: Any, **options: Any) -> Any:
            return surface._call(op, args, options)

        async def asynchronous(surface: AsyncCalls, *args: Any, **options: Any) -> Any:
            return await surface._call(op, args, options)

        return sync, asynchronous

    def answering(self, finish: Callable[..., Any]) -> Callable[[Callable[Concatenate[Any, P2], R2]], Call[P2, R2]]:
        """Declare the method below it as this call with another answer:
        ``finish(response, *args, **options)``."""

        def declare(signature: Callable[Concatenate[Any, P2], R2]) -> Call[P2, R2]:
            return Call(signature, **self._facts(finish=finish))

        return declare

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, instance: Calls, owner: type[Any]) -> Callable[P, R]: ...

    @overload
    def __get__(self, instance: AsyncCalls, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, R]]: ...

    def __get__(self, instance: object, owner: type[Any]) -> Any:
        return self._bound(instance, owner)


class Stream(_Declared, Generic[P, Y]):
    """An operation that streams: ``surface.name(...)`` returns an iterator of ``Y`` (an async
    iterator on an async surface). Input errors raise at the call, before anything is sent."""

    def _runners(self) -> tuple[Callable[..., Any], Callable[..., Any]]:
        op = self

        def sync(surface: Calls, *args: Any, **options: Any) -> Any:
            return surface._stream(op, args, options)

        def asynchronous(surface: AsyncCalls, *args: Any, **options: Any) -> Any:
            return surface._stream(op, args, options)

        return sync, asynchronous

    def answering(
        self, finish: Callable[..., Any]
    ) -> Callable[[Callable[Concatenate[Any, P2], Iterator[Y2]]], Stream[P2, Y2]]:
        """Declare the method below it as this stream with other items: ``finish(events)``,
        given the sync or async event stream, whichever the surface has."""

        def declare(signature: Callable[Concatenate[Any, P2], Iterator[Y2]]) -> Stream[P2, Y2]:
            return Stream(signature, **self._facts(finish=finish))

        return declare

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, instance: Calls, owner: type[Any]) -> Callable[P, Iterator[Y]]: ...

    @overload
    def __get__(self, instance: AsyncCalls, owner: type[Any]) -> Callable[P, AsyncIterator[Y]]: ...

    def __get__(self, instance: object, owner: type[Any]) -> Any:
        return self._bound(instance, owner)


def call(
    feature: Feature,
    *,
    build: str,
    hooks: Hooks,
    observed_as: str,
    example: tuple[tuple[Any, ...], Mapping[str, Any]],
    fixed: Mapping[str, Any] | None = None,
    cost: Cost = Cost.TOKENS,
    plan: str | None = None,
    finish: Callable[..., Any] | None = None,
) -> Callable[[Callable[Concatenate[Any, P], R]], Call[P, R]]:
    """Declare the method below it as an operation answered once."""

    def declare(signature: Callable[Concatenate[Any, P], R]) -> Call[P, R]:
        facts = {"fixed": fixed or {}, "cost": cost, "plan": plan, "finish": finish}
        return Call(
            signature, feature=feature, build=build, hooks=hooks, observed_as=observed_as, example=example, **facts
        )

    return declare


def stream(
    feature: Feature,
    *,
    build: str,
    hooks: Hooks,
    observed_as: str,
    example: tuple[tuple[Any, ...], Mapping[str, Any]],
    fixed: Mapping[str, Any] | None = None,
) -> Callable[[Callable[Concatenate[Any, P], Iterator[Y]]], Stream[P, Y]]:
    """Declare the method below it as a streamed operation (its events as they come)."""

    def declare(signature: Callable[Concatenate[Any, P], Iterator[Y]]) -> Stream[P, Y]:
        facts = {"fixed": fixed or {}, "cost": Cost.TOKENS, "plan": None, "finish": None}
        return Stream(
            signature, feature=feature, build=build, hooks=hooks, observed_as=observed_as, example=example, **facts
        )

    return declare
