"""``llm_core.batch.run``: a JSONL file (or an iterable) of items in, a JSONL file of results
out, every input id exactly once, resumable after a crash, ``kill -9`` or Ctrl-C.

Steps, each recorded in the job record beside the output (:mod:`llm_core.batch.record`):
ingest (every item validated, ids unique: typed errors before anything is uploaded), then in
batch mode submit each job, poll, and write each job's results; in local mode run the items as
single calls. Running again with the same output picks up where the last run stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from llm_core.batch.capability import BatchCapable
from llm_core.batch.chunks import Chunker, adopt_orphans
from llm_core.batch.jsonl import MAX_LINE_BYTES, read_items
from llm_core.batch.local import RateLimiter, run_items
from llm_core.batch.lock import RunLock
from llm_core.batch.observing import observed_run
from llm_core.batch.output import Output, Results
from llm_core.batch.record import (
    FETCHED,
    OPEN,
    SUBMITTED,
    SUBMITTING,
    JobRecord,
    RecordItems,
    picodollars_to_cost,
    record_path,
)
from llm_core.batch.types import (
    BatchStatus,
    ChatItem,
    DecisionItem,
    EmbeddingItem,
    JsonItem,
    item_from_json,
    item_to_json,
    parse_item,
)
from llm_core.errors import ConfigurationError, InvalidInputError, ProviderError, UnsupportedFeatureError
from llm_core.features import Feature, parse_features

Item = ChatItem | JsonItem | EmbeddingItem | DecisionItem
Mode = Literal["batch", "local"]


class RunSummary(BaseModel):
    """How a run stands: item counts, tokens and cost reported, and its provider jobs.

    ``cost`` sums the ``Usage.cost`` (US dollars) of the ``priced`` items that reported one;
    ``None`` when none did (unknown, never 0). ``chunks`` counts the run's provider jobs by
    their state in the record (open, submitting, submitted, fetched); ``jobs`` holds the
    provider's own status of those asked for."""

    output: Path
    record: Path
    mode: str
    provider: str
    total: int
    done: int
    failed: int
    tokens: int
    cost: Decimal | None = None
    priced: int = 0
    cancelled: bool = False
    chunks: dict[str, int] = {}
    jobs: list[BatchStatus] = []
    #: The output was changed or deleted since the run last wrote it: the counts are the
    #: record's, and the next run (or ``resume``) reads the output back and runs what it lacks.
    output_changed: bool = False

    @property
    def finished(self) -> bool:
        return self.done == self.total and not self.output_changed

    @property
    def fully_priced(self) -> bool:
        """Every item that succeeded reported its cost."""
        return self.priced >= self.done - self.failed


Progress = Callable[[RunSummary], None]


