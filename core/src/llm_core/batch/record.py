"""The job record: one SQLite file beside the output that says, for every input item, which job
holds it and whether its result is in the output, so that a run can resume after a crash.

Writes go in this order: a job's ``submitting`` state (with its tag) before the create call, its
id right after; a result line into the output (flushed to disk) before the item is marked done.
So after a crash no job is created twice (a ``submitting`` job is first looked up by its tag)
and no result is written twice (the output is read back on open: the last line, if cut short,
is dropped, and every id in the output is marked done).

Each item's tokens and cost are kept with it, so a summary sums them in SQL. A cost is kept in
whole picodollars (10^-12 US dollars, an integer: exact for list prices with up to six decimals
per million tokens, and summed exactly).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from llm_core.batch.calls import result_line, usage_tokens
from llm_core.batch.types import ChatItem, DecisionItem, EmbeddingItem, JsonItem, item_from_json

Item = ChatItem | JsonItem | EmbeddingItem | DecisionItem

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    custom_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    line TEXT NOT NULL,
    chunk INTEGER,
    done INTEGER NOT NULL DEFAULT 0,
    ok INTEGER,
    tokens INTEGER,
    cost_picodollars INTEGER
);
CREATE INDEX IF NOT EXISTS items_chunk ON items (chunk, position);
CREATE INDEX IF NOT EXISTS items_done ON items (done, position);
CREATE TABLE IF NOT EXISTS chunks (
    chunk INTEGER PRIMARY KEY,
    grp TEXT NOT NULL,
    tag TEXT NOT NULL,
    job_id TEXT,
    state TEXT NOT NULL DEFAULT 'open'
);
"""

#: Chunk states, in order: filled during ingest, create call under way, job exists, results written.
OPEN, SUBMITTING, SUBMITTED, FETCHED = "open", "submitting", "submitted", "fetched"
#: Output and record are synced after this many result lines, or this many seconds.
SYNC_EVERY = 200
SYNC_SECONDS = 1.0
#: Progress is reported at most this often (each report counts the whole record).
PROGRESS_SECONDS = 0.25
_PICO = Decimal("1e-12")


def record_path(output: Path) -> Path:
    """The job record of ``output``: ``OUT.jsonl`` → ``OUT.jsonl.job.sqlite``."""
    return output.with_name(output.name + ".job.sqlite")


