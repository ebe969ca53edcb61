"""``llm-core prompt`` / ``chat PROMPT`` in-process, answered by the testing kit through
``registry.override`` (so the test sees exactly what the CLI sent), and the prompt log."""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import logdb
from llm_core.cli.main import main
from llm_core.messages import DocumentPart, ImagePart
from llm_core.registry import get_registry
from llm_core.testing import CallInfo, FunctionProvider, TestProvider

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Seen:
    """A FunctionProvider function that keeps every call's messages and info."""

    def __init__(self, reply: str = "Hello back.") -> None:
        self.calls: list[tuple[list[Any], CallInfo]] = []
        self.reply = reply

    def __call__(self, messages: list[Any], info: CallInfo) -> str:
        self.calls.append((messages, info))
        return self.reply


@pytest.fixture
def seen() -> Any:
    function = Seen()
    with get_registry().override(FunctionProvider(function)):
        yield function


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prompt_sends_system_options_and_resolved_alias(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "prompt",
        "Hi there",
        "-m",
        "flash",
        "-s",
        "Be brief.",
        "-o",
        "top_p",
        "0.5",
        "-o",
        "verbosity",
        "low",
        "--temperature",
        "0.2",
    )
    assert code == 0, err
    assert out == "Hello back.\n"  # piped stdout: plain text, no Markdown rendering
    [(messages, info)] = seen.calls
    assert [(m.role.value, m.text) for m in messages] == [("system", "Be brief."), ("user", "Hi there")]
    assert info.model == "gemini-2.5-flash"  # the built-in alias
    assert info.options == {"verbosity": "low"}  # -o values: JSON when they parse, else text


def test_every_exchange_is_logged_with_model_usage_latency_and_conversation(
    seen: Seen, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "prompt", "first question", "-m", "mini")[0] == 0
    [entry] = logdb.recent()
    assert entry["prompt"] == "first question" and entry["response"] == "Hello back."
    assert entry["provider"] == "function" and entry["model"] == "gpt-5.4-mini"
    assert entry["total_tokens"] is not None and entry["total_tokens"] > 0
    assert entry["latency_ms"] is not None and entry["latency_ms"] >= 0
    assert len(entry["conversation_id"]) == 16
    # the database is plain SQLite that any tool can read
    with sqlite3.connect(logdb.logs_path()) as db:
        assert db.execute("SELECT count(*) FROM responses").fetchone() == (1,)


def test_continue_sends_the_logged_conversation_again(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "prompt", "My name is Ada.")
    run(capsys, "prompt", "What is my name?", "-c")
    messages, _ = seen.calls[-1]
    assert [(m.role.value, m.text) for m in messages] == [
        ("user", "My name is Ada."),
        ("assistant", "Hello back."),
        ("user", "What is my name?"),
    ]
    first, second = logdb.recent()
    assert first["conversation_id"] == second["conversation_id"]
    run(capsys, "chat", "And again?", "--cid", first["conversation_id"])
    assert len(seen.calls[-1][0]) == 5


def test_cid_of_an_unknown_conversation_is_a_usage_error(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "prompt", "hi", "--cid", "nope")
    assert code == 2 and "no logged conversation" in err


def test_no_log_and_logs_off(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "prompt", "not logged", "--no-log")
    assert logdb.recent() == []
    run(capsys, "logs", "off")
    run(capsys, "prompt", "not logged either")
    assert logdb.recent() == []
    _, out, _ = run(capsys, "logs", "status")
    assert out.startswith("logging is off; 0 responses")
    run(capsys, "logs", "on")
    run(capsys, "prompt", "logged")
    assert [e["prompt"] for e in logdb.recent()] == ["logged"]


