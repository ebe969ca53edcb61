"""No file under ``cassettes/`` holds anything shaped like a Google or OpenAI key or a bearer
token, key headers and key parameters are filtered, and recording itself cannot write a key."""

from __future__ import annotations

import base64
import json
import logging
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_core.errors import AuthenticationError
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEventType
from tests.reliability.fault_server import Behaviour, FaultServer, Request, json_response, sse
from tests.reliability.fault_targets import GEMINI, OPENAI
from tests.security.canary import echo_key_upstream
from tests.security.key_scanner import scan_tree

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


def _echoing(target: Any) -> Callable[[Request], Behaviour]:
    """A 200 answer that quotes the key it received in a response header and in its text, or a
    stream that quotes it in its text (the shapes are the services' own: fault_targets)."""

    def answer(request: Request) -> Behaviour:
        key = request.headers.get("authorization", "").removeprefix("Bearer ") or request.headers.get(
            "x-goog-api-key", ""
        )
        body = request.json if request.body else None
        if request.path.endswith(":streamGenerateContent") or (isinstance(body, dict) and body.get("stream")):
            return sse(target.stream_events(["your key", f" is {key}"]))
        return json_response(200, target.text_body(f"your key is {key}"), headers={"X-Echoed-Key": key})

    return answer


def _key_query(target: Any, key: str) -> dict[str, Any]:
    """The key also sent as a ``key=`` query parameter (a credential-named client option)."""
    if target is GEMINI:
        return {"client_args": {"params": {"key": key}}, "async_client_args": {"params": {"key": key}}}
    return {"default_query": {"key": key}}


@pytest.mark.parametrize("source", ["environment", "api_key"])
@pytest.mark.parametrize("target", [GEMINI, OPENAI], ids=["gemini", "openai"])
def test_recording_with_the_record_switch_never_writes_the_key(
    target: Any, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``LLM_CORE_RECORD=once`` against a loopback upstream that quotes the key back in a header
    and in the body of every answer, with the key in a request header, the query string and the
    prompt: the cassette holds it nowhere, and it replays (the filtered request still matches)."""
    from llm_core.testing.cassettes import RECORD_ENV, use_cassette

    key = "sk-proj-" + secrets.token_hex(20) if target is OPENAI else "AIza" + secrets.token_hex(18)[:35]
    variable = "OPENAI_API_KEY" if target is OPENAI else "GEMINI_API_KEY"
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    settings: dict[str, Any] = {"api_key": key} if source == "api_key" else {}
    if source == "environment":
        monkeypatch.setenv(variable, key)
    monkeypatch.setenv(RECORD_ENV, "once")
    cassette = tmp_path / "cassettes" / "recorded.json"
    prompt = f"remember {key}"
    with FaultServer(_echoing(target)) as server:  # type: ignore[arg-type]
        provider = target.provider_class()(
            base_url=server.url + target.base_suffix, retry=RetryPolicy.none(), **settings, **_key_query(target, key)
        )
        with use_cassette(cassette):
            assert key in provider.chat_completion(prompt).content
            assert _streamed(provider, prompt) == f"your key is {key}"
        sent = list(server.requests)
    assert sent and all(r.query.get("key") == [key] and key in r.text for r in sent), "the key went out everywhere"
    text = cassette.read_text()
    assert key not in text and key[8:24] not in text
    assert "FILTERED" in text
    assert scan_tree(cassette.parent)[1] == []
    monkeypatch.setenv(RECORD_ENV, "none")
    with use_cassette(cassette) as replayed:  # the recording replays: filtered requests still match
        assert provider.chat_completion(prompt).content == "your key is FILTERED"
        assert _streamed(provider, prompt) == "your key is FILTERED"
    assert replayed.play_count == 2 and len(sent) == 2


def _streamed(provider: Any, prompt: str) -> str:
    events = list(provider.stream_chat_completion(prompt))
    assert events[-2].type is StreamEventType.METADATA, events
    return "".join(e.text or "" for e in events)


@pytest.mark.parametrize("target", [GEMINI, OPENAI], ids=["gemini", "openai"])
def test_recording_with_info_logging_logs_no_key(
    target: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """vcrpy logs every interaction it records (and, on replay, loads) at INFO before our filters
    run on it; its loggers carry the redacting filter, as the SDKs' do."""
    from llm_core.testing.cassettes import use_cassette

    key = "sk-proj-" + secrets.token_hex(20) if target is OPENAI else "AIza" + secrets.token_hex(18)[:35]
    monkeypatch.setenv("OPENAI_API_KEY" if target is OPENAI else "GEMINI_API_KEY", key)
    caplog.set_level(logging.INFO)
    cassette = tmp_path / "cassettes" / "recorded.json"
    with FaultServer(_echoing(target)) as server:  # type: ignore[arg-type]
        provider = target.provider_class()(base_url=server.url + target.base_suffix, retry=RetryPolicy.none())
        with use_cassette(cassette, mode="all"):
            assert key in provider.chat_completion("hello").content
    assert any(r.name == "vcr.cassette" for r in caplog.records), "vcrpy logged the interaction"
    assert key not in caplog.text
