"""The index of batch runs started from the command line, so that ``llm-core batch status``,
``results`` and ``cancel`` find a run by a short number from any shell.

One SQLite file (standard ``sqlite3``) in the user's data folder: ``$XDG_DATA_HOME/llm-core/``
(``~/.local/share/llm-core/`` by default) ``batch-jobs.db``; ``LLM_CORE_BATCH_JOBS`` names
another file. It holds only the number, the input and the output path of each run: everything
else is read from the run's own job record beside its output.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from llm_core.batch.record import record_path
from llm_core.errors import ConfigurationError, InvalidInputError

JOBS_ENV = "LLM_CORE_BATCH_JOBS"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    output TEXT NOT NULL UNIQUE,
    input TEXT NOT NULL,
    created_utc TEXT NOT NULL
);
"""
_RECORD_SUFFIX = ".job.sqlite"


def jobs_path() -> Path:
    explicit = os.environ.get(JOBS_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "llm-core" / "batch-jobs.db"


@contextmanager
def _connect() -> Iterator[sqlite3.Connection]:
    """The index in one transaction, committed on success; SQLite's failures (a damaged file, a
    folder that cannot be written, another process holding it too long) are ConfigurationError
    naming the file."""
    path = jobs_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(path)) as db:
            db.executescript(_SCHEMA)
            with db:
                yield db
    except (sqlite3.IntegrityError, InvalidInputError):
        raise
    except (sqlite3.Error, OSError) as exc:
        raise ConfigurationError(
            f"the batch jobs index {path} cannot be read ({exc}); move it away (runs are still named by their "
            f"output path), or set {JOBS_ENV} to another file"
        ) from exc


def remember(output: Path, source: Path) -> int:
    """The number of the run writing ``output`` (a new one the first time). A run of another
    input into the same output is refused: its record would resume the first one."""
    out, src = str(output.resolve()), str(source.resolve())
    with _connect() as db:
        row = db.execute("SELECT id, input FROM jobs WHERE output = ?", (out,)).fetchone()
        if row is not None:
            if row[1] != src:
                raise InvalidInputError(
                    f"{output} holds the results of {row[1]}: submit that file to resume it, or choose another -o"
                )
            return int(row[0])
        cursor = db.execute(
            "INSERT INTO jobs (output, input, created_utc) VALUES (?, ?, ?)",
            (out, src, datetime.now(UTC).isoformat(timespec="seconds")),
        )
        return int(cursor.lastrowid or 0)


def forget(output: Path) -> None:
    with _connect() as db:
        db.execute("DELETE FROM jobs WHERE output = ?", (str(output.resolve()),))


def known() -> list[tuple[int, Path, Path]]:
    """``(number, input, output)`` of every run in the index, oldest first."""
    with _connect() as db:
        rows = db.execute("SELECT id, input, output FROM jobs ORDER BY id").fetchall()
    return [(int(n), Path(i), Path(o)) for n, i, o in rows]


def resolve(job: str) -> tuple[int | None, Path]:
    """``(number, output)`` of ``JOB``: a number from the index, or the path of a run's output
    (or of its ``.job.sqlite`` record)."""
    if job.isdigit():
        with _connect() as db:
            row = db.execute("SELECT output FROM jobs WHERE id = ?", (int(job),)).fetchone()
        if row is None:
            raise InvalidInputError(f"no batch job {job} in {jobs_path()}; `llm-core batch status` lists them")
        return int(job), Path(row[0])
    output = Path(job[: -len(_RECORD_SUFFIX)] if job.endswith(_RECORD_SUFFIX) else job)
    if not record_path(output).exists():
        raise InvalidInputError(f"{job} is neither a job number nor the output of a run (no {record_path(output)})")
    with _connect() as db:
        row = db.execute("SELECT id FROM jobs WHERE output = ?", (str(output.resolve()),)).fetchone()
    return (None if row is None else int(row[0])), output
