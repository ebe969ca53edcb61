"""The job record: one SQLite file beside the output that says, for every input item, which job
holds it and whether its result is in the output, so that a run can resume after a crash.

Writes go in this order: a job's ``submitting`` state (with its tag) before the create call, its
id right after; a result line into the output (flushed to disk) before the item is marked done.
So after a crash no job is created twice (a ``submitting`` job is first looked up by its tag)
and no result is written twice (the output is read back on open: the last line, if cut short,
is dropped, and every id in the output is marked done).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

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
    tokens INTEGER
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

    def mark_done(self, custom_id: str, ok: bool, tokens: int) -> None:
        self.db.execute(
            "UPDATE items SET done = 1, ok = ?, tokens = ? WHERE custom_id = ?", (int(ok), tokens, custom_id)
        )

    def counts(self) -> dict[str, int]:
        """``total``, ``done``, ``failed`` and ``tokens`` over all items."""
        total, done, failed, tokens = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(done), 0), COALESCE(SUM(done AND NOT ok), 0), COALESCE(SUM(tokens), 0) "
            "FROM items"
        ).fetchone()
        return {"total": int(total), "done": int(done), "failed": int(failed), "tokens": int(tokens)}


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
                    record.mark_done(custom_id, bool(line["ok"]), tokens_of(line))
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


def tokens_of(line: Mapping[str, Any]) -> int:
    """Total tokens of one output line (0 for errors and results without usage)."""
    response = line.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    return int(usage.get("total_tokens") or 0) if isinstance(usage, Mapping) else 0
