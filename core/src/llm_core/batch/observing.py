"""What observers hear of batches: a whole :func:`llm_core.batch.run` and each reading of a
job's results are scopes (``llm_core_batch_start`` / ``llm_core_batch_end``, ``operation``
``run`` or ``results``), each item's result an ``llm_core_batch_item`` event (see
:mod:`llm_core.hooks`). With no observer installed everything passes through untouched."""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any, ParamSpec, Protocol, TypeVar

from llm_core.batch.types import Item, Result
from llm_core.errors import LLMError
from llm_core.observe import observers
from llm_core.observe.scopes import Scope, open_scope, reset, scoped_iter

P = ParamSpec("P")
R = TypeVar("R")


class _Job(Protocol):
    id: str
    order: list[str]
    items: Mapping[str, Item]

    @property
    def provider(self) -> Any: ...


def observed_results(job: _Job, pairs: Iterator[Result]) -> Generator[Result]:
    """``pairs`` as they come; observers hear of the reading and of every item (the scope opens
    at the first item asked for, so a reader that never starts leaves nothing open)."""
    identifier = job.provider.identifier
    scope = open_scope(
        "llm_core_batch_start",
        "llm_core_batch_end",
        operation="results",
        provider=identifier,
        job_id=job.id,
        items=len(job.order),
    )
    if scope is None:
        yield from pairs
        return
    counts = [0, 0]  # read, failed

    def heard(pair: Result) -> None:
        counts[0] += 1
        counts[1] += isinstance(pair[1], LLMError)
        _item(scope, job, identifier, pair)

    try:
        yield from scoped_iter(scope, pairs, heard)
    except BaseException as exc:
        scope.close(provider=identifier, job_id=job.id, read=counts[0], failed=counts[1], error=_failure(exc))
        raise
    scope.close(provider=identifier, job_id=job.id, read=counts[0], failed=counts[1], error=None)


def _failure(exc: BaseException) -> BaseException | None:
    return None if isinstance(exc, GeneratorExit) else exc  # a reader that stopped early did not fail


def _item(scope: Scope, job: _Job, identifier: str, pair: Result) -> None:
    custom_id, result = pair
    item = job.items.get(custom_id)
    failed = isinstance(result, LLMError)
    usage = None if failed else getattr(result, "usage", None)
    options = item.options if item is not None else {}
    event = {
        "scope_id": scope.id,
        "provider": identifier,
        "job_id": job.id,
        "custom_id": custom_id,
        "kind": getattr(item, "kind", None),
        "model": options.get("model") or getattr(result, "model", None),
        "usage": usage.model_dump() if usage is not None else None,
        "response_model": None if failed else getattr(result, "model", None),
        "response_id": None if failed else getattr(result, "response_id", None),
        "finish_reason": None if failed else getattr(result, "finish_reason", None),
        "response": None if failed else result,
        "error": result if failed else None,
    }
    observers.emit("llm_core_batch_item", event)


def observed_run(run: Callable[P, R]) -> Callable[P, R]:
    """``run`` as a scope: the calls, job submissions, polls and result readings it makes nest
    under it (local mode's calls too: ``asyncio.run`` copies the context)."""

    @functools.wraps(run)
    def observed(*args: P.args, **kwargs: P.kwargs) -> R:
        scope = open_scope(
            "llm_core_batch_start", "llm_core_batch_end", operation="run", mode=kwargs.get("mode", "batch")
        )
        if scope is None:
            return run(*args, **kwargs)
        token = scope.enter()
        try:
            summary = run(*args, **kwargs)
        except BaseException as exc:
            reset(token)
            scope.close(error=exc)
            raise
        reset(token)
        scope.close(
            provider=getattr(summary, "provider", None),
            read=getattr(summary, "done", 0),
            failed=getattr(summary, "failed", 0),
            error=None,
        )
        return summary

    return observed
