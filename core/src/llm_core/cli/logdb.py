"""The prompt log: every ``prompt``/``chat`` exchange in a SQLite database (standard ``sqlite3``).

``logs.db`` lives in the user's config dir (``LLM_CORE_LOGS_DB`` names another file). Logging is
on until ``llm-core logs off``, which leaves a ``logs-off`` marker file beside it; ``--no-log``
skips one call. A conversation id groups exchanges, so ``-c`` / ``--cid`` can continue one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llm_core.keystore import config_dir

LOGS_ENV = "LLM_CORE_LOGS_DB"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    datetime_utc TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    system TEXT,
    prompt TEXT NOT NULL,
    attachments TEXT,
    options TEXT,
    response TEXT,
    thinking TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    total_tokens INTEGER,
    latency_ms REAL,
    error TEXT,
    cost_usd TEXT
);
CREATE INDEX IF NOT EXISTS responses_conversation ON responses (conversation_id, id);
"""
_COLUMNS = (
    "id, conversation_id, datetime_utc, provider, model, system, prompt, attachments, options, response, "
    "thinking, input_tokens, output_tokens, total_tokens, latency_ms, error, cost_usd"
)
#: Columns added after the first release, with their types: added to an older database on open.
_ADDED_COLUMNS = {"cost_usd": "TEXT"}


def logs_path() -> Path:
    explicit = os.environ.get(LOGS_ENV)
    return Path(explicit).expanduser() if explicit else config_dir() / "logs.db"


def _marker() -> Path:
    return logs_path().with_name("logs-off")


def logging_enabled() -> bool:
    return not _marker().exists()


def set_logging(enabled: bool) -> None:
    marker = _marker()
    if enabled:
        marker.unlink(missing_ok=True)
    else:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


@contextmanager
def _connect() -> Iterator[sqlite3.Connection]:
    path = logs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as connection:
        connection.row_factory = sqlite3.Row
        connection.executescript(_SCHEMA)
        _add_new_columns(connection)
        with connection:  # one transaction, committed on success
            yield connection


def _add_new_columns(connection: sqlite3.Connection) -> None:
    present = {row["name"] for row in connection.execute("PRAGMA table_info(responses)")}
    for name, kind in _ADDED_COLUMNS.items():
        if name not in present:
            connection.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")


def new_conversation_id() -> str:
    return uuid.uuid4().hex[:16]


def record(entry: dict[str, Any]) -> int:
    """Store one exchange (keys: the table's columns but ``id``/``datetime_utc``); its row id.
    ``cost_usd`` is stored as exact decimal text (``None``: unknown)."""
    row = dict(entry)
    if row.get("cost_usd") is not None:
        row["cost_usd"] = str(row["cost_usd"])
    row.setdefault("datetime_utc", datetime.now(UTC).isoformat(timespec="seconds"))
    for key in ("options", "attachments"):
        if row.get(key) is not None:
            row[key] = json.dumps(row[key], default=str, sort_keys=True)
    names = ", ".join(row)
    marks = ", ".join(f":{name}" for name in row)
    with _connect() as db:
        cursor = db.execute(f"INSERT INTO responses ({names}) VALUES ({marks})", row)  # noqa: S608 - our own column names
        return int(cursor.lastrowid or 0)


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    found = []
    for row in cursor.fetchall():
        item = dict(row)
        for key in ("options", "attachments"):
            if item.get(key):
                item[key] = json.loads(item[key])
        found.append(item)
    return found


def recent(count: int | None = 3, *, query: str | None = None, conversation: str | None = None) -> list[dict[str, Any]]:
    """The latest ``count`` exchanges (all when ``None``), oldest first; ``query`` searches the
    prompt, system prompt and response text (case-insensitive); ``conversation`` keeps one."""
    if not logs_path().is_file():
        return []
    where, params = [], []
    if query:
        where.append("(prompt LIKE ? OR response LIKE ? OR system LIKE ?)")
        params += [f"%{query}%"] * 3
    if conversation:
        where.append("conversation_id = ?")
        params.append(conversation)
    sql = f"SELECT {_COLUMNS} FROM responses"  # noqa: S608 - constant columns, parameters bound
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC"
    if count is not None:
        sql += f" LIMIT {int(count)}"
    with _connect() as db:
        return list(reversed(_rows(db.execute(sql, params))))


def last_conversation_id() -> str | None:
    if not logs_path().is_file():
        return None
    with _connect() as db:
        row = db.execute("SELECT conversation_id FROM responses ORDER BY id DESC LIMIT 1").fetchone()
    return str(row[0]) if row else None


def history(conversation: str) -> list[dict[str, Any]]:
    """The messages of a logged conversation (user prompts and answers, in order), for ``-c``."""
    messages: list[dict[str, Any]] = []
    for item in recent(None, conversation=conversation):
        if item["error"]:
            continue
        messages.append({"role": "user", "content": item["prompt"]})
        messages.append({"role": "assistant", "content": item["response"] or ""})
    return messages
