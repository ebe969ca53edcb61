"""The README's first quick-start command: ``llm-core --replay cassettes demo`` answers every call
of both plugins from the repository's cassettes, through the real SDKs, with no key and no network.

The CLI runs as a real process (the installed console script, from the repository root) with no
API key in its environment and a ``sitecustomize`` that refuses and logs every socket connection
and DNS lookup: vcrpy answers in-process, so the log holds nothing but the demo's fallback step,
which points one provider at a closed port on 127.0.0.1 (requests to localhost are not replayed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llm_core.cli.demo import CHAT_PROMPT, DECISION_QUESTIONS, JSON_PROMPT, STREAM_PROMPT, TOOL_PROMPT, _calls
from llm_core.cli.replay import PLACEHOLDER_KEY, merged_cassette
from llm_core.decisions import DecisionAnswer, parse_questions, validate_answers
from llm_core.registry import get_registry
from llm_core.testing.cassettes import FILTERED, SECRET_HEADERS, use_cassette

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
PROVIDERS = ("gemini", "openai")
DEMO_CASSETTES = {p: CASSETTES / p / "demo.json" for p in PROVIDERS}
CALLS = ["chat", "stream_with_thinking", "tool_call", "json", "decision"]
#: The one connection the demo opens: its fallback step's closed port on 127.0.0.1 (never the network).
LOOPBACK_ONLY = ["create_connection (('127.0.0.1', 9),)"]

GUARD = textwrap.dedent(
    """
    import os
    import socket

    _LOG = os.environ.get("DEMO_SOCKET_LOG")
    if _LOG:
        def _refuse(name):
            def refuse(*args, **kwargs):
                with open(_LOG, "a", encoding="utf-8") as log:
                    log.write(f"{name} {args[1:2] if name.startswith('socket.') else args[:1]}\\n")
                raise OSError(f"offline test: {name} refused")
            return refuse

        socket.socket.connect = _refuse("socket.connect")
        socket.socket.connect_ex = _refuse("socket.connect_ex")
        socket.create_connection = _refuse("create_connection")
        socket.getaddrinfo = _refuse("getaddrinfo")
    """
)


class Cli:
    """Runs the ``llm-core`` console script next to ``sys.executable`` from the repository root."""

    def __init__(self, tmp: Path) -> None:
        self.guard = tmp / "guard"
        self.guard.mkdir()
        (self.guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
        self.sockets = tmp / "sockets.log"
        self.config_home = tmp / "config"
        self.script = Path(sys.executable).parent / "llm-core"
        assert self.script.exists(), "the llm-core console script is not installed"

    def env(self, **extra: str) -> dict[str, str]:
        """The user's environment without any key or llm-core / provider setting."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith(("_API_KEY", "_ACCESS_TOKEN"))
            and not k.startswith(("LLM_CORE_", "OPENAI_", "GEMINI_", "GOOGLE_"))
        }
        env.update(
            # the guard first, then the sources under test (a worktree's, when PYTHONPATH names them)
            PYTHONPATH=os.pathsep.join(filter(None, [str(self.guard), os.environ.get("PYTHONPATH")])),
            DEMO_SOCKET_LOG=str(self.sockets),
            LLM_CORE_CONFIG="",
            XDG_CONFIG_HOME=str(self.config_home),
        )
        env.update(extra)
        return env

    def __call__(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.script), *args],
            capture_output=True,
            text=True,
            env=self.env(**env),
            cwd=ROOT,
            timeout=120,
            check=False,
        )

    def connections(self) -> list[str]:
        return self.sockets.read_text(encoding="utf-8").splitlines() if self.sockets.exists() else []


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def _recorded_text(provider: str, call: int) -> str:
    """The answer text of the demo cassette's ``call``-th reply (to compare the CLI's output with)."""
    interaction = json.loads(DEMO_CASSETTES[provider].read_text(encoding="utf-8"))["interactions"][call]
    body = interaction["response"]["body"]["json"]
    if provider == "gemini":
        return "".join(p["text"] for p in body["candidates"][0]["content"]["parts"] if not p.get("thought"))
    return "".join(c["text"] for item in body["output"] if item["type"] == "message" for c in item["content"])


# -- the demo, end to end ---------------------------------------------------------------------


