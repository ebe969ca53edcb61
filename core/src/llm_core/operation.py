"""What an operation is, and how its declaration becomes a method of every surface.

An :class:`Operation` holds the facts of one public call (see :mod:`llm_core.operations`, where
every operation is declared). Declared in a class with :func:`call` or :func:`stream`, it is a
descriptor: read on a sync surface (a :class:`Calls`: a provider, a router) it is a method that
runs ``surface._call(op, args, options)`` (or ``_stream``); on an async surface
(:class:`AsyncCalls`: ``provider.aio``, ``router.aio``) the same, awaited. The method has the
declared name, docstring and signature, for ``help()``, IDEs and type checkers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from llm_core.features import Feature
from llm_core.wire import Route

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
R2 = TypeVar("R2")
Y = TypeVar("Y")
Y2 = TypeVar("Y2")


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


@dataclass(frozen=True, eq=False)
class Operation:
    """The facts of one operation (see the module docstring); shared by :class:`Call` and
    :class:`Stream`, which turn a declaration into the methods of every surface."""

    name: str
    doc: str
    feature: Feature
    #: How the call goes through a provider: its request builder, plan and plugin hooks.
    route: Route[Any]
    #: The operation name observers hear (``event["operation"]``).
    observed_as: str
    cost: Cost
    #: The public answer made from the response: ``finish(response, *args, **options)``.
    finish: Callable[..., Any] | None
    #: A call the testing kit makes to probe the operation: ``(args, options)``.
    example: tuple[tuple[Any, ...], Mapping[str, Any]]

    @property
    def streams(self) -> bool:
        return isinstance(self, Stream)

    def implemented_by(self, cls: type) -> bool:
        """Whether ``cls`` has every plugin method of this operation's route."""
        return not self.route.missing(cls)

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
    def __get__(self, instance: AsyncCalls, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, R]]: ...

    @overload
    def __get__(self, instance: object, owner: type[Any]) -> Callable[P, R]: ...

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
    def __get__(self, instance: AsyncCalls, owner: type[Any]) -> Callable[P, AsyncIterator[Y]]: ...

    @overload
    def __get__(self, instance: object, owner: type[Any]) -> Callable[P, Iterator[Y]]: ...

    def __get__(self, instance: object, owner: type[Any]) -> Any:
        return self._bound(instance, owner)


def call(
    feature: Feature,
    *,
    route: Route[Any],
    observed_as: str,
    example: tuple[tuple[Any, ...], Mapping[str, Any]],
    cost: Cost = Cost.TOKENS,
    finish: Callable[..., Any] | None = None,
) -> Callable[[Callable[Concatenate[Any, P], R]], Call[P, R]]:
    """Declare the method below it as an operation answered once."""

    def declare(signature: Callable[Concatenate[Any, P], R]) -> Call[P, R]:
        return Call(
            signature, feature=feature, route=route, observed_as=observed_as, example=example, cost=cost, finish=finish
        )

    return declare


def stream(
    feature: Feature,
    *,
    route: Route[Any],
    observed_as: str,
    example: tuple[tuple[Any, ...], Mapping[str, Any]],
) -> Callable[[Callable[Concatenate[Any, P], Iterator[Y]]], Stream[P, Y]]:
    """Declare the method below it as a streamed operation (its events as they come)."""

    def declare(signature: Callable[Concatenate[Any, P], Iterator[Y]]) -> Stream[P, Y]:
        return Stream(
            signature,
            feature=feature,
            route=route,
            observed_as=observed_as,
            example=example,
            cost=Cost.TOKENS,
            finish=None,
        )

    return declare
