"""Responses streams → typed events (TOKEN by type, one METADATA, END last), replayed through the
real SDK, plus parser vectors."""

from __future__ import annotations

from decimal import Decimal

import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from core_openai_plugin.stream_parser import ResponsesStreamParser
from llm_core.errors import ProviderConnectionError, RateLimitError, ServerError
from llm_core.messages import ChatMessage
from llm_core.requests import ChatRequest
from llm_core.streaming import StreamEventType, TokenType

TOKEN, METADATA, ERROR, END = (StreamEventType.TOKEN, StreamEventType.METADATA, StreamEventType.ERROR,
                               StreamEventType.END)


def kinds(events):
    return [event.type for event in events]


def texts(events, token_type=None):
    return [e.text for e in events if e.type is TOKEN and (token_type is None or e.token_type is token_type)]


async def test_text_deltas_become_response_tokens_then_metadata_then_end(player):
    events = await player.play("stream_text")
    assert kinds(events) == [TOKEN] * 7 + [METADATA, END]
    assert texts(events) == ["One", ",", " two", ", three", ", four", ", five", "."]  # the empty delta is dropped
    assert {e.token_type for e in events if e.type is TOKEN} == {TokenType.LLM_RESPONSE}
    meta = events[-2].metadata
    assert meta.input_tokens == 14 and meta.output_tokens == 12 and meta.thinking_tokens == 0
    assert meta.stop_reason == "stop" and meta.model == "gpt-4.1-2025-04-14" and meta.provider == "openai"
    assert meta.response_id == player.stream_events()[-1]["response"]["id"] and meta.response_id.startswith("resp_")
    assert meta.cached_tokens == 0 and meta.raw_usage["total_tokens"] == 26  # cached_tokens: 0 is reported, not None
    assert meta.time_to_first_token_ms is not None and meta.total_time_ms >= meta.time_to_first_token_ms
    sent = player.sent()
    assert sent["stream"] is True and sent["store"] is False


async def test_stream_text_yields_only_non_empty_response_text(player):
    chunks = await player.play("stream_text_only")
    assert chunks == ["One", ",", " two", ", three", ", four", ", five", "."]


async def test_reasoning_summaries_stream_as_thinking_in_the_call_context(player):
    events = await player.play("stream_reasoning")
    thinking = texts(events, TokenType.AGENT_THOUGHT_LLM_THINKING)
    answer = texts(events, TokenType.AGENT_THOUGHT_LLM_RESPONSE)
    assert "".join(thinking) == ("**Checking divisors**\n\n97 is odd; not divisible by 3, 5 or 7."
                                 "\n\n**Conclusion**\n\nNo divisor up to its square root.")
    assert "".join(answer) == "Yes, 97 is prime."
    first_answer = next(i for i, e in enumerate(events) if e.token_type is TokenType.AGENT_THOUGHT_LLM_RESPONSE)
    assert all(e.is_thinking for e in events[:first_answer])
    meta = events[-2].metadata
    assert meta.thinking_tokens == 140 and meta.output_tokens == 10 and meta.input_tokens == 11
    [item] = meta.extra["reasoning_items"]
    final = player.answered_stream_item("rs_")
    assert item["encrypted_content"] == final["encrypted_content"]  # from output_item.done, not the partial one
    assert len(item["encrypted_content"]) > 24


async def test_streamed_function_arguments_are_accumulated_into_tool_calls(player):
    events = await player.play("stream_tools")
    assert kinds(events) == [METADATA, END]
    meta = events[0].metadata
    assert meta.stop_reason == "tool_calls"
    weather, clock = meta.tool_calls
    assert (weather.name, weather.arguments) == ("get_weather", {"city": "Paris"})
    assert (clock.name, clock.arguments) == ("get_time", {"city": "Tokyo"})
    assert weather.id.startswith("call_") and weather.id != clock.id
    assert [tool["name"] for tool in player.sent()["tools"]] == ["get_weather", "get_time"]


async def test_response_failed_gives_error_then_end(player):
    events = await player.play("stream_failed")
    assert kinds(events) == [TOKEN, TOKEN, ERROR, END]
    assert isinstance(events[2].error, ServerError) and "invalid content" in str(events[2].error)
    assert player.sleeps == []  # a failure after the first chunk is not retried


