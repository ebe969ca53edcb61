"""Chat, completion and thinking through the real SDK, replayed from cassettes (sync and async)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import httpx2
import pytest

from core_gemini_plugin import assistant_message
from llm_core.errors import ContentFilteredError, UnsupportedFeatureError
from llm_core.messages import ChatMessage
from llm_core.requests import Prompt
from tests.gemini.gemini_inputs import QUESTION, STYLE_GUIDE, SYSTEM, THINK_QUESTION
from tests.gemini.gemini_support import Offline, Runner, cassette, sent_body


def test_chat_completion_sends_system_instruction_and_zero_temperature(run: Runner) -> None:
    with cassette("chat_basic") as recorded:
        response = run("chat_completion", [{"role": "user", "content": QUESTION}], system=SYSTEM,
                       temperature=0.0, max_tokens=200)
    body = sent_body(recorded)
    assert body["systemInstruction"] == {"parts": [{"text": SYSTEM}], "role": "user"}
    assert body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 200}
    assert body["contents"] == [{"parts": [{"text": QUESTION}], "role": "user"}]
    assert response.content == "The capital of France is Paris."
    assert response.finish_reason == "stop" and response.is_complete
    assert response.thinking is None and response.tool_calls is None
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.thinking_tokens) == (14, 7, 41)
    assert response.usage.total_tokens == 62
    assert response.model == "gemini-2.5-flash" and response.provider == "gemini"
    assert recorded.all_played


@pytest.mark.parametrize("method", ["complete", "generate_text", "answer"])
def test_prompt_object_gives_the_same_request_as_messages(run: Runner, method: str) -> None:
    prompt = Prompt(system=SYSTEM, text=QUESTION, temperature=0.0, max_tokens=200)
    with cassette("chat_basic") as recorded:
        result = run(method, prompt)
    text = result if isinstance(result, str) else result.content
    assert text == "The capital of France is Paris."
    assert recorded.all_played


@pytest.mark.parametrize("method", ["generate_text", "answer"])
def test_plain_string_prompt_and_untrimmed_text(run: Runner, method: str) -> None:
    with cassette("chat_plain_string") as recorded:
        text = run(method, "Write a haiku about autumn.")
    assert sent_body(recorded)["contents"] == [{"parts": [{"text": "Write a haiku about autumn."}], "role": "user"}]
    assert text == "Crisp leaves drift and fall,\nGolden light on quiet paths,\nThe year exhales slow.\n"


def test_thinking_budget_splits_thoughts_and_keeps_the_signature(run: Runner) -> None:
    with cassette("chat_thinking_budget") as recorded:
        response = run("chat_completion", THINK_QUESTION, thinking={"budget": 1024})
    config = sent_body(recorded)["generationConfig"]
    assert config == {"thinkingConfig": {"include_thoughts": True, "thinking_budget": 1024}}
    assert response.content == "The letter r appears **3** times in strawberry."
    assert response.thinking is not None and response.thinking.startswith("**Counting the letters**")
    assert response.has_thinking and response.usage.thinking_tokens == 87
    [signed] = response.metadata["thought_signatures"]
    assert signed["kind"] == "text" and signed["part"] == 1 and signed["signature"]


def test_next_turn_replays_thought_parts_and_signature(run: Runner) -> None:
    with cassette("chat_multi_turn_signature") as recorded:
        first = run("chat_completion", THINK_QUESTION, thinking={"budget": 1024})
        second = run("chat_completion", [ChatMessage.user(THINK_QUESTION), assistant_message(first),
                                         ChatMessage.user("And in raspberry?")], thinking={"budget": 1024})
    model_turn = sent_body(recorded, 1)["contents"][1]
    signature = first.metadata["thought_signatures"][0]["signature"]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0] == {"text": first.thinking, "thought": True}
    assert model_turn["parts"][1]["text"] == first.content
    sent = model_turn["parts"][1]["thoughtSignature"]
    assert sent.replace("-", "+").replace("_", "/") == signature  # the SDK sends URL-safe base64
    assert second.content == "The letter r appears **3** times in raspberry."


def test_thinking_level_on_gemini_3(run: Runner) -> None:
    with cassette("chat_thinking_level") as recorded:
        response = run("chat_completion", THINK_QUESTION, model="gemini-3-flash-preview", thinking={"level": "low"})
    assert sent_body(recorded)["generationConfig"] == {"thinkingConfig": {"include_thoughts": True,
                                                                          "thinking_level": "LOW"}}
    assert response.thinking == "**Counting characters**\n\nThe word has three r characters.\n"
    assert response.model == "gemini-3-flash-preview"


def test_thinking_on_a_model_that_cannot_think_is_refused_before_sending(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(UnsupportedFeatureError, match="thinking"):
        provider.chat_completion("Hi", model="gemini-2.5-flash-image", thinking=True)
    assert sent == []


def test_max_tokens_finish_is_length(run: Runner) -> None:
    with cassette("chat_max_tokens") as recorded:
        response = run("chat_completion", QUESTION, max_tokens=5, thinking={"include_thoughts": False, "budget": 0})
    assert sent_body(recorded)["generationConfig"] == {
        "maxOutputTokens": 5, "thinkingConfig": {"include_thoughts": False, "thinking_budget": 0}}
    assert response.content == "The capital of France is"
    assert response.finish_reason == "length" and response.is_truncated


def test_safety_stop_is_content_filter_with_ratings(run: Runner) -> None:
    harassment = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_LOW_AND_ABOVE"}]
    with cassette("chat_safety_blocked") as recorded:
        response = run("chat_completion", "Write a cruel joke about my neighbours.", safety_settings=harassment)
    assert sent_body(recorded)["safetySettings"] == harassment
    assert response.content == "" and response.thinking is None
    assert response.finish_reason == "content_filter" and response.is_filtered
    assert response.metadata["finish_reason"] == "SAFETY"
    assert response.metadata["safety_ratings"][0] == {"category": "HARM_CATEGORY_HARASSMENT",
                                                      "probability": "MEDIUM", "blocked": True}


def test_blocked_prompt_raises_content_filtered(run: Runner) -> None:
    with cassette("chat_prompt_blocked"), pytest.raises(ContentFilteredError, match="PROHIBITED_CONTENT"):
        run("chat_completion", "Describe how to pick the lock of my neighbour's front door.")


# -- the simplest request that means the same ---------------------------------------------------

#: The answer of cassettes/gemini/chat_plain_string.json (recorded from generateContent).
HAIKU_ANSWER = {
    "candidates": [{"content": {"parts": [{"text": "Crisp leaves drift and fall."}], "role": "model"},
                    "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 7, "totalTokenCount": 14},
    "modelVersion": "gemini-2.5-flash", "responseId": "resp-haiku",
}


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_one_plain_user_text_goes_as_a_string_and_the_sdk_sends_the_same_body(offline: Offline, mode: str) -> None:
    """``contents="..."`` (no ``config``) against the list form the API documents, through the SDK."""
    answer = json.dumps(HAIKU_ANSWER).encode()
    streamed = b"data: " + answer + b"\r\n\r\n"

    def reply(request: httpx2.Request) -> httpx2.Response:
        if "streamGenerateContent" in request.url.path:
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=streamed)
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=answer)

    provider, sent = offline(reply)
    prompt = "Write a haiku about autumn."
    payload = provider.map_chat_request(provider.builder.chat(prompt))
    assert payload == {"model": "gemini-2.5-flash", "contents": prompt}
    documented = {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": prompt}]}],
                  "config": {}}
    if mode == "sync":
        assert provider.chat_completion(prompt).content == "Crisp leaves drift and fall."
        provider.client.models.generate_content(**documented)
    elif mode == "async":
        assert asyncio.run(provider.aio.chat_completion(prompt)).content == "Crisp leaves drift and fall."
        asyncio.run(provider.client.aio.models.generate_content(**documented))
    else:
        assert "".join(provider.stream_text(prompt)) == "Crisp leaves drift and fall."
        list(provider.client.models.generate_content_stream(**documented))
    ours, theirs = sent
    assert ours.url == theirs.url
    assert json.loads(ours.content) == json.loads(theirs.content) == {
        "contents": [{"parts": [{"text": prompt}], "role": "user"}]}


def test_cached_prompt_tokens_and_response_id_are_read_and_billed_at_the_cached_price(run: Runner) -> None:
    """``usageMetadata.cachedContentTokenCount`` (part of ``promptTokenCount``) and ``responseId``;
    the catalogue's gemini-2.5-flash prices (models.py: 0.30 / 0.03 / 2.50 USD per million input /
    cached input / output tokens, thinking billed as output) give the cost."""
    with cassette("chat_cached") as recorded:
        response = run("chat_completion", "Where is poetry?", system=STYLE_GUIDE)
    assert response.response_id == json.loads(recorded.responses[0]["body"]["string"])["responseId"]
    usage = response.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.thinking_tokens) == (
        1300, 1024, 9, 35)
    # (1300 - 1024) x 0.30 + 1024 x 0.03 + (9 + 35) x 2.50, per million
    assert usage.cost == Decimal("0.00022352")
    assert recorded.all_played
