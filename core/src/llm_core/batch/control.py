"""An earlier run, named by its output, from any process: :func:`resume` it, ask the provider
how its jobs stand (:func:`job_statuses`), or :func:`cancel` it.

Each reads the mode and provider from the job record beside the output and resolves the
provider by its identifier from the registry, so the calling process uses its own key and
settings (environment or config file), as a worker does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from llm_core.batch.capability import BatchCapable
from llm_core.batch.record import SUBMITTED, SUBMITTING, JobRecord, record_path
from llm_core.batch.runner import Mode, Progress, RunSummary, load_summary, resolve_target, run, summary
from llm_core.batch.types import BatchStatus
from llm_core.errors import InvalidInputError

ROUTER_PREFIX = "router:"


def _open(output: str | Path) -> JobRecord:
    path = record_path(Path(output))
    if not path.exists():
        raise InvalidInputError(f"no job record at {path}")
    return JobRecord(path)


def stored_target(output: str | Path, registry: Any = None) -> Any:
    """The provider (or router) the run of ``output`` sends to, built in this process."""
    run_of = load_summary(output)
    if not run_of.provider:  # a runner stopped while it read the input: nothing was sent
        raise InvalidInputError(
            f"the run of {output} never finished reading its input: run it again with its input "
            "(llm_core.batch.run, or llm-core batch submit)"
        )
    mode: Mode = "local" if run_of.mode == "local" else "batch"
    if run_of.provider.startswith(ROUTER_PREFIX):
        features = run_of.provider.removeprefix(ROUTER_PREFIX).split(",")
        return resolve_target(None, features, mode, registry)
    return resolve_target(run_of.provider, None, mode, registry)


def resume(
    output: str | Path,
    *,
    registry: Any = None,
    wait: bool = True,
    poll_interval: float = 30.0,
    concurrency: int = 16,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """Go on with the run of ``output`` as :func:`~llm_core.batch.runner.run` would with its
    first settings: batch mode collects the jobs that are final (all of them with ``wait``),
    local mode runs the items not yet done."""
    mode = load_summary(output).mode
    return run(
        (),  # ingested already: the items come from the record
        output=output,
        provider=stored_target(output, registry),
        mode="local" if mode == "local" else "batch",
        wait=wait,
        poll_interval=poll_interval,
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
        progress=progress,
    )


def _batch_provider(output: str | Path, registry: Any) -> BatchCapable:
    if load_summary(output).mode == "local":
        raise InvalidInputError(
            f"{output} is a local run: it has no provider jobs (stop a running local run with Ctrl-C)"
        )
    provider: BatchCapable = stored_target(output, registry)
    return provider


def job_statuses(output: str | Path, *, registry: Any = None) -> RunSummary:
    """The run's summary with the provider's status of every job submitted and not yet fetched
    (one status call each; nothing is fetched or written)."""
    provider = _batch_provider(output, registry)
    record = _open(output)
    try:
        statuses = [
            provider.batch.job(job_id, order=(), items={}).status()
            for _chunk, _group, _tag, job_id, _state in record.chunks(SUBMITTED)
            if job_id is not None
        ]
        return summary(record, Path(output), statuses)
    finally:
        record.close()


def cancel(output: str | Path, *, registry: Any = None) -> RunSummary:
    """Cancel the run of ``output``: every submitted job is cancelled at the provider, and no
    job not yet created will be. Its items still come out once each: those that ran with
    their results, the others with a ``ProviderError`` (after the next :func:`resume`). A
    finished run (every item in its output) is left as it is."""
    provider = _batch_provider(output, registry)
    record = _open(output)
    try:
        done = summary(record, Path(output))
        if done.finished:  # every item is in the output: there is nothing to cancel, it stays finished
            return done
        record.set("cancelled", str(time.time()))  # a runner reads it before each create call
        statuses: list[BatchStatus] = []
        for chunk, _group, tag, job_id, state in record.chunks(SUBMITTING, SUBMITTED):
            if state == SUBMITTING:  # the create call may have been made: look the job up
                job_id = provider.batch.find(tag)
                if job_id is None:
                    continue  # never created: the next run writes its items' errors
                record.set_chunk(chunk, SUBMITTED, job_id)
            if job_id is not None:
                job = provider.batch.job(job_id, order=(), items={})
                status = job.status()  # a job that is final already cannot be cancelled
                statuses.append(status if status.final else job.cancel())
        return summary(record, Path(output), statuses)
    finally:
        record.close()


__all__ = ["cancel", "job_statuses", "resume", "stored_target"]
