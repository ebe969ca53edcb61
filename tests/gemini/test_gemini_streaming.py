"""Streaming: typed TOKEN events by call context, one METADATA, END last; ERROR then
END on failure; ``stream_text`` yields only response text; chunks are parsed as they arrive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import httpx2
import pytest
from google.genai import types

from core_gemini_plugin import assistant_message
from core_gemini_plugin.contents import map_contents
from core_gemini_plugin.stream_parser import GeminiStreamParser
from llm_core.errors import ContentFilteredError, InvalidResponseError, ServerError
from llm_core.messages import ChatMessage
from llm_core.requests import ChatRequest
from llm_core.streaming import CallContext, StreamEvent, StreamEventType, TokenType
from tests.gemini.gemini_inputs import STYLE_GUIDE, THINK_QUESTION, WEATHER
from tests.gemini.gemini_support import Delays, Offline, Runner, cassette, sent_body

TOKEN, METADATA, ERROR, END = (StreamEventType.TOKEN, StreamEventType.METADATA, StreamEventType.ERROR,
                               StreamEventType.END)


def kinds(events: list[StreamEvent]) -> list[StreamEventType]:
    return [e.type for e in events]


def sent_response_id(recorded: Any, index: int = 0) -> str:
    """The ``responseId`` of the recorded SSE answer ``index`` (every chunk carries the same)."""
    text = recorded.responses[index]["body"]["string"]
    text = text.decode() if isinstance(text, bytes) else text
    ids = {json.loads(line[6:])["responseId"] for line in text.splitlines() if line.startswith("data: ")}
    assert len(ids) == 1
    return ids.pop()


def test_text_stream(run: Runner) -> None:
    with cassette("stream_text") as recorded:
        events = run.stream("Count from one to five.")
    assert recorded.requests[0].uri.endswith("/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    assert kinds(events) == [TOKEN, TOKEN, TOKEN, METADATA, END]
    assert [e.text for e in events[:3]] == ["One, two,", " three, four,", " five."]  # untrimmed
    assert {e.token_type for e in events[:3]} == {TokenType.LLM_RESPONSE}
    meta = events[3].metadata
    assert meta is not None
    assert (meta.input_tokens, meta.output_tokens, meta.thinking_tokens, meta.stop_reason) == (9, 4, None, "stop")
    assert meta.raw_usage is not None and meta.raw_usage["total_token_count"] == 13
    assert meta.time_to_first_token_ms is not None and meta.total_time_ms is not None
    assert meta.total_time_ms >= meta.time_to_first_token_ms
    assert meta.response_id == sent_response_id(recorded)
    assert meta.model == "gemini-2.5-flash" and meta.provider == "gemini"


@pytest.mark.parametrize(("context", "thinking", "response"), [
    (None, TokenType.LLM_THINKING, TokenType.LLM_RESPONSE),
    (CallContext.AGENT_THOUGHT, TokenType.AGENT_THOUGHT_LLM_THINKING, TokenType.AGENT_THOUGHT_LLM_RESPONSE),
    ("FINAL_SYNTHESIS", TokenType.FINAL_SYNTHESIS_LLM_THINKING, TokenType.FINAL_SYNTHESIS_LLM_RESPONSE),
])
def test_thought_chunks_are_thinking_tokens_by_call_context(run: Runner, context: Any, thinking: TokenType,
                                                            response: TokenType) -> None:
    with cassette("stream_thinking") as recorded:
        events = run.stream(THINK_QUESTION, thinking={"budget": 1024}, call_context=context)
    assert sent_body(recorded)["generationConfig"] == {"thinkingConfig": {"include_thoughts": True,
                                                                          "thinking_budget": 1024}}
    assert kinds(events) == [TOKEN] * 4 + [METADATA, END]  # the empty signed chunk gives no token
    assert [e.token_type for e in events[:4]] == [thinking, thinking, response, response]
    meta = events[4].metadata
    assert meta is not None and meta.thinking_tokens == 96 and meta.stop_reason == "stop"


def test_streamed_turn_can_be_replayed_with_its_signature(run: Runner) -> None:
    with cassette("stream_thinking"):
        events = run.stream(THINK_QUESTION, thinking={"budget": 1024})
    text = "".join(e.text or "" for e in events if e.type is TOKEN and not e.is_thinking)
    meta = events[-2].metadata
    assert meta is not None
    assert meta.extra["gemini_parts"] == [
        {"text": "**Counting letters**\n\nSpelling it out: s-t-r-a-w-b-e-r-r-y.\n\nMarking each r gives three.\n\n",
         "thought": True},
        {"text": "The letter r appears **3** times in strawberry.",
         "thought_signature": meta.extra["thought_signatures"][0]["signature"]},
    ]
    [turn] = map_contents([assistant_message(meta, text)])
    assert turn["parts"][1]["text"] == text and isinstance(turn["parts"][1]["thought_signature"], bytes)


def test_stream_text_yields_only_response_text(run: Runner) -> None:
    with cassette("stream_thinking"):
        texts = run.stream_text(THINK_QUESTION, thinking={"budget": 1024})
    assert texts == ["The letter r appears ", "**3** times in strawberry."]


def test_streamed_tool_call(run: Runner) -> None:
    with cassette("stream_tool_call") as recorded:
        events = run.stream("What's the weather in Paris?", model="gemini-3-flash-preview", tools=[WEATHER])
    assert "tools" in sent_body(recorded)
    assert kinds(events) == [METADATA, END]
    meta = events[0].metadata
    assert meta is not None and meta.stop_reason == "tool_calls" and meta.thinking_tokens == 77
    assert meta.tool_calls is not None
    [call] = meta.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"}) and call.id.startswith("call_")
    assert meta.extra["thought_signatures"][0]["tool_call_id"] == call.id


def test_error_in_the_middle_of_a_stream(run: Runner) -> None:
    with cassette("stream_error_midway"):
        events = run.stream("Tell me a long story about a lighthouse keeper.")
    assert kinds(events) == [TOKEN, TOKEN, ERROR, END]
    assert isinstance(events[2].error, ServerError) and events[2].error.status_code == 503


def test_stream_text_raises_the_stream_error_after_the_text(run: Runner) -> None:
    with cassette("stream_error_midway"), pytest.raises(ServerError):
        run.stream_text("Tell me a long story about a lighthouse keeper.")


def test_opening_a_stream_is_retried(run: Runner, delays: Delays) -> None:
    with cassette("stream_open_retry") as recorded:
        events = run.stream("Name three rivers.")
    assert kinds(events) == [TOKEN, TOKEN, METADATA, END]
    assert delays == [2.0] and recorded.all_played


@pytest.mark.parametrize(("name", "prompt", "options", "stop"), [
    ("stream_safety", "Write a cruel joke about my neighbours.",
     {"safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_LOW_AND_ABOVE"}]},
     "content_filter"),
    ("stream_max_tokens", "Describe the ocean.", {"max_tokens": 8}, "length"),
])
def test_stop_reasons_of_streams(run: Runner, name: str, prompt: str, options: dict[str, Any], stop: str) -> None:
    with cassette(name):
        events = run.stream(prompt, **options)
    assert kinds(events)[-2:] == [METADATA, END] and TOKEN in kinds(events)
    assert events[-2].metadata is not None and events[-2].metadata.stop_reason == stop


def test_blocked_prompt_in_a_stream(run: Runner) -> None:
    with cassette("stream_prompt_blocked"):
        events = run.stream("Describe how to pick the lock of my neighbour's front door.")
    assert kinds(events) == [ERROR, END]
    assert isinstance(events[0].error, ContentFilteredError)


# -- incremental: tokens arrive before the rest of the stream is produced -----------------------


def sse_chunk(text: str, finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return f"data: {json.dumps({'candidates': [candidate], 'responseId': 'r1'})}\r\n\r\n".encode()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_chunks_are_yielded_as_they_arrive(offline: Offline, mode: str) -> None:
    produced: list[str] = []

    def body() -> Iterator[bytes]:
        for text in ("a", "b"):
            produced.append(text)
            yield sse_chunk(text)
        produced.append("end")
        yield sse_chunk("", "STOP")

    async def abody() -> AsyncIterator[bytes]:
        for chunk in body():
            yield chunk

    def answer(_request: httpx2.Request) -> httpx2.Response:
        content = body() if mode == "sync" else abody()
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=content)

    provider, _ = offline(answer)
    if mode == "sync":
        stream = provider.stream_chat_completion("Hi")
        first = next(stream)
        seen_at_first = list(produced)
        rest = list(stream)
    else:
        async def consume() -> tuple[StreamEvent, list[str], list[StreamEvent]]:
            events = provider.aio.stream_chat_completion("Hi")
            head = await events.__anext__()
            snapshot = list(produced)
            return head, snapshot, [e async for e in events]

        first, seen_at_first, rest = asyncio.run(consume())
    assert first.text == "a" and "end" not in seen_at_first
    assert kinds([first, *rest]) == [TOKEN, TOKEN, METADATA, END]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stream_cut_without_finish_reason_ends_with_error(offline: Offline, mode: str) -> None:
    provider, _ = offline(lambda _r: httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                                     content=sse_chunk("partial")))
    events = Runner(provider, mode).stream("Hi")
    assert kinds(events) == [TOKEN, ERROR, END]
    assert isinstance(events[1].error, InvalidResponseError)


def test_parser_feeds_each_chunk_and_reports_the_last_usage() -> None:
    parser = GeminiStreamParser(ChatRequest(messages=[ChatMessage.user("q")], model="gemini-2.5-flash",
                                            call_context=CallContext.AGENT_THOUGHT))
    first = types.GenerateContentResponse(candidates=[types.Candidate(content=types.Content(
        role="model", parts=[types.Part(text="hm", thought=True), types.Part(text="Hel")]))],
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=5, total_token_count=5))
    second = types.GenerateContentResponse(candidates=[types.Candidate(content=types.Content(
        role="model", parts=[types.Part(text="lo")]), finish_reason="STOP")],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=5, candidates_token_count=2, thoughts_token_count=1, total_token_count=8))
    assert [(e.text, e.token_type) for e in parser.feed(first)] == [
        ("hm", TokenType.AGENT_THOUGHT_LLM_THINKING), ("Hel", TokenType.AGENT_THOUGHT_LLM_RESPONSE)]
    assert [e.text for e in parser.feed(second)] == ["lo"]
    meta = parser.finish()
    assert (meta.input_tokens, meta.output_tokens, meta.thinking_tokens) == (5, 2, 1)
    assert meta.extra["gemini_parts"] == [{"text": "hm", "thought": True}, {"text": "Hello"}]


def test_stream_metadata_carries_cached_tokens_response_id_and_their_cost(run: Runner) -> None:
    with cassette("stream_cached") as recorded:
        events = run.stream("Where are maps?", system=STYLE_GUIDE)
    meta = events[-2].metadata
    assert meta is not None and meta.response_id == sent_response_id(recorded)
    assert (meta.input_tokens, meta.cached_tokens, meta.output_tokens, meta.thinking_tokens) == (1291, 1024, 3, 20)
    # (1291 - 1024) x 0.30 + 1024 x 0.03 + (3 + 20) x 2.50 USD per million (gemini-2.5-flash in models.py)
    assert meta.cost == Decimal("0.00016832")
