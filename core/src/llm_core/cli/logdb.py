"""The prompt log: every ``prompt``/``chat`` exchange in a SQLite database (standard ``sqlite3``).

``logs.db`` lives in the user's config dir (``LLM_CORE_LOGS_DB`` names another file), readable by
its owner only (0600). Logging is on until ``llm-core logs off``, which leaves a ``logs-off``
marker file beside it; ``--no-log`` skips one call. A conversation id groups exchanges, so ``-c``
/ ``--cid`` can continue one.

No key is stored: credential query parameters of attachment URLs, credential-named options and
headers (``-o extra_headers '{"x-goog-api-key": ...}'``) and every key the process knows are
replaced by ``***`` before a row is written (the rules of :mod:`llm_core.redaction`).
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
from llm_core.redaction import REDACTED, is_credential_name, known_values, redact_text, redact_url

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
    _private(path)
    with closing(sqlite3.connect(path)) as connection:
        connection.row_factory = sqlite3.Row
        connection.executescript(_SCHEMA)
        _add_new_columns(connection)
        with connection:  # one transaction, committed on success
            yield connection


def _private(path: Path) -> None:
    """Create the database file 0600 before SQLite opens it (SQLite would create it 0644 under
    the usual umask; its journal takes the database's mode), and take group and other access
    away from one an older version created."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        if path.is_file() and path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)


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
    row = _redacted(entry)
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


def _redacted(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` without credentials: URLs (attachments, ``base_url``) as
    :func:`~llm_core.redaction.redact_url` shows them, credential-named options and headers (at
    any depth) as ``***``, known keys removed from every text."""
    values = known_values()
    return {key: _clean(value, values) for key, value in entry.items()}


def _clean(value: Any, values: tuple[str, ...], depth: int = 0) -> Any:
    if isinstance(value, str):
        is_url = "://" in value and not any(c.isspace() for c in value)
        return redact_url(value, values) if is_url else redact_text(value, values)
    if depth > 32:  # options come from the command line: nothing real nests this deep
        return REDACTED
    if isinstance(value, dict):
        return {
            key: REDACTED if is_credential_name(key) and item is not None else _clean(item, values, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_clean(item, values, depth + 1) for item in value]
    return value


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
    if query:  # the text itself: % and _ in it are no wildcards
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append("(prompt LIKE ? ESCAPE '\\' OR response LIKE ? ESCAPE '\\' OR system LIKE ? ESCAPE '\\')")
        params += [f"%{escaped}%"] * 3
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
