"""The JSONL output of a run, and the result lines on their way into it.

The output is the truth, the job record a cache of it: every run starts by reading the output
back (:meth:`Output.reconcile`). An id with a whole, well-formed line in it is done, every other
item runs again (a batch job whose results are missing from it is read again from the
provider); a last line cut short by a crash is dropped; a damaged line, an id twice, or an id
that is not in the input is a :class:`~llm_core.batch.errors.BatchFileError` naming the file and
the line. So a deleted record is rebuilt from the input and the output, and a truncated or
deleted output runs what it lost.

A result line reaches the disk (flushed and synced) before the record marks its item done, so
nothing is written twice.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from llm_core.batch.calls import result_line, usage_tokens
from llm_core.batch.errors import BatchFileError
from llm_core.batch.record import JobRecord

#: Output and record are synced after this many result lines, or this many seconds.
SYNC_EVERY = 200
SYNC_SECONDS = 1.0
#: Progress is reported at most this often (each report counts the whole record).
PROGRESS_SECONDS = 0.25


class Output:
    """The JSONL output, appended to; ``reconcile`` makes record and output agree after a crash."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: Any = None

    def reconcile(self, record: JobRecord) -> None:
        """Make the record say what the output holds (see the module's docstring). Raises
        :class:`BatchFileError` naming the line that is damaged, twice there, or not this run's;
        then neither the output nor the record is changed."""
        record.begin()
        try:
            record.forget_results()
            if self.path.exists():
                self._read_back(record)
            record.reopen_chunks()
            record.set_output_stamp(self.path)
            record.commit()
        except BaseException:
            record.rollback()
            raise

    def _read_back(self, record: JobRecord) -> None:
        with open(self.path, "rb+") as handle:
            keep = 0
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    keep += len(raw)
                    continue
                complete = raw.endswith(b"\n")
                try:
                    line = self._result_line(raw, number, record)
                except BatchFileError:
                    if complete:
                        raise
                    break  # the last line, cut short by a crash: dropped, its item runs again
                record.mark_done(line["custom_id"], bool(line["ok"]), tokens_of(line), cost_of(line))
                keep += len(raw)
                if not complete:  # whole, only its newline is missing (an editor's save)
                    handle.seek(keep)
                    handle.write(b"\n")
                    keep += 1
                    break
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())

    def _result_line(self, raw: bytes, number: int, record: JobRecord) -> dict[str, Any]:
        """One output line, checked: a result of this run's input, not seen before."""
        where = f"{self.path}: line {number}: "
        fix = "; the output was changed after the run wrote it: correct or delete that line (its item runs again)"
        try:
            line = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise BatchFileError(where + f"not UTF-8 ({exc.reason})" + fix, path=self.path, line=number) from exc
        except (ValueError, RecursionError) as exc:
            raise BatchFileError(where + "not JSON" + fix, path=self.path, line=number) from exc
        if not (
            isinstance(line, dict)
            and isinstance(line.get("custom_id"), str)
            and isinstance(line.get("ok"), bool)
            and isinstance(line.get("kind"), str)
            and ("response" in line if line["ok"] else isinstance(line.get("error"), dict))
        ):
            raise BatchFileError(
                where + "not a result line (custom_id, kind, ok, and response or error)" + fix,
                path=self.path,
                line=number,
            )
        state = record.done_state(line["custom_id"])
        if state is None:
            raise BatchFileError(
                where + f"custom_id {line['custom_id']!r} is not in this run's input: this output belongs to "
                "another run (choose another output), or the line was added to it",
                path=self.path,
                line=number,
            )
        if state:
            raise BatchFileError(
                where + f"custom_id {line['custom_id']!r} is there twice" + fix, path=self.path, line=number
            )
        return line

    def write(self, line: Mapping[str, Any]) -> None:
        if self._handle is None:
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        self._handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    def sync(self) -> None:
        """Flush written lines to disk (before the record says they are done)."""
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self.sync()
            self._handle.close()
            self._handle = None


class Results:
    """Result lines on their way out: written at once, then, every :data:`SYNC_EVERY` lines or
    :data:`SYNC_SECONDS`, synced to disk before the record marks them done. ``report`` (if
    given) is called after a commit, at most every :data:`PROGRESS_SECONDS`, and at the end."""

    def __init__(self, record: JobRecord, writer: Output, report: Callable[[], None] | None = None) -> None:
        self.record = record
        self.writer = writer
        self.report = report
        self._done: list[tuple[str, bool, int, Decimal | None]] = []
        self._synced = self._reported = time.monotonic()

    def add(self, custom_id: str, kind: str, result: Any) -> None:
        line = result_line(custom_id, kind, result)
        self.writer.write(line)
        self._done.append((custom_id, line["ok"], usage_tokens(result), usage_cost(result)))
        if len(self._done) >= SYNC_EVERY or time.monotonic() - self._synced >= SYNC_SECONDS:
            self.commit()

    def commit(self, *, final: bool = False) -> None:
        if self._done:
            self.writer.sync()
            self.record.begin()
            for custom_id, ok, tokens, cost in self._done:
                self.record.mark_done(custom_id, ok, tokens, cost)
            self.record.set_output_stamp(self.writer.path)
            self.record.commit()
            self._done.clear()
        self._synced = now = time.monotonic()
        if self.report is not None and (final or now - self._reported >= PROGRESS_SECONDS):
            self._reported = now
            self.report()


def usage_cost(result: Any) -> Decimal | None:
    """What a result cost (``Usage.cost``), ``None`` when unknown (errors included)."""
    cost = getattr(getattr(result, "usage", None), "cost", None)
    return cost if isinstance(cost, Decimal) else None


def _usage_of(line: Mapping[str, Any]) -> Mapping[str, Any]:
    response = line.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    return usage if isinstance(usage, Mapping) else {}


def tokens_of(line: Mapping[str, Any]) -> int:
    """Total tokens of one output line (0 for errors and results without usage)."""
    return int(_usage_of(line).get("total_tokens") or 0)


def cost_of(line: Mapping[str, Any]) -> Decimal | None:
    """The cost of one output line (``Usage.cost`` as JSON writes it: a string), ``None`` if unknown."""
    cost = _usage_of(line).get("cost")
    if cost is None:
        return None
    try:
        return Decimal(str(cost))
    except InvalidOperation:
        return None
