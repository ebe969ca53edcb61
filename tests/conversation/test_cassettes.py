"""Tool loops through the real SDKs, replayed from cassettes (``author_cassettes.py`` says where
each shape comes from): Gemini thought signatures and OpenAI encrypted reasoning items go back
byte for byte on every step, sync and async; a router conversation falls back from Gemini to
OpenAI in turn 2 and is back on Gemini in turn 3; save/resume through JSON between turns."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_core.conversation import Conversation
from llm_core.retry import RetryPolicy
from llm_core.testing.cassettes import use_cassette
from tests.conversation import flows

ANSWER_1 = "Paris: 18 °C and cloudy. Tokyo: 24 °C and clear, local time 21:30."
ANSWER_2 = "There is no weather station in Atlantis, so I cannot tell you."


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_CORE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


def gemini(**config: Any) -> Any:
    from core_gemini_plugin.provider import GeminiProvider

    return GeminiProvider(api_key=flows.KEY, retry=RetryPolicy.none(), **config)


def openai(**config: Any) -> Any:
    from core_openai_plugin.provider import OpenAIProvider

    return OpenAIProvider(api_key=flows.KEY, retry=RetryPolicy.none(), **config)


def bodies(cassette: Any) -> list[dict[str, Any]]:
    return [json.loads(request.body) for request in cassette.requests]


def responses(cassette: Any) -> list[dict[str, Any]]:
    return [json.loads(response["body"]["string"]) for response in cassette.responses]


def b64bytes(text: str) -> bytes:
    """Signature bytes: responses carry standard base64, the SDK sends URL-safe base64."""
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))


def run(conversation: Any, *messages: str) -> list[Any]:
    """``send`` each message, through the sync or the async API."""
    results = []
    for message in messages:
        result = conversation.send(message)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        results.append(result)
    return results


def sync_or_async(provider: Any, mode: str, **settings: Any) -> Any:
    return (provider.aio if mode == "async" else provider).conversation(**settings)


# -- Gemini -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gemini_loops_send_every_signature_back(mode: str) -> None:
    with use_cassette(flows.GEMINI_CASSETTES / "conversation_tool_loop.json") as cassette:
        chat = sync_or_async(gemini(), mode, **flows.settings(flows.GEMINI_MODEL))
        first, second = run(chat, flows.FIRST, flows.SECOND)
    assert first.content == ANSWER_1 and second.content == ANSWER_2
    assert [len(r.steps) for r in (first, second)] == [3, 2]  # a three-step loop, then a two-step one
    assert first.steps[0].thinking.startswith("**Planning**")
    sent, answered = bodies(cassette), responses(cassette)
    assert len(sent) == 5
    # every model turn answered so far is sent back part for part, signatures byte for byte
    for step in range(1, 5):
        model_turns = [c for c in sent[step]["contents"] if c["role"] == "model"]
        for turn, earlier in zip(model_turns, [answered[i] for i in range(step)], strict=True):
            received = earlier["candidates"][0]["content"]["parts"]
            assert [sorted(p) for p in turn["parts"]] == [sorted(p) for p in received]
            for back, part in zip(turn["parts"], received, strict=True):
                if "thoughtSignature" in part:
                    assert b64bytes(back["thoughtSignature"]) == b64bytes(part["thoughtSignature"])
    # parallel calls answered in one user turn, in call order, matched by id; the error fed back
    results = [p["functionResponse"] for p in sent[1]["contents"][-1]["parts"]]
    calls = [p["functionCall"] for p in sent[1]["contents"][-2]["parts"] if "functionCall" in p]
    assert [r["id"] for r in results] == [c["id"] for c in calls]
    assert results[0]["response"] == {"temp_c": 18, "sky": "cloudy"}
    error = sent[4]["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert error == {"error": "LookupError: no weather station in Atlantis"}
    # the tool schema came from the function's signature and docstring
    declaration = sent[0]["tools"][0]["functionDeclarations"][0]
    assert declaration["description"] == "Current weather for a city."
    assert declaration["parameters_json_schema"]["properties"]["city"]["description"] == "City name, e.g. Paris"
    assert sent[0]["generationConfig"]["thinkingConfig"] == {"include_thoughts": True, "thinking_level": "LOW"}
    assert chat.usage.thinking_tokens == 140 + 40 + 31 + 52 + 20


def test_gemini_resumes_from_json_with_the_signatures_intact() -> None:
    with use_cassette(flows.GEMINI_CASSETTES / "conversation_tool_loop.json", allow_playback_repeats=True):
        chat = gemini().conversation(**flows.settings(flows.GEMINI_MODEL))
        chat.send(flows.FIRST)
        saved = chat.to_json()
        resumed = Conversation.from_json(saved, provider=gemini(), tools=flows.TOOLS)
        assert resumed.send(flows.SECOND).content == ANSWER_2  # the request matched the recorded one


# -- OpenAI -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_openai_loops_replay_reasoning_items_and_call_pairs(mode: str) -> None:
    with use_cassette(flows.OPENAI_CASSETTES / "conversation_tool_loop.json") as cassette:
        chat = sync_or_async(openai(), mode, **flows.settings(flows.OPENAI_MODEL))
        first, second = run(chat, flows.FIRST, flows.SECOND)
    assert first.content == ANSWER_1 and second.content == ANSWER_2
    assert [len(r.steps) for r in (first, second)] == [3, 2]
    sent, answered = bodies(cassette), responses(cassette)
    assert all(b["store"] is False and b["include"] == ["reasoning.encrypted_content"] for b in sent)
    for step in range(1, 5):
        replayed = [i for i in sent[step]["input"] if i.get("type") == "reasoning"]
        received = [i for r in answered[:step] for i in r["output"] if i["type"] == "reasoning"]
        assert [(i["id"], i["encrypted_content"]) for i in replayed] == [
            (i["id"], i["encrypted_content"]) for i in received
        ]
        calls = [i["call_id"] for i in sent[step]["input"] if i.get("type") == "function_call"]
        outputs = [i["call_id"] for i in sent[step]["input"] if i.get("type") == "function_call_output"]
        assert calls == outputs  # every call answered, in call order
        assert calls == [i["call_id"] for r in answered[:step] for i in r["output"] if i["type"] == "function_call"]
    kinds = [i.get("type", i.get("role")) for i in sent[1]["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call", "function_call_output",
                     "function_call_output"]  # fmt: skip
    assert sent[4]["input"][-1]["output"] == '{"error": "LookupError: no weather station in Atlantis"}'
    assert sent[0]["tools"][0]["parameters"]["additionalProperties"] is False


# -- router: fallback mid-conversation across both real SDKs ------------------------------------


@pytest.fixture
def both_cassettes(tmp_path: Path) -> Iterator[Any]:
    merged = [
        interaction
        for folder in (flows.GEMINI_CASSETTES, flows.OPENAI_CASSETTES)
        for interaction in json.loads((folder / "conversation_fallback.json").read_text(encoding="utf-8"))[
            "interactions"
        ]
    ]
    path = tmp_path / "fallback.json"
    path.write_text(json.dumps({"version": 1, "interactions": merged}), encoding="utf-8")
    with use_cassette(path, mode="none") as cassette:
        yield cassette


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_router_falls_back_in_turn_two_and_turn_three_still_works(both_cassettes: Any, mode: str) -> None:
    from tests.conversation.author_cassettes import fallback_router

    router = fallback_router(gemini(model=flows.GEMINI_MODEL), openai(model=flows.OPENAI_MODEL))
    chat = (router.aio if mode == "async" else router).conversation(**flows.settings(None))
    first, second, third = run(chat, flows.FIRST, flows.SECOND, flows.THIRD)
    assert [s.provider for s in first.steps] == ["gemini"] * 3
    assert [(s.provider, s.metadata["fallback_from"]) for s in second.steps] == [("openai", ["gemini"]), ("openai", [])]
    assert (third.provider, third.content) == ("gemini", "Tokyo is warmer: 24 °C against 18 °C in Paris.")
    assert [m.metadata["answered_by"] for m in chat.messages if m.role.value == "assistant"] == [
        "gemini", "gemini", "gemini", "openai", "openai", "gemini"]  # fmt: skip

    sent = [(r.host, json.loads(r.body)) for r in both_cassettes.requests]
    to_openai = [body for host, body in sent if "openai" in host]
    to_gemini = [body for host, body in sent if "googleapis" in host]
    assert len(to_openai) == 2 and len(to_gemini) == 5
    # OpenAI gets Gemini's turns as plain calls and results: no signatures, the same call ids
    assert "thoughtSignature" not in json.dumps(to_openai) and "thought_signature" not in json.dumps(to_openai)
    gemini_ids = [p["functionCall"]["id"] for c in to_gemini[3]["contents"] for p in c["parts"] if "functionCall" in p]
    openai_ids = [i["call_id"] for i in to_openai[0]["input"] if i.get("type") == "function_call"]
    assert openai_ids == gemini_ids
    # back on Gemini: its own signatures again, OpenAI's turn without OpenAI's reasoning items
    final = to_gemini[4]
    assert "encrypted_content" not in json.dumps(final) and "reasoning" not in json.dumps(final)
    assert to_gemini[4]["contents"][:6] == to_gemini[3]["contents"][:6]  # turn 1 replayed unchanged
    openai_calls = [i["call_id"] for i in to_openai[1]["input"] if i.get("type") == "function_call"]
    parts = [p for c in final["contents"] for p in c["parts"]]
    ids = [p[kind]["id"] for p in parts for kind in ("functionCall", "functionResponse") if kind in p]
    assert ids[-2:] == [openai_calls[-1]] * 2  # OpenAI's call and its result, under OpenAI's id
    # ... and OpenAI's reasoning items are kept in the history, so it could go back there
    by_openai = [m for m in chat.messages if m.metadata.get("answered_by") == "openai"]
    assert all(m.metadata["reasoning_items"][0]["encrypted_content"].startswith("gAAAA") for m in by_openai)
