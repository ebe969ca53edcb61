"""``llm-core batch submit | status | results | cancel``: batch runs from the shell.

A run is named by its number in the jobs index (:mod:`llm_core.cli.batchjobs`) or by its output
path; its state lives in the job record beside the output, so every command works from another
shell, after ``submit`` returned or was stopped. ``submit`` again on the same input and output
resumes (the runner never sends an item twice nor writes one twice).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from llm_core.cli import batchjobs
from llm_core.cli.output import Progress, emit_json, note, table
from llm_core.errors import InvalidInputError, LLMError

if TYPE_CHECKING:
    from llm_core.batch.runner import RunSummary

SUMMARY_HEADERS = ["job", "provider", "mode", "items", "done", "failed", "pending", "tokens", "cost", "state"]
JOB_HEADERS = ["provider job", "state", "provider state", "completed", "failed", "total"]


def cmd_batch(args: argparse.Namespace) -> int:
    action: int = {"submit": _submit, "status": _status, "results": _results, "cancel": _cancel}[args.batch_command](
        args
    )
    return action


# -- the commands -----------------------------------------------------------------------------


def _submit(args: argparse.Namespace) -> int:
    from llm_core.batch.record import record_path
    from llm_core.batch.runner import run

    if not args.provider and not args.features:
        raise InvalidInputError("say where the items go: --provider P, or --feature F (repeatable)")
    source: Path = args.input
    if not source.is_file():
        raise FileNotFoundError(f"no input file {source}")
    output: Path = args.output or source.with_name(source.stem + ".results.jsonl")
    mode: Literal["batch", "local"] = "local" if args.local else "batch"
    number = batchjobs.remember(output, source)
    bar = _Bar(f"{mode} {args.provider or ', '.join(args.features)}")
    try:
        summary = run(
            source,
            output=output,
            provider=args.provider,
            features=args.features or None,
            mode=mode,
            wait=args.wait,
            poll_interval=args.poll_interval,
            concurrency=args.concurrency,
            requests_per_minute=args.requests_per_minute,
            tokens_per_minute=args.tokens_per_minute,
            progress=bar,
        )
    finally:
        bar.close()
        if not record_path(output).exists():  # the input was refused: nothing to remember
            batchjobs.forget(output)
    _show(number, summary, args.json)
    if not args.json and not summary.finished:
        note(f"`llm-core batch status {number}` shows how it goes; `llm-core batch results {number}` collects it")
    return 0


def _status(args: argparse.Namespace) -> int:
    from llm_core.batch.runner import load_summary

    if args.job is None:
        return _list(args.json)
    number, output = batchjobs.resolve(args.job)
    summary = load_summary(output)
    if summary.mode == "batch" and summary.chunks.get("submitted"):
        from llm_core.batch.control import job_statuses

        try:
            summary = job_statuses(output)
        except LLMError as exc:  # the record still tells what was written
            note(f"the provider was not asked how its jobs stand: {exc}")
    _show(number, summary, args.json)
    return 0


def _results(args: argparse.Namespace) -> int:
    from llm_core.batch.control import resume
    from llm_core.batch.runner import load_summary

    number, output = batchjobs.resolve(args.job)
    summary = load_summary(output)
    if not summary.finished:
        bar = _Bar(f"{summary.mode} {summary.provider}")
        try:
            summary = resume(output, wait=not args.no_wait, poll_interval=args.poll_interval, progress=bar)
        finally:
            bar.close()
    target: Path | None = args.output
    if target is None:
        _copy(output, sys.stdout)
    elif not (target.exists() and target.resolve() == output.resolve()):
        _write_atomically(output, target)
    _show(number, summary, args.json, stream=sys.stderr if target is None else None)
    if not summary.finished:
        note(f"{summary.total - summary.done} items are not done yet: run `llm-core batch results {args.job}` again")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    from llm_core.batch.control import cancel

    number, output = batchjobs.resolve(args.job)
    summary = cancel(output)
    _show(number, summary, args.json)
    if args.json:
        return 0
    if summary.finished:
        note("nothing left to cancel: every item of this run is in its output")
    else:
        note(f"cancelled; `llm-core batch results {args.job}` writes every item: its result, or why it did not run")
    return 0


def _list(as_json: bool) -> int:
    from llm_core.batch.errors import BatchFileError
    from llm_core.batch.runner import load_summary

    rows: list[list[Any]] = []
    found: list[dict[str, Any]] = []
    for number, source, output in batchjobs.known():
        try:
            summary = load_summary(output)
        except (InvalidInputError, BatchFileError) as exc:  # its output was moved or deleted, or is damaged
            state = "record damaged" if isinstance(exc, BatchFileError) else "record missing"
            rows.append([number, "", "", "", "", "", "", "", "", state, output])
            found.append({"job": number, "input": str(source), "output": str(output), "state": state})
            continue
        rows.append([*_row(number, summary), output])
        found.append({"job": number, "input": str(source), "state": _state(summary), **_data(summary)})
    if as_json:
        emit_json({"jobs": found, "index": str(batchjobs.jobs_path())})
    elif rows:
        table([*SUMMARY_HEADERS, "output"], rows)
    else:
        note(f"no batch jobs yet ({batchjobs.jobs_path()}): llm-core batch submit IN.jsonl --provider P")
    return 0


# -- output -----------------------------------------------------------------------------------


class _Bar:
    """The runner's progress callback: a bar on stderr at a terminal (see output.Progress)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.progress: Progress | None = None

    def __call__(self, summary: RunSummary) -> None:
        if self.progress is None:
            self.progress = Progress(summary.total, self.label)
        self.progress.advance(summary.done - self.progress.done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()


def dollars(cost: Decimal) -> str:
    """``$1.25``, ``$0.000375``: cents always, then up to six decimals."""
    if 0 < cost < Decimal("0.000001"):
        return "<$0.000001"
    text = f"{cost:.6f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


def cost_text(summary: RunSummary) -> str:
    """The run's cost: unknown when no item reported one (never $0), marked when only some did."""
    if summary.cost is None:
        return "unknown"
    text = dollars(summary.cost)
    if not summary.fully_priced:
        text += f" ({summary.priced} of {summary.done - summary.failed} priced)"
    return text


def _state(summary: RunSummary) -> str:
    if summary.output_changed:  # `results` reads it back and runs what it lost
        return "output changed"
    if summary.cancelled:
        return "cancelled"
    if summary.finished:
        return "finished"
    if summary.mode == "local":
        return "incomplete"
    if summary.chunks.get("submitted") or summary.chunks.get("submitting"):
        return "submitted"
    return "not submitted"


def _row(number: int | None, summary: RunSummary) -> list[Any]:
    return [
        number if number is not None else "-",
        summary.provider,
        summary.mode,
        summary.total,
        summary.done,
        summary.failed,
        summary.total - summary.done,
        summary.tokens,
        cost_text(summary),
        _state(summary),
    ]


def _data(summary: RunSummary) -> dict[str, Any]:
    data = summary.model_dump(mode="json")
    data["finished"] = summary.finished
    return data


def _count(value: int | None) -> str:
    return "?" if value is None else str(value)


def _show(number: int | None, summary: RunSummary, as_json: bool, stream: TextIO | None = None) -> None:
    """The summary table (and the provider's jobs when they were asked), or the JSON."""
    if as_json:
        emit_json({"job": number, "state": _state(summary), **_data(summary)}, stream=stream)
        return
    table(SUMMARY_HEADERS, [_row(number, summary)], stream=stream)
    if summary.jobs:
        rows = [
            [j.id, j.state.value, j.provider_state or "", _count(j.completed), _count(j.failed), _count(j.total)]
            for j in summary.jobs
        ]
        print(file=stream or sys.stdout)
        table(JOB_HEADERS, rows, stream=stream)
    print(f"output: {summary.output}", file=stream or sys.stdout)


def _copy(output: Path, stream: TextIO) -> None:
    if output.exists():
        with open(output, encoding="utf-8") as source:
            shutil.copyfileobj(source, stream)
    stream.flush()


def _write_atomically(output: Path, target: Path) -> None:
    """``target`` gets the whole output or stays as it was (a temporary file renamed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            _copy(output, stream)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
