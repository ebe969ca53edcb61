"""No file under ``cassettes/`` holds anything shaped like a Google or OpenAI key or a bearer
token, key headers and key parameters are filtered, and recording itself cannot write a key."""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import pytest
from canary import echo_key_upstream
from fault_server import FaultServer
from fault_targets import GEMINI, OPENAI
from key_scanner import scan_tree

from llm_core.errors import AuthenticationError
from llm_core.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"


def test_cassettes_hold_no_key_shaped_strings() -> None:
    scanned, findings = scan_tree(CASSETTES)
    assert scanned > 0, "cassettes/ was scanned"
    assert findings == [], "\n".join(str(f) for f in findings)


def _synthetic_keys() -> dict[str, str]:
    """Key shapes built at run time (no key-shaped literal lives in the repository)."""
    token = secrets.token_urlsafe(30).replace("-", "a").replace("_", "b")
    return {
        "google api key": "AIza" + token[:35],
        "google oauth token": "ya29." + token,
        "openai key": "sk-proj-" + token,
        "bearer token": "Bearer " + token,
    }


def test_the_scanner_finds_every_shape(tmp_path: Path) -> None:
    keys = _synthetic_keys()
    for shape, key in keys.items():
        (tmp_path / f"{shape.replace(' ', '_')}.json").write_text(json.dumps({"note": f"x {key} y"}))
    hidden = tmp_path / "hidden.json"
    hidden.write_text(json.dumps({"interactions": [{
        "request": {"uri": "https://generativelanguage.googleapis.com/v1/models?key=abc123",
                    "headers": {"x-goog-api-key": ["abc123"], "authorization": ["FILTERED"]}},
        "response": {"headers": {}, "body": {"base64": base64.b64encode(keys["openai key"].encode()).decode()}},
    }]}))
    scanned, findings = scan_tree(tmp_path)
    assert scanned == len(keys) + 1
    assert {f.shape for f in findings} == {*keys, "unfiltered secret header", "unfiltered secret parameter"}
    assert any("base64 body" in f.where for f in findings)
    assert all(key not in str(f) for f in findings for key in keys.values()), "findings never print a key"


def test_filtered_placeholders_are_not_findings(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text(json.dumps({"interactions": [{
        "request": {"uri": "https://api.openai.com/v1/responses?key=FILTERED",
                    "headers": {"authorization": ["FILTERED"], "x-goog-api-key": ["FILTERED"]}},
        "response": {"headers": {}, "body": {"json": {"note": "Bearer FILTERED", "model": "gpt-4o-mini"}}},
    }]}))
    assert scan_tree(tmp_path) == (1, [])


@pytest.mark.parametrize("target", [GEMINI, OPENAI], ids=["gemini", "openai"])
def test_recording_writes_no_key(target: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-recording (``LLM_CORE_RECORD``) with the key in the environment, against an upstream that
    answers and one that quotes the key back: the written cassette holds no key."""
    from llm_core.testing.cassettes import use_cassette

    key = "sk-proj-" + secrets.token_hex(20) if target is OPENAI else "AIza" + secrets.token_hex(18)[:35]
    monkeypatch.setenv("OPENAI_API_KEY" if target is OPENAI else "GEMINI_API_KEY", key)
    cassette = tmp_path / "cassettes" / "recorded.json"
    with FaultServer(target.upstream) as server:  # type: ignore[attr-defined]
        provider = target.build(server.url, api_key=key, retry=RetryPolicy.none())  # type: ignore[attr-defined]
        with use_cassette(cassette, mode="all"):
            assert provider.chat_completion("hello").content == "echo: hello"
            server.fallback = echo_key_upstream(target)  # type: ignore[arg-type]
            with pytest.raises(AuthenticationError):
                provider.chat_completion("hello again")
    text = cassette.read_text()
    assert len(json.loads(text)["interactions"]) == 2
    assert key not in text
    assert scan_tree(cassette.parent)[1] == []