@observed_run  # observers see the run as one scope (docs/observers.md)
def run(
    input: str | Path | Iterable[Item | Mapping[str, Any]],  # noqa: A002 - the public keyword name
    *,
    output: str | Path,
    provider: Any = None,
    features: Iterable[Feature | str] | None = None,
    mode: Mode = "batch",
    registry: Any = None,
    wait: bool = True,
    poll_interval: float = 30.0,
    concurrency: int = 16,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    chunk_size: int | None = None,
    progress: Progress | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> RunSummary:
    """Run every item of ``input`` once; results go to ``output`` (JSONL), the job record to
    ``OUTPUT.job.sqlite``.

    ``provider``: a provider instance or identifier; or ``features``: in local mode a router
    over every provider offering them (fallback), in batch mode the best one with a batch API.
    ``mode="batch"`` uses the provider's batch API (``wait=False`` submits every job, writes the
    results of those already final and returns: run again to collect the rest);
    ``mode="local"`` makes single calls, ``concurrency`` at a time, within
    ``requests_per_minute`` / ``tokens_per_minute``. One runner at a time writes an output: a
    second one raises :class:`~llm_core.batch.errors.BatchBusyError`. An input line longer than
    ``max_line_bytes`` (32 MiB by default) is refused before it is parsed.
    """
    if mode not in ("batch", "local"):
        raise InvalidInputError(f"mode must be 'batch' or 'local', not {mode!r}")
    out = Path(output)
    target = resolve_target(provider, features, mode, registry)
    with RunLock(out):  # before the record is opened: a second runner refuses at once
        record = JobRecord(record_path(out))
        writer = Output(out)
        try:
            if record.get("ingested") is None:
                _ingest(record, input, target, mode, chunk_size, max_line_bytes)
            _check_same_run(record, mode, target)
            writer.reconcile(record)  # the output is the truth: what it lacks runs again
            if mode == "local":
                limiter = RateLimiter(requests_per_minute, tokens_per_minute)
                _run_local(record, writer, target, concurrency, limiter, progress)
            else:
                _run_batch(record, writer, target, wait, poll_interval, progress)
            return summary(record, out)
        finally:
            writer.close()
            record.close()


def resolve_target(provider: Any, features: Iterable[Feature | str] | None, mode: Mode, registry: Any) -> Any:
    """The provider (or, local with features, the router) a run sends to."""
    if (provider is None) == (features is None):
        raise InvalidInputError("pass either provider=... or features=... (one of them)")
    if registry is None and (isinstance(provider, str) or features is not None):
        from llm_core import get_registry

        registry = get_registry()
    if isinstance(provider, str):
        provider = registry.get(provider)
    if features is not None:
        wanted = parse_features(features)
        if mode == "local":
            from llm_core.routing import Router

            return Router(registry, wanted)
        batching = [c for c in registry.candidates(*wanted) if Feature.BATCH in c.spec.features]
        if not batching:
            raise UnsupportedFeatureError(
                f"no provider offering {', '.join(sorted(f.value for f in wanted))} has a batch API; use mode='local'"
            )
        provider = registry.get(batching[0].identifier)
    if mode == "batch" and provider.batch is not None:
        provider.batch.require()
    elif mode == "batch":
        raise UnsupportedFeatureError(
            f"{getattr(provider, 'name', provider)!s} has no batch API; use mode='local'",
            provider=getattr(provider, "identifier", None),
        )
    return provider


def _name(target: Any) -> str:
    identifier = getattr(target, "identifier", None)
    if identifier is not None:
        return str(identifier)
    return "router:" + ",".join(sorted(f.value for f in getattr(target, "features", ())))


def _check_same_run(record: JobRecord, mode: str, target: Any) -> None:
    if record.get("mode") != mode or record.get("provider") != _name(target):
        raise ConfigurationError(
            f"{record.path} belongs to a {record.get('mode')} run on {record.get('provider')}; "
            f"resume it with the same settings, or choose another output"
        )


def _lines(source: str | Path | Iterable[Item | Mapping[str, Any]], max_line_bytes: int) -> Iterator[tuple[str, Item]]:
    """``(where, item)`` from a JSONL file (streamed, blank lines skipped) or an iterable."""
    if isinstance(source, str | Path):
        yield from read_items(source, max_line_bytes=max_line_bytes)
        return
    for number, value in enumerate(source, 1):
        yield f"item {number}", parse_item(value, where=f"item {number}")


def _ingest(
    record: JobRecord, source: Any, target: Any, mode: str, chunk_size: int | None, max_line_bytes: int
) -> None:
    """Every item validated into the record (nothing is sent yet); batch items get their job."""
    chunker = Chunker(record, target, chunk_size or target.batch.max_items) if mode == "batch" else None
    try:
        record.begin()
        for position, (where, item) in enumerate(_lines(source, max_line_bytes), 1):
            chunk = None if chunker is None else chunker.assign(item)
            if not record.add_item(item.custom_id, position, item_to_json(item), chunk):
                raise InvalidInputError(f"{where}: duplicate custom_id {item.custom_id!r}")
        if record.counts()["total"] == 0:
            raise InvalidInputError("the input has no items")
        record.set("mode", mode)
        record.set("provider", _name(target))
        record.set("ingested", str(time.time()))
        record.commit()
    except BaseException:
        # nothing was sent: a corrected input starts afresh
        record.rollback()
        record.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(record.path) + suffix).unlink(missing_ok=True)
        raise


# -- local mode -------------------------------------------------------------------------------


def _run_local(
    record: JobRecord, writer: Output, target: Any, concurrency: int, limiter: RateLimiter, progress: Progress | None
) -> None:
    def pending() -> Iterator[tuple[Item, str]]:
        after = 0
        while True:
            page = record.pending(after, 1000)
            if not page:
                return
            for position, line in page:
                yield item_from_json(line, where=f"item at {position}"), line
            after = page[-1][0]

    results = Results(record, writer, _reporter(record, writer, progress))

    def on_result(item: Item, result: Any) -> None:
        results.add(item.custom_id, item.kind, result)

    try:
        asyncio.run(run_items(target, pending(), on_result, concurrency=concurrency, limiter=limiter))
    finally:
        results.commit(final=True)


