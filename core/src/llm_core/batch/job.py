"""``BatchJob``: one provider job, sync; ``job.aio`` is its async twin (same method names)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from llm_core.batch.observing import observed_results
from llm_core.batch.types import BatchState, BatchStatus, Item, Result
from llm_core.errors import InvalidInputError, LLMError, ProviderError, ProviderTimeoutError

R = TypeVar("R")


class Executor(Protocol):
    """The provider's :class:`~llm_core.provider.execution.CallExecutor`, as a job uses it."""

    def execute(self, operation: str, model: str | None, send: Callable[..., R], *args: Any) -> R: ...

    async def aexecute(self, operation: str, model: str | None, send: Callable[..., Awaitable[R]], *args: Any) -> R: ...


class BatchBackend(Protocol):
    """What a job asks of the batch API that submitted it (:class:`~llm_core.batch.BatchAPI`
    implements it). A protocol, so that this module does not import the capability that builds
    jobs."""

    @property
    def identifier(self) -> str: ...

    @property
    def executor(self) -> Executor: ...

    def _send_batch_get(self, job_id: str) -> Any: ...

    async def _asend_batch_get(self, job_id: str) -> Any: ...

    def _send_batch_cancel(self, job_id: str) -> Any: ...

    async def _asend_batch_cancel(self, job_id: str) -> Any: ...

    async def _asend_batch_output(self, raw: Any) -> Iterable[Any]: ...

    def parse_batch_status(self, raw: Any) -> BatchStatus: ...

    def parse_batch_output(
        self, records: Iterable[Any], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]: ...

    def results_of(self, raw: Any, order: Sequence[str], items: Mapping[str, Item]) -> Iterator[Result]: ...

    def _pair(
        self, status: BatchStatus, parsed: Iterable[Result], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]: ...


class BatchJob:
    """A submitted job: ``status()``, ``wait()``, ``results()``, ``cancel()``.

    ``order`` is the job's ids in submission order, ``items`` gives each id's item (the results
    are parsed against the request it builds, exactly as a single call's response is)."""

    def __init__(self, provider: BatchBackend, job_id: str, *, order: Sequence[str], items: Mapping[str, Item]) -> None:
        self.provider = provider
        self.id = job_id
        self.order = list(order)
        self.items = items
        self.aio = AsyncBatchJob(self)

    def __repr__(self) -> str:
        return f"<BatchJob {self.id!r} on {self.provider.identifier!r}: {len(self.order)} items>"

    def _raw(self) -> object:
        p = self.provider
        return p.executor.execute("batch_status", None, p._send_batch_get, self.id)

    def status(self) -> BatchStatus:
        """The job's state and counts, asked of the provider now."""
        return self.provider.parse_batch_status(self._raw())

    def wait(self, poll_interval: float = 30.0, *, timeout: float | None = None) -> BatchStatus:
        """Poll every ``poll_interval`` seconds until the job is final; ``timeout`` bounds the
        wait (:class:`ProviderTimeoutError` after it, the job left running)."""
        _check_interval(poll_interval)
        started = time.monotonic()
        while True:
            status = self.status()
            if status.final:
                return status
            _check_timeout(self, started, timeout)
            time.sleep(poll_interval)

    def results(self) -> Iterator[Result]:
        """``(custom_id, response | LLMError)`` for every item once, in the provider's order
        then the items it gave no record for. The job must be final."""
        raw = self._raw()
        _check_final(self.provider.parse_batch_status(raw), self.id)
        return observed_results(self, self.provider.results_of(raw, self.order, self.items))

    def cancel(self) -> BatchStatus:
        """Ask the provider to cancel; items that already ran keep their results."""
        p = self.provider
        p.executor.execute("batch_cancel", None, p._send_batch_cancel, self.id)
        return self.status()


class AsyncBatchJob:
    """``job.aio``: the async twins of :class:`BatchJob`'s methods."""

    def __init__(self, job: BatchJob) -> None:
        self._job = job

    async def _raw(self) -> object:
        p = self._job.provider
        return await p.executor.aexecute("batch_status", None, p._asend_batch_get, self._job.id)

    async def status(self) -> BatchStatus:
        return self._job.provider.parse_batch_status(await self._raw())

    async def wait(self, poll_interval: float = 30.0, *, timeout: float | None = None) -> BatchStatus:
        _check_interval(poll_interval)
        started = time.monotonic()
        while True:
            status = await self.status()
            if status.final:
                return status
            _check_timeout(self._job, started, timeout)
            await asyncio.sleep(poll_interval)

    async def results(self) -> AsyncIterator[Result]:
        job, p = self._job, self._job.provider
        raw = await self._raw()
        status = p.parse_batch_status(raw)
        _check_final(status, job.id)
        records = await p._asend_batch_output(raw)
        pairs: Generator[Result] = observed_results(
            job, p._pair(status, p.parse_batch_output(records, job.order, job.items), job.order, job.items)
        )
        try:
            for pair in pairs:
                yield pair
        finally:
            pairs.close()  # a reader that stops early ends the observed reading here, not at collection

    async def cancel(self) -> BatchStatus:
        p = self._job.provider
        await p.executor.aexecute("batch_cancel", None, p._asend_batch_cancel, self._job.id)
        return await self.status()


def missing_result(provider: BatchBackend, status: BatchStatus) -> LLMError:
    """The error of an item the provider gave no record for: why depends on how the job ended."""
    name = provider.identifier
    if status.state is BatchState.EXPIRED:
        return ProviderTimeoutError(f"batch {status.id} expired before this item ran", provider=name)
    if status.state is BatchState.CANCELLED:
        return ProviderError(f"batch {status.id} was cancelled before this item ran", provider=name)
    if status.state is BatchState.FAILED:
        return ProviderError(f"batch {status.id} failed: {status.error or 'no reason given'}", provider=name)
    return ProviderError(f"batch {status.id} completed without a result for this item", provider=name)


def _check_interval(poll_interval: float) -> None:
    if not poll_interval > 0:
        raise InvalidInputError(f"poll_interval must be a positive number of seconds, got {poll_interval!r}")


def _check_timeout(job: BatchJob, started: float, timeout: float | None) -> None:
    if timeout is not None and time.monotonic() - started >= timeout:
        raise ProviderTimeoutError(
            f"batch {job.id} did not finish within {timeout} s (it goes on running)", provider=job.provider.identifier
        )


def _check_final(status: BatchStatus, job_id: str) -> None:
    if not status.final:
        raise InvalidInputError(f"batch {job_id} is {status.state.value}: wait() for it before results()")