class JobRecord:
    """The SQLite job record of one run (one writer: the runner's thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit transactions only
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(items)")}
        if "cost_picodollars" not in columns:  # a record written before costs were kept
            self.db.execute("ALTER TABLE items ADD COLUMN cost_picodollars INTEGER")

    def close(self) -> None:
        self.db.close()

    # -- meta ----------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- ingest --------------------------------------------------------------------------

    def begin(self) -> None:
        self.db.execute("BEGIN")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def add_item(self, custom_id: str, position: int, line: str, chunk: int | None) -> bool:
        """Add one input item; ``False`` when its id is already there (a duplicate)."""
        try:
            self.db.execute(
                "INSERT INTO items (custom_id, position, line, chunk) VALUES (?, ?, ?, ?)",
                (custom_id, position, line, chunk),
            )
        except sqlite3.IntegrityError:
            return False
        return True

    def add_chunk(self, chunk: int, group: str, tag: str) -> None:
        self.db.execute("INSERT INTO chunks (chunk, grp, tag) VALUES (?, ?, ?)", (chunk, group, tag))

    # -- chunks (batch mode) -------------------------------------------------------------

    def chunks(self, *states: str) -> list[tuple[int, str, str, str | None, str]]:
        """``(chunk, group, tag, job_id, state)`` of the chunks in ``states``."""
        marks = ",".join("?" * len(states))
        rows = self.db.execute(
            f"SELECT chunk, grp, tag, job_id, state FROM chunks WHERE state IN ({marks}) ORDER BY chunk",  # noqa: S608 - placeholders only
            states,
        )
        return [(int(r[0]), str(r[1]), str(r[2]), r[3], str(r[4])) for r in rows]

    def set_chunk(self, chunk: int, state: str, job_id: str | None = None) -> None:
        if job_id is None:
            self.db.execute("UPDATE chunks SET state = ? WHERE chunk = ?", (state, chunk))
        else:
            self.db.execute("UPDATE chunks SET state = ?, job_id = ? WHERE chunk = ?", (state, job_id, chunk))

    def chunk_states(self) -> dict[str, int]:
        """How many chunks are in each state."""
        rows = self.db.execute("SELECT state, COUNT(*) FROM chunks GROUP BY state ORDER BY state")
        return {str(state): int(count) for state, count in rows}

    def chunk_ids(self, chunk: int) -> list[str]:
        rows = self.db.execute("SELECT custom_id FROM items WHERE chunk = ? ORDER BY position", (chunk,))
        return [str(r[0]) for r in rows]

    def chunk_items(self, chunk: int) -> Iterator[Item]:
        rows = self.db.execute("SELECT custom_id, line FROM items WHERE chunk = ? ORDER BY position", (chunk,))
        for custom_id, line in rows.fetchall():
            yield item_from_json(line, where=f"item {custom_id!r}")

    # -- items ---------------------------------------------------------------------------

    def item(self, custom_id: str) -> Item | None:
        row = self.db.execute("SELECT line FROM items WHERE custom_id = ?", (custom_id,)).fetchone()
        return None if row is None else item_from_json(row[0], where=f"item {custom_id!r}")

    def is_done(self, custom_id: str) -> bool:
        row = self.db.execute("SELECT done FROM items WHERE custom_id = ?", (custom_id,)).fetchone()
        return bool(row and row[0])

    def pending(self, after: int, limit: int) -> list[tuple[int, str]]:
        """``(position, line)`` of up to ``limit`` items not done, after ``position``."""
        rows = self.db.execute(
            "SELECT position, line FROM items WHERE done = 0 AND position > ? ORDER BY position LIMIT ?",
            (after, limit),
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def mark_done(self, custom_id: str, ok: bool, tokens: int, cost: Decimal | None = None) -> None:
        self.db.execute(
            "UPDATE items SET done = 1, ok = ?, tokens = ?, cost_picodollars = ? WHERE custom_id = ?",
            (int(ok), tokens, cost_to_picodollars(cost), custom_id),
        )

    def counts(self) -> dict[str, int]:
        """``total``, ``done``, ``failed``, ``tokens``, ``priced`` (items whose cost is known) and
        ``cost_picodollars`` (their summed cost) over all items."""
        total, done, failed, tokens, priced, cost = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(done), 0), COALESCE(SUM(done AND NOT ok), 0), COALESCE(SUM(tokens), 0), "
            "COUNT(cost_picodollars), COALESCE(SUM(cost_picodollars), 0) FROM items"
        ).fetchone()
        return {
            "total": int(total),
            "done": int(done),
            "failed": int(failed),
            "tokens": int(tokens),
            "priced": int(priced),
            "cost_picodollars": int(cost),
        }


class RecordItems(Mapping[str, Item]):
    """The items of a job record as a mapping (what a re-attached :class:`BatchJob` reads)."""

    def __init__(self, record: JobRecord, ids: list[str]) -> None:
        self._record = record
        self._ids = ids

    def __getitem__(self, key: str) -> Item:
        item = self._record.item(key)
        if item is None:
            raise KeyError(key)
        return item

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class Output:
    """The JSONL output, appended to; ``reconcile`` makes record and output agree after a crash."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: Any = None

    def reconcile(self, record: JobRecord) -> None:
        """Drop a last line cut short by a crash, and mark done every id the output holds."""
        if not self.path.exists():
            return
        with open(self.path, "rb+") as handle:
            keep = 0
            record.begin()
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                keep += len(raw)
                line = json.loads(raw)
                custom_id = line["custom_id"]
                if not record.is_done(custom_id):
                    record.mark_done(custom_id, bool(line["ok"]), tokens_of(line), cost_of(line))
            record.commit()
            handle.truncate(keep)

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


def cost_to_picodollars(cost: Decimal | None) -> int | None:
    return None if cost is None else int(cost.quantize(_PICO, rounding=ROUND_HALF_EVEN).scaleb(12))


def picodollars_to_cost(picodollars: int) -> Decimal:
    """US dollars from picodollars, exactly (``Decimal``)."""
    return Decimal(picodollars).scaleb(-12)


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