def test_logs_lists_searches_and_prints_json(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("about pelicans", "about walruses", "about pelicans again", "something else"):
        run(capsys, "prompt", text)
    _, out, _ = run(capsys, "logs", "-q", "pelican", "--json")
    assert [e["prompt"] for e in json.loads(out)] == ["about pelicans", "about pelicans again"]
    _, out, _ = run(capsys, "logs", "-n", "2", "--json")
    assert [e["prompt"] for e in json.loads(out)] == ["about pelicans again", "something else"]
    _, out, _ = run(capsys, "logs", "-n", "0")
    assert out.count("> about") == 3 and "function" in out and "tokens" in out


def test_attachments_route_to_vision_and_documents(
    seen: Seen, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    image = tmp_path / "pixel.png"
    image.write_bytes(PNG)
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    code, _, err = run(
        capsys,
        "prompt",
        "Describe these",
        "-a",
        str(image),
        "-a",
        str(pdf),
        "-a",
        "https://example.com/cat.jpg",
        "--no-log",
    )
    assert code == 0, err
    [(messages, _)] = seen.calls
    parts = messages[-1].content
    assert parts[0].text == "Describe these"
    assert isinstance(parts[1], ImagePart) and parts[1].data == PNG and parts[1].mime_type == "image/png"
    assert isinstance(parts[2], DocumentPart) and parts[2].name == "paper.pdf"
    assert isinstance(parts[3], ImagePart) and parts[3].url == "https://example.com/cat.jpg"


def test_attachment_of_another_type_is_refused(seen: Seen, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    code, _, err = run(capsys, "prompt", "read this", "-a", str(notes))
    assert code == 2 and "only images and PDF documents" in err
    assert seen.calls == []


def test_attachments_select_a_provider_with_vision(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from llm_core.cli.options import call_setup
    from llm_core.cli.parser import build_parser
    from llm_core.features import Feature

    image = tmp_path / "pixel.png"
    image.write_bytes(PNG)
    args = build_parser().parse_args(["prompt", "x", "-a", str(image), "--think"])
    assert call_setup(args).features == [Feature.CHAT, Feature.THINKING, Feature.VISION]


def test_schema_concise_answers_schema_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    with get_registry().override(TestProvider()):
        code, out, err = run(
            capsys, "prompt", "Invent a dog", "--schema", "name, age int, weight float: in kg, good bool"
        )
    assert code == 0, err
    assert json.loads(out) == {"name": "a", "age": 0, "weight": 0.0, "good": True}
    [entry] = logdb.recent()
    assert entry["options"] == {"schema": "name, age int, weight float: in kg, good bool"}


def test_schema_file_and_multi(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    schema = tmp_path / "city.json"
    schema.write_text(
        json.dumps(
            {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris"]}}, "required": ["city"]}
        )
    )
    with get_registry().override(TestProvider()):
        code, out, _ = run(capsys, "prompt", "A city", "--schema-multi", str(schema))
    assert code == 0 and json.loads(out) == {"items": [{"city": "Paris"}]}


def test_think_shows_thinking_apart(capsys: pytest.CaptureFixture[str]) -> None:
    with get_registry().override(TestProvider(text="42")):
        code, out, _ = run(capsys, "prompt", "Meaning of life?", "--think")
    assert code == 0 and out == "[thinking]\nthinking about it\n[answer]\n42\n"


def test_stream_prints_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    with get_registry().override(TestProvider(text="one two three")):
        code, out, err = run(capsys, "prompt", "count", "--stream")
    assert code == 0 and out == "one two three\n" and "first token" in err
    assert logdb.recent()[0]["response"] == "one two three"


def test_logs_keep_the_cost_at_the_configured_prices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[prices."gpt-5.4-mini"]\ninput = "0.25"\noutput = "2.00"\n', encoding="utf-8")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    with get_registry().override(FunctionProvider(Seen())):
        assert run(capsys, "prompt", "what does it cost?", "-m", "mini")[0] == 0
    [entry] = logdb.recent()
    assert entry["cost_usd"] is not None
    tokens_in, tokens_out = entry["input_tokens"], entry["output_tokens"]
    assert Decimal(entry["cost_usd"]) == (tokens_in * Decimal("0.25") + tokens_out * Decimal("2.00")) / 1_000_000
    _, out, _ = run(capsys, "logs")
    assert f"${entry['cost_usd']}" in out


def test_an_older_log_database_gains_the_cost_column(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    path = logdb.logs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:  # the first release's table, without cost_usd
        db.execute(
            "CREATE TABLE responses (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, "
            "datetime_utc TEXT NOT NULL, provider TEXT, model TEXT, system TEXT, prompt TEXT NOT NULL, "
            "attachments TEXT, options TEXT, response TEXT, thinking TEXT, input_tokens INTEGER, "
            "output_tokens INTEGER, total_tokens INTEGER, latency_ms REAL, error TEXT)"
        )
        db.execute("INSERT INTO responses (conversation_id, datetime_utc, prompt) VALUES ('c', 'then', 'old')")
    assert run(capsys, "prompt", "new")[0] == 0
    old, new = logdb.recent()
    assert (old["prompt"], old["cost_usd"]) == ("old", None)
    assert new["prompt"] == "new"


def test_the_log_stores_no_credential(
    seen: Seen, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credential query parameters of attachment URLs, credential-named options and headers, and
    any key the process knows are replaced before the row is written."""
    known = "known-key-" + "7" * 20
    monkeypatch.setenv("SOMETHING_API_KEY", known)
    code, _, err = run(
        capsys,
        "prompt",
        f"hello {known}",
        "-a",
        "https://h.example/cat.png?size=2&key=query-secret-123&x=1",
        "-a",
        "https://user:pass-secret-123@h.example/dog.png",
        "-o",
        "extra_headers",
        json.dumps(
            {"x-goog-api-key": "header-secret-123", "Authorization": "Bearer bearer-secret-123", "X-Trace": "t"}
        ),
        "-o",
        "api_key",
        "option-secret-123",
        "-o",
        "base_url",
        "https://proxy.example/v1?api_key=url-secret-123",
        "-o",
        "note",
        f"my key is {known}",
    )
    assert code == 0, err
    raw = logdb.logs_path().read_bytes()
    secrets = ("query-secret", "pass-secret", "header-secret", "bearer-secret", "option-secret", "url-secret", known)
    for secret in secrets:
        assert secret.encode() not in raw, secret
    [entry] = logdb.recent()
    assert entry["attachments"] == ["https://h.example/cat.png?size=2&key=***&x=1", "https://***@h.example/dog.png"]
    assert entry["options"]["extra_headers"] == {"x-goog-api-key": "***", "Authorization": "***", "X-Trace": "t"}
    assert entry["options"]["api_key"] == "***"
    assert entry["options"]["base_url"] == "https://proxy.example/v1?api_key=***"
    assert entry["options"]["note"] == "my key is ***" and entry["prompt"] == "hello ***"


def test_the_log_database_is_private(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "prompt", "hello")[0] == 0
    assert logdb.logs_path().stat().st_mode & 0o777 == 0o600
    logdb.logs_path().chmod(0o644)  # made by an older version
    assert run(capsys, "logs", "-n", "1")[0] == 0
    assert logdb.logs_path().stat().st_mode & 0o777 == 0o600


def test_logs_query_wildcards_are_text(seen: Seen, capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("100% sure", "plain", "snake_case", "back\\slash"):
        run(capsys, "prompt", text)
    for query, found in (("%", ["100% sure"]), ("_", ["snake_case"]), ("\\", ["back\\slash"]), ("e_c", ["snake_case"])):
        _, out, _ = run(capsys, "logs", "-q", query, "--json")
        assert [e["prompt"] for e in json.loads(out)] == found, query


def test_an_attachment_over_the_limit_is_refused_before_it_is_read(
    seen: Seen, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 1.5 GB sparse file: its size is checked first, so memory stays far below it."""
    import resource
    import tracemalloc

    big = tmp_path / "huge.png"
    with open(big, "wb") as handle:
        handle.truncate(1536 * 1024 * 1024)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        code, _, err = run(capsys, "prompt", "look", "-a", str(big), "--no-log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and err == f"error: -a: {big} is 1,610,612,736 bytes; the limit is 33,554,432\n"
    assert peak < 4 * 1024 * 1024 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024
    assert seen.calls == []


def test_an_attachment_that_is_no_regular_file_is_refused(
    seen: Seen, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    link = tmp_path / "zero.png"
    link.symlink_to("/dev/zero")
    code, _, err = run(capsys, "prompt", "look", "-a", str(link), "--no-log")
    assert code == 2 and err == f"error: -a: {link} is not a regular file\n"