async def test_an_error_event_gives_error_then_end(player):
    events = await player.play("stream_error_event")
    assert kinds(events) == [TOKEN, TOKEN, ERROR, END]
    assert isinstance(events[2].error, RateLimitError)
    assert player.sleeps == []


async def test_incomplete_stream_reports_length(player):
    events = await player.play("stream_incomplete")
    assert kinds(events)[-2:] == [METADATA, END]
    assert events[-2].metadata.stop_reason == "length"
    assert "".join(texts(events)) == "The sea is wide and"


async def test_a_stream_cut_before_completion_is_an_error(player):
    events = await player.play("stream_cut")
    assert kinds(events) == [TOKEN, ERROR, END]
    assert isinstance(events[1].error, ProviderConnectionError)


async def test_opening_the_stream_is_retried_on_429(player):
    events = await player.play("stream_open_429")
    assert player.sleeps == [0.1]
    assert texts(events)[0] == "One" and kinds(events)[-2:] == [METADATA, END]


async def test_a_streamed_refusal_is_content_filter_without_tokens(player):
    events = await player.play("stream_refusal")
    assert kinds(events) == [METADATA, END]
    meta = events[0].metadata
    assert meta.stop_reason == "content_filter" and meta.extra["refusal"] == "I can't help with that."


async def test_stream_text_raises_the_stream_error(player):
    with pytest.raises(ServerError):
        await player.play("stream_text_failed")


# --- parser vectors (events built from the SDK types) -------------------------------------------

EVENT = TypeAdapter(ResponseStreamEvent)


def event(kind, seq, **fields):
    return EVENT.validate_python({"type": kind, "sequence_number": seq, **fields})


def parser(context=None):
    request = ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-oss-20b", call_context=context)
    return ResponsesStreamParser(request)


def completed(seq, output=(), status="completed", usage=None):
    return event("response.completed", seq, response={
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-oss-20b", "status": status,
        "output": list(output), "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": usage,
    })


def test_raw_reasoning_text_from_compatible_servers_is_thinking():
    p = parser()
    out = p.feed(event("response.reasoning_text.delta", 0, content_index=0, delta="Let me think.", item_id="rs_1",
                       output_index=0))
    assert [(e.text, e.token_type) for e in out] == [("Let me think.", TokenType.LLM_THINKING)]


def test_summary_parts_are_separated_like_the_non_streamed_thinking():
    p = parser("FINAL_SYNTHESIS")
    feed = [("rs_1", 0, "A"), ("rs_1", 0, "a"), ("rs_1", 1, "B"), ("rs_2", 0, "C")]
    out = [p.feed(event("response.reasoning_summary_text.delta", i, delta=d, item_id=item, output_index=0,
                        summary_index=index))[0] for i, (item, index, d) in enumerate(feed)]
    assert [e.text for e in out] == ["A", "a", "\n\nB", "\n\nC"]
    assert {e.token_type for e in out} == {TokenType.FINAL_SYNTHESIS_LLM_THINKING}


def test_a_function_call_seen_only_when_done_is_kept():
    p = parser()
    p.feed(event("response.output_item.done", 0, output_index=0, item={
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": '{"a":1}',
        "status": "completed"}))
    p.feed(completed(1))
    meta = p.finish()
    assert [(c.id, c.arguments) for c in meta.tool_calls] == [("call_1", {"a": 1})]
    assert meta.stop_reason == "tool_calls" and meta.input_tokens is None


def test_failed_without_an_error_object_is_a_server_error():
    p = parser()
    failed = event("response.failed", 0, response={
        "id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "failed", "output": [],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": []})
    with pytest.raises(ServerError):
        p.feed(failed)


def test_unknown_events_are_ignored():
    p = parser()
    assert p.feed(event("response.queued", 0, response={
        "id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "queued", "output": [],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": []})) == ()


async def test_stream_metadata_carries_cached_tokens_response_id_and_their_cost(player):
    events = await player.play("stream_cached")
    meta = events[-2].metadata
    assert meta.response_id == player.stream_events()[-1]["response"]["id"]
    assert (meta.input_tokens, meta.cached_tokens, meta.output_tokens, meta.thinking_tokens) == (1291, 1152, 8, 20)
    # (1291 - 1152) x 0.75 + 1152 x 0.075 + (8 + 20) x 4.50 USD per million (gpt-5.4-mini in models.py)
    assert meta.cost == Decimal("0.00031665")
    assert meta.usage.cached_tokens == 1152 and meta.usage.cost == meta.cost
