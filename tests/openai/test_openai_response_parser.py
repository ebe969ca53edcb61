"""Response parser vectors on SDK objects (including the lean shapes of compatible servers)."""

from __future__ import annotations

import base64

import pytest
from openai.types import CreateEmbeddingResponse, ImagesResponse
from openai.types.responses import Response

from core_openai_plugin.response_parser import finish_reason, parse_embeddings, parse_images, parse_response, tool_call
from llm_core.errors import InvalidInputError, InvalidResponseError, RateLimitError
from llm_core.messages import ChatMessage
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest
from llm_core.tools import ToolCall
from tests.openai.openai_scenarios import make_provider

REQUEST = ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-4.1")


def response(output, **fields):
    """Built leniently, as the SDK builds what it receives (missing fields stay missing)."""
    return Response.construct(**{
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4.1-2025-04-14", "status": "completed",
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], **fields})


def message(*parts, phase=None):
    return {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "phase": phase,
            "content": list(parts)}


def text(value):
    return {"type": "output_text", "text": value, "annotations": []}


def test_texts_of_all_messages_join_without_separator():
    parsed = parse_response(response([message(text("Hello ")), message(text("world"), phase="final_answer")]),
                            REQUEST)
    assert parsed.content == "Hello world" and parsed.finish_reason == "stop"
    assert parsed.thinking is None and parsed.tool_calls is None and "reasoning_items" not in parsed.metadata


def test_text_is_kept_byte_for_byte():
    parsed = parse_response(response([message(text("  two spaces\t and <think>tags</think>\n"))]), REQUEST)
    assert parsed.content == "  two spaces\t and <think>tags</think>\n"


def test_a_refusal_next_to_text_keeps_the_text():
    parsed = parse_response(response([message(text("Partly: "), {"type": "refusal", "refusal": "no more"})]),
                            REQUEST)
    assert parsed.content == "Partly: " and parsed.finish_reason == "stop"
    assert parsed.metadata["refusal"] == "no more"


def test_raw_reasoning_content_is_thinking_when_there_is_no_summary():
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": [],
                 "content": [{"type": "reasoning_text", "text": "Think."}]}
    parsed = parse_response(response([reasoning, message(text("Done."))]), REQUEST)
    assert parsed.thinking == "Think."
    assert parsed.metadata["reasoning_items"] == [
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Think."}]}]


def test_usage_without_details_has_no_thinking_tokens():
    parsed = parse_response(response([message(text("x"))], usage={"input_tokens": 3, "output_tokens": 2,
                                                                  "total_tokens": 5}), REQUEST)
    assert parsed.usage.model_dump() == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5,
                                         "thinking_tokens": None, "cached_tokens": None,
                                         "tool_uses": None, "cost": None}  # priced by the provider


def test_a_failed_response_raises_its_error():
    failed = response([], status="failed", error={"code": "rate_limit_exceeded", "message": "slow down"})
    with pytest.raises(RateLimitError, match="slow down"):
        parse_response(failed, REQUEST)


@pytest.mark.parametrize(("status", "reason", "calls", "refused", "expected"), [
    ("incomplete", "max_output_tokens", False, False, "length"),
    ("incomplete", None, False, False, "length"),
    ("incomplete", "content_filter", False, False, "content_filter"),
    ("incomplete", "steered", False, False, "steered"),
    ("completed", None, True, False, "tool_calls"),
    ("completed", None, True, True, "content_filter"),
    ("completed", None, False, False, "stop"),
])
def test_finish_reasons(status, reason, calls, refused, expected):
    assert finish_reason(status, reason, has_calls=calls, refused=refused) == expected


def test_embeddings_come_back_in_input_order_and_must_match_the_inputs():
    raw = CreateEmbeddingResponse.model_validate({"object": "list", "model": "text-embedding-3-small",
                                                  "usage": {"prompt_tokens": 2, "total_tokens": 2}, "data": [
        {"object": "embedding", "index": 1, "embedding": [2.0]},
        {"object": "embedding", "index": 0, "embedding": [1.0]}]})
    parsed = parse_embeddings(raw, EmbeddingRequest(inputs=["a", "b"], model="text-embedding-3-small"))
    assert parsed.vectors == [[1.0], [2.0]]
    with pytest.raises(InvalidResponseError, match="2 embeddings for 3 inputs"):
        parse_embeddings(raw, EmbeddingRequest(inputs=["a", "b", "c"], model="text-embedding-3-small"))


IMAGE_REQUEST = ImageRequest(prompt="p", model="gpt-image-2", mime_type="image/webp")


@pytest.mark.parametrize(("data", "message"), [
    ([], "no image bytes"),
    ([{"url": "https://example.com/x.png"}], "answered with a URL instead of image bytes"),
    ([{"b64_json": "not base64!"}], "not valid base64"),
])
def test_images_without_usable_bytes_are_invalid_responses(data, message):
    with pytest.raises(InvalidResponseError, match=message):
        parse_images(ImagesResponse.model_validate({"created": 1, "data": data}), IMAGE_REQUEST)


def test_the_image_mime_type_falls_back_to_the_requested_one():
    raw = ImagesResponse.model_validate({"created": 1, "data": [{"b64_json": base64.b64encode(b"RIFF").decode()}]})
    image = parse_images(raw, IMAGE_REQUEST)
    assert (image.data, image.mime_type, image.usage) == (b"RIFF", "image/webp", None)


@pytest.mark.parametrize("arguments", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}'])
def test_nan_and_infinity_in_tool_call_arguments_are_not_json(arguments):
    with pytest.raises(InvalidResponseError, match=r"unusable arguments for tool 'f'.*is not JSON"):
        tool_call("c1", "f", arguments)


def test_nan_in_replayed_tool_call_arguments_is_refused_before_sending():
    provider = make_provider()
    call = ToolCall.model_construct(id="c1", name="f", arguments={"x": float("inf")})
    messages = [ChatMessage.user("q"), ChatMessage(role="assistant", tool_calls=[call])]
    with pytest.raises(InvalidInputError, match="message 1: tool call arguments are not JSON"):
        provider.map_chat_request(provider.builder.chat(messages, model="gpt-4.1"))