def test_demo_replays_every_call_of_both_plugins(cli: Cli) -> None:
    run = cli("--replay", "cassettes", "demo", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["replay"] is True
    features = {p["provider"]: set(p["features"]) for p in report["providers"]}
    wanted = {"chat", "streaming", "thinking", "tools", "json_mode", "decision", "vision"}
    assert wanted <= features["gemini"] and wanted <= features["openai"]
    routes = {tuple(r["features"]): r for r in report["routes"]}
    assert routes["vision", "streaming"]["provider"] in PROVIDERS and routes["vision", "streaming"]["why"]
    assert routes[("decision",)]["provider"] in PROVIDERS
    questions = parse_questions(DECISION_QUESTIONS)

    for provider in PROVIDERS:
        calls = report["calls"][provider]
        assert list(calls) == CALLS
        assert {name: c["ok"] for name, c in calls.items()} == dict.fromkeys(CALLS, True), calls
        assert calls["chat"]["content"] == _recorded_text(provider, 0)
        assert "capabilit" in calls["chat"]["content"] and calls["chat"]["tokens"] > 0
        stream = calls["stream_with_thinking"]
        assert "1021" in stream["thinking"] and stream["thinking_tokens"] > 0
        assert stream["content"].startswith("Yes, 1021 is a prime number")
        assert "Yes, 1021" not in stream["thinking"]  # thoughts and answer arrive apart
        assert calls["tool_call"]["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
        assert calls["json"]["json"] == {"name": "Red", "hex": "#FF0000"}
        decision = calls["decision"]
        assert decision["probability_kind"] == "calibrated"  # the native decisions API answered
        answers = {k: DecisionAnswer.model_validate(a) for k, a in decision["answers"].items()}
        validate_answers(questions, answers, provider=provider)
        assert answers["is_bug"].choice == "yes" and answers["is_bug"].value is not None
        assert answers["is_bug"].value > 0.9
        assert answers["area"].choice == "uploads"
        assert answers["area"].probabilities is not None
        assert sum(answers["area"].probabilities.values()) == pytest.approx(1.0)
    assert report["calls"]["gemini"]["chat"]["model"] == "gemini-2.5-flash"
    assert report["calls"]["openai"]["chat"]["model"].startswith("gpt-5.4-mini")
    # the fallback step: gemini's base URL is a closed local port, so the router moves on to openai
    fallback = report["fallback"]
    assert fallback["ok"] is True, fallback
    assert fallback["answered_by"] == "openai" and fallback["fallback_from"] == ["gemini"]
    assert fallback["content"] == _recorded_text("openai", 0)
    assert cli.connections() == LOOPBACK_ONLY


def test_demo_text_tour_is_labelled_replay(cli: Cli) -> None:
    run = cli("--replay", "cassettes", "demo")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[replay] answering provider calls from" in run.stderr
    out = run.stdout
    assert out.startswith("llm-core demo - REPLAY: answers come from recorded cassettes")
    headings = [line for line in out.splitlines() if line.startswith("== ")]
    assert headings == [
        "== 1. Providers discovered through the llm_core entry points",
        "== 2. Selection by capability: registry.select(...)",
        "== 3. Calls through Google Gemini (gemini)",
        "== 4. Calls through OpenAI (openai)",
        "== 5. Not called (no credentials)",  # vertex: no Google Cloud credentials here
        "== 6. Fallback: registry.router(Feature.CHAT) when gemini is unreachable",
    ]
    # the demo wraps to the terminal's width: read the words, not the line breaks
    words = " ".join(out.split())
    assert "vertex: no credentials: set GOOGLE_CLOUD_PROJECT with application default credentials" in words
    assert "vision + streaming -> gemini" in out or "vision + streaming -> openai" in out
    # replay sets placeholder keys: the routing reasons say so instead of "credentials present"
    assert "credentials present" not in out and "no key needed: replay answers from recordings" in out
    # a capability set nothing offers together is one readable line
    assert "  embeddings + image -> no provider: no single provider supports all of embeddings, image" in out
    assert "None" not in out
    assert "  gemini -> openai: answered by openai after gemini failed" in out
    assert "FAILED" not in out and "Error" not in out
    assert sum(line.lstrip().startswith(tuple(f"{c}: ok" for c in CALLS)) for line in out.splitlines()) == 10
    assert cli.connections() == LOOPBACK_ONLY


def test_demo_answers_are_wrapped_to_the_terminal_not_cut(cli: Cli) -> None:
    out = cli("--replay", "cassettes", "demo", COLUMNS="60").stdout
    fields = [line for line in out.splitlines() if line.startswith("      ") and not line.startswith("      vertex")]
    assert fields and max(len(line) for line in fields) < 60
    assert "…" not in out  # whole answers, wrapped
    assert any(line.startswith("        ") for line in fields)  # a long answer goes on, indented


# -- single commands in replay mode -----------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_demo_chat_prompt_replays_as_a_chat_command(cli: Cli, provider: str) -> None:
    run = cli("--replay", "cassettes", "chat", CHAT_PROMPT, "-p", provider)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == _recorded_text(provider, 0)
    assert "[replay]" in run.stderr
    assert cli.connections() == []


def test_an_unrecorded_prompt_fails_with_a_clear_message(cli: Cli) -> None:
    run = cli("--replay", "cassettes", "chat", "A prompt that no cassette holds.", "-p", "gemini")
    assert run.returncode == 1  # the provider call failed
    assert run.stdout == ""
    error = run.stderr.splitlines()[-1]
    assert error.startswith("error: [replay] no recorded interaction in cassettes matches this gemini request")
    assert "POST https://generativelanguage.googleapis.com/v1/models/gemini-2.5-flash:generateContent" in error
    assert "differ in: body" in error and "nothing was sent" in error and "GEMINI_API_KEY set" in error
    assert len(run.stderr.splitlines()) == 2  # the replay note and the error: no traceback, no vcrpy advice
    assert "record_mode" not in run.stderr and "Traceback" not in run.stderr
    assert cli.connections() == []


def test_an_unrecorded_prompt_fails_clearly_in_json_and_streams(cli: Cli) -> None:
    run = cli("--replay", "cassettes", "--json", "chat", "A prompt that no cassette holds.", "-p", "openai")
    assert run.returncode == 1
    error = json.loads(run.stdout)
    assert error["error"] == "ProviderError"
    assert error["message"].startswith("[replay] no recorded interaction in cassettes matches this openai request")
    assert "OPENAI_API_KEY" in error["message"]

    streamed = cli("--replay", "cassettes", "chat", "A prompt that no cassette holds.", "-p", "openai", "--stream")
    assert streamed.returncode == 1
    assert "no recorded interaction in cassettes matches this request (POST https://api.openai.com/v1/responses)" in (
        streamed.stderr
    )
    assert "record_mode" not in streamed.stderr and "Traceback" not in streamed.stderr
    assert cli.connections() == []


def test_the_socket_guard_sees_a_live_call(cli: Cli) -> None:
    """Control: without --replay the same process does try the network, and the guard logs it."""
    run = cli("chat", "hello", "-p", "openai", OPENAI_API_KEY="test-key")
    assert run.returncode == 1
    assert any("api.openai.com" in line for line in cli.connections())


# -- the cassettes ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_demo_cassette_holds_exactly_the_demo_requests(
    provider: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each demo call plays its own interaction once, in order, and none is left over."""
    for name in ("GOOGLE_GEMINI_BASE_URL", "OPENAI_BASE_URL", "LLM_CORE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with use_cassette(DEMO_CASSETTES[provider], mode="none") as cassette:
        results = _calls(get_registry().get(provider, api_key="test-key"))
        assert {name: r["ok"] for name, r in results.items()} == dict.fromkeys(CALLS, True), results
        assert cassette.all_played and cassette.play_count == len(CALLS)
    bodies = [r.body.decode() if isinstance(r.body, bytes) else str(r.body) for r in cassette.requests]
    for index, prompt in enumerate([CHAT_PROMPT, STREAM_PROMPT, TOOL_PROMPT, JSON_PROMPT]):
        assert prompt in bodies[index]
    assert '"is_bug"' in bodies[4] and cassette.requests[4].path.endswith("/decisions")


def test_in_the_merged_replay_each_demo_request_matches_only_its_own_interaction(tmp_path: Path) -> None:
    """``--replay cassettes`` merges every cassette; no other one (a failure reply to the same
    request, say) may answer a demo request."""
    merged = merged_cassette(CASSETTES)
    own: list[int] = []
    offset = 0
    for path in sorted(CASSETTES.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        is_cassette = isinstance(data, dict) and isinstance(data.get("interactions"), list)
        count = len(data["interactions"]) if is_cassette else 0
        if path in DEMO_CASSETTES.values():
            own.extend(range(offset, offset + count))
        offset += count
    assert offset == len(merged["interactions"]) and len(own) == 2 * len(CALLS)
    target = tmp_path / "merged.json"
    target.write_text(json.dumps(merged), encoding="utf-8")
    with use_cassette(target, mode="none", allow_playback_repeats=True) as cassette:
        for index in own:
            request, response = cassette.data[index]
            matches = cassette.responses_of(request)
            assert len(matches) == 1 and matches[0] is response, request


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_demo_cassettes_hold_no_key(provider: str) -> None:
    text = DEMO_CASSETTES[provider].read_text(encoding="utf-8")
    assert PLACEHOLDER_KEY not in text and "test-key" not in text
    for interaction in json.loads(text)["interactions"]:
        headers = interaction["request"]["headers"]
        secret = [h for h in headers if h in SECRET_HEADERS]
        assert secret and all(headers[h] == [FILTERED] for h in secret)
        assert "key=" not in interaction["request"]["uri"]