# -- batch mode -------------------------------------------------------------------------------


def _run_batch(
    record: JobRecord,
    writer: Output,
    provider: BatchCapable,
    wait: bool,
    poll_interval: float,
    progress: Progress | None,
) -> None:
    """Submit every open job, then poll the submitted ones and write the results of each that
    is final: once when ``wait`` is false, until none is left when it is true."""
    adopt_orphans(record, provider)
    for chunk, _group, tag, _job_id, state in record.chunks(OPEN, SUBMITTING):
        found = provider.batch.find(tag) if state == SUBMITTING else None
        if found is None and record.get("cancelled"):
            _cancel_unsent(record, writer, provider, chunk, progress)
            continue
        if found is None:
            if not record.detach_done(chunk):  # every item of it is in the output already
                record.set_chunk(chunk, FETCHED)
                continue
            record.set_chunk(chunk, SUBMITTING)  # before the create call: a crash now looks it up by tag
            found = provider.batch.submit(record.chunk_items(chunk), tag=tag).id
        record.set_chunk(chunk, SUBMITTED, found)
    while True:
        waiting = record.chunks(SUBMITTED)
        if not waiting:
            return
        statuses: list[BatchStatus] = []
        for chunk, _group, _tag, job_id, _state in waiting:
            assert job_id is not None
            job = _job(record, provider, chunk, job_id)
            status = job.status()
            statuses.append(status)
            if status.final:
                _fetch(record, writer, job, progress)
                record.set_chunk(chunk, FETCHED)
        if progress is not None:
            progress(summary(record, writer.path, statuses))
        if not wait:
            return
        if record.chunks(SUBMITTED):
            time.sleep(poll_interval)


def _job(record: JobRecord, provider: BatchCapable, chunk: int, job_id: str) -> Any:
    ids = record.chunk_ids(chunk)
    return provider.batch.job(job_id, order=ids, items=RecordItems(record, ids))


def _reporter(record: JobRecord, writer: Output, progress: Progress | None) -> Callable[[], None] | None:
    return None if progress is None else lambda: progress(summary(record, writer.path))


def _fetch(record: JobRecord, writer: Output, job: Any, progress: Progress | None) -> None:
    results = Results(record, writer, _reporter(record, writer, progress))
    for custom_id, result in job.results():
        if record.is_done(custom_id):  # written before a crash
            continue
        results.add(custom_id, job.items[custom_id].kind, result)
    results.commit(final=True)


def _cancel_unsent(
    record: JobRecord, writer: Output, provider: BatchCapable, chunk: int, progress: Progress | None
) -> None:
    """A job of a cancelled run that was never created: each of its items gets its error."""
    results = Results(record, writer, _reporter(record, writer, progress))
    for item in record.chunk_items(chunk):
        if not record.is_done(item.custom_id):
            error = ProviderError("the run was cancelled before this item was submitted", provider=provider.identifier)
            results.add(item.custom_id, item.kind, error)
    results.commit(final=True)
    record.set_chunk(chunk, FETCHED)


def summary(record: JobRecord, output: Path, jobs: Iterable[BatchStatus] = ()) -> RunSummary:
    """The run's counts from its record (and ``jobs``, the job states last asked for)."""
    counts = record.counts()
    return RunSummary(
        output=output,
        record=record.path,
        mode=record.get("mode") or "",
        provider=record.get("provider") or "",
        total=counts["total"],
        done=counts["done"],
        failed=counts["failed"],
        tokens=counts["tokens"],
        cost=picodollars_to_cost(counts["cost_picodollars"]) if counts["priced"] else None,
        priced=counts["priced"],
        cancelled=record.get("cancelled") is not None,
        chunks=record.chunk_states(),
        jobs=list(jobs),
        output_changed=record.output_changed(output),
    )


def load_summary(output: str | Path) -> RunSummary:
    """The summary of an earlier run from its record (nothing is sent)."""
    out = Path(output)
    path = record_path(out)
    if not path.exists():
        raise InvalidInputError(f"no job record at {path}")
    record = JobRecord(path)
    try:
        return summary(record, out)
    finally:
        record.close()


__all__ = ["RunSummary", "load_summary", "resolve_target", "run"]
