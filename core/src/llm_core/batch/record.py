"""The job record: one SQLite file beside the output that says, for every input item, which job
holds it and whether its result is in the output, so that a run can resume after a crash.

The output is the truth and the record a cache of it (:mod:`llm_core.batch.output` reads the
output back at the start of every run). A job's ``submitting`` state (with its tag) is written
before the create call and its id right after, so after a crash no job is created twice (a
``submitting`` job is first looked up by its tag).

Each item's tokens and cost are kept with it, so a summary sums them in SQL. A cost is kept in
whole picodollars (10^-12 US dollars, an integer: exact for list prices with up to six decimals
per million tokens, and summed exactly). With the counts the record keeps the output's size and
modification time as of its last commit, so that a summary can tell that the output was changed
since (:meth:`JobRecord.output_changed`) without reading it. Every SQLite failure is a typed
error naming the file: :class:`~llm_core.batch.errors.BatchFileError` for a damaged record,
:class:`~llm_core.batch.errors.BatchBusyError` for one held too long by another process.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from llm_core.batch.errors import BatchBusyError, BatchFileError
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
_PICO = Decimal("1e-12")


def record_path(output: Path) -> Path:
    """The job record of ``output``: ``OUT.jsonl`` → ``OUT.jsonl.job.sqlite``."""
    return output.with_name(output.name + ".job.sqlite")


class _Rows:
    """The rows of one statement, read in full while errors are still translated."""

    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return self._rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


class _Database:
    """The record's SQLite connection: every failure of SQLite is a typed error naming the file
    (a busy one :class:`BatchBusyError`, a damaged one :class:`BatchFileError`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._db = self._guard(lambda: sqlite3.connect(path, isolation_level=None))  # explicit transactions only

    def _guard(self, action: Callable[[], Any]) -> Any:
        try:
            return action()
        except sqlite3.IntegrityError:
            raise  # a constraint the caller checks for (a duplicate id)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise BatchBusyError(
                    f"the job record {self.path} is locked by another process writing it ({exc}); try again"
                ) from exc
            raise self._damaged(exc) from exc
        except sqlite3.Error as exc:
            raise self._damaged(exc) from exc

    def _damaged(self, exc: sqlite3.Error) -> BatchFileError:
        return BatchFileError(
            f"the job record {self.path} cannot be read ({exc}); delete it and run again with the same input "
            "and output: it is rebuilt from them, and only the items missing from the output run again (in "
            "batch mode, items whose jobs had not finished are submitted again)",
            path=self.path,
        )

    def execute(self, sql: str, parameters: Any = ()) -> _Rows:
        assert self._db is not None
        db = self._db
        return _Rows(self._guard(lambda: db.execute(sql, parameters).fetchall()))

    def executescript(self, script: str) -> None:
        assert self._db is not None
        db = self._db
        self._guard(lambda: db.executescript(script))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


class JobRecord:
    """The SQLite job record of one run (one writer: the runner's thread). A record that SQLite
    cannot read raises :class:`BatchFileError` naming it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = _Database(path)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(items)")}
            if "cost_picodollars" not in columns:  # a record written before costs were kept
                self.db.execute("ALTER TABLE items ADD COLUMN cost_picodollars INTEGER")
        except BaseException:
            self.db.close()
            raise

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

    def rollback(self) -> None:
        self.db.execute("ROLLBACK")

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

    def detach_done(self, chunk: int) -> int:
        """Take the items already in the output out of a chunk not yet sent (they are not sent);
        how many items it keeps."""
        self.db.execute("UPDATE items SET chunk = NULL WHERE chunk = ? AND done = 1", (chunk,))
        (count,) = self.db.execute("SELECT COUNT(*) FROM items WHERE chunk = ?", (chunk,)).fetchone()
        return int(count)

    def last_chunk(self) -> int:
        (last,) = self.db.execute("SELECT COALESCE(MAX(chunk), 0) FROM chunks").fetchone()
        return int(last)

    def orphan_ids(self) -> list[str]:
        """Ids of the items not done that are in no chunk (batch mode only: local items have none)."""
        rows = self.db.execute("SELECT custom_id FROM items WHERE chunk IS NULL AND done = 0 ORDER BY position")
        return [str(r[0]) for r in rows]

    def set_item_chunk(self, custom_id: str, chunk: int) -> None:
        self.db.execute("UPDATE items SET chunk = ? WHERE custom_id = ?", (chunk, custom_id))

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

    def done_state(self, custom_id: str) -> bool | None:
        """Whether the item is done; ``None`` when the record has no such item."""
        row = self.db.execute("SELECT done FROM items WHERE custom_id = ?", (custom_id,)).fetchone()
        return None if row is None else bool(row[0])

    def forget_results(self) -> None:
        """Every item not done (before the output is read back: what it holds is marked again)."""
        self.db.execute("UPDATE items SET done = 0, ok = NULL, tokens = NULL, cost_picodollars = NULL WHERE done = 1")

    def reopen_chunks(self) -> None:
        """A fetched chunk with items missing from the output is read again from its job (one
        never created, of a cancelled run, gets its items' errors again)."""
        self.db.execute(
            f"UPDATE chunks SET state = CASE WHEN job_id IS NULL THEN '{OPEN}' ELSE '{SUBMITTED}' END "  # noqa: S608 - constants
            f"WHERE state = '{FETCHED}' AND chunk IN (SELECT chunk FROM items WHERE done = 0 AND chunk IS NOT NULL)"
        )

    def set_output_stamp(self, path: Path) -> None:
        self.set("output_stamp", _stamp(path))

    def output_changed(self, path: Path) -> bool:
        """The output was changed (or deleted) since the record last wrote to it or read it."""
        stamp = self.get("output_stamp")
        return stamp is not None and stamp != _stamp(path)

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


def _stamp(path: Path) -> str:
    try:
        status = path.stat()
    except FileNotFoundError:
        return "missing"
    return f"{status.st_size}:{status.st_mtime_ns}"


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


def cost_to_picodollars(cost: Decimal | None) -> int | None:
    return None if cost is None else int(cost.quantize(_PICO, rounding=ROUND_HALF_EVEN).scaleb(12))


def picodollars_to_cost(picodollars: int) -> Decimal:
    """US dollars from picodollars, exactly (``Decimal``)."""
    return Decimal(picodollars).scaleb(-12)
