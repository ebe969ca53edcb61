"""Gemini responses: the content/thinking split (every vector), finish reasons,
thought signatures kept for replay, tool call ids. Pure functions on real SDK response objects."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from hypothesis import given, strategies as st

from core_gemini_plugin import assistant_message
from core_gemini_plugin.contents import map_contents
from core_gemini_plugin.parts import tool_call_id
from core_gemini_plugin.response_parser import finish_reason, parse_chat_response, text_parts
from llm_core.errors import ContentFilteredError, InvalidResponseError
from llm_core.messages import ChatMessage
from llm_core.requests import ChatRequest
from llm_core.thinking import split_text_parts

REQUEST = ChatRequest(messages=[ChatMessage.user("q")], model="gemini-2.5-flash")


def t(text: str) -> dict[str, Any]:
    return {"text": text}


def th(text: str) -> dict[str, Any]:
    return {"text": text, "thought": True}


CALL = {"function_call": {"name": "f", "args": {}}}
IMAGE = {"inline_data": {"data": b"\x89PNG\r\n\x1a\n", "mime_type": "image/png"}}


def response(*parts: dict[str, Any], finish: str | None = "STOP", **fields: Any) -> types.GenerateContentResponse:
    content = types.Content(role="model", parts=[types.Part(**p) for p in parts]) if parts else None
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=content, finish_reason=finish)], response_id="resp-1", **fields)


def parse(*parts: dict[str, Any], **kwargs: Any) -> tuple[str, str | None]:
    if not parts:  # an answer without parts raises (no empty success): the SPEC rule is the split's
        return split_text_parts(text_parts([]))
    result = parse_chat_response(response(*parts, **kwargs), REQUEST)
    return result.content, result.thinking


SPEC_VECTORS = [
    pytest.param([t("  Visible\tanswer.\n")], "  Visible\tanswer.\n", None, id="visible-untouched"),
    pytest.param([t("One "), t("two"), t(".")], "One two.", None, id="joined-without-separator"),
    pytest.param([th("Reason."), t("Answer.")], "Answer.", "Reason.", id="thought-first"),
    pytest.param([t("Ans"), th("Reason."), t("wer.")], "Answer.", "Reason.", id="thought-middle"),
    pytest.param([t("Answer."), th("Reason.")], "Answer.", "Reason.", id="thought-last"),
    pytest.param([th("Reason "), t("Answer."), th("continued.")], "Answer.", "Reason continued.", id="thoughts-joined"),
    pytest.param([th("")], "", None, id="empty-thought-only"),
    pytest.param([t("  foo<think> inline </think>\tbar  ")], "foo bar", "inline", id="inline-block"),
    pytest.param([t("A<think> first </think>B<think> second </think>C")], "A B C", "first \n second",
                 id="two-inline-blocks"),
    pytest.param([th("Native."), t("foo<think> inline </think>bar")], "foo bar", "Native.\ninline",
                 id="native-and-inline"),
    pytest.param([th("<think>Native.</think>")], "", "<think>Native.</think>", id="native-never-parsed"),
    pytest.param([th("Native."), t("foo<think> </think>bar")], "foo bar", "Native.", id="empty-inline-is-none"),
    pytest.param([], "", None, id="no-parts"),
    pytest.param([t("foo<th"), t("ink>split"), t("</think>bar")], "foo bar", "split", id="tag-split-across-parts"),
    pytest.param([th(" \t\n"), t("x")], "x", " \t\n", id="native-whitespace-byte-for-byte"),
    pytest.param([t("A<THINK>caps</Think>B")], "A B", "caps", id="case-insensitive"),
    pytest.param([t("a<think>line1\nline2</think>b")], "a b", "line1\nline2", id="across-lines"),
    pytest.param([IMAGE, t("x"), CALL, t("y")], "xy", None, id="non-text-parts-add-nothing"),
    pytest.param([{"text": "seen", "thought": False}], "seen", None, id="thought-false-is-visible"),
]


@pytest.mark.parametrize(("parts", "content", "thinking"), SPEC_VECTORS)
def test_spec_content_thinking_vectors(parts: list[dict[str, Any]], content: str, thinking: str | None) -> None:
    assert parse(*parts) == (content, thinking)


@pytest.mark.parametrize(("finish", "message"), [
    ("STOP", r"finished \(STOP\) without any content part"),
    (None, r"finished \(no reason\) without any content part"),
    ("MAX_TOKENS", "max_output_tokens before any output: raise max_tokens"),
])
def test_an_answer_without_parts_is_no_answer(finish: str | None, message: str) -> None:
    empty = types.Content(role="model", parts=[]) if finish is None else None
    raw = types.GenerateContentResponse(candidates=[types.Candidate(content=empty, finish_reason=finish)])
    with pytest.raises(InvalidResponseError, match=message):
        parse_chat_response(raw, REQUEST)


def test_a_filtered_answer_without_parts_is_a_filtered_answer() -> None:
    result = parse_chat_response(response(finish="SAFETY"), REQUEST)
    assert (result.content, result.finish_reason, result.is_filtered) == ("", "content_filter", True)


def test_thought_only_response_has_empty_content() -> None:
    assert parse(th("Only thinking.")) == ("", "Only thinking.")


def test_only_the_first_candidate_is_read() -> None:
    raw = types.GenerateContentResponse(candidates=[
        types.Candidate(content=types.Content(role="model", parts=[types.Part(text="first")]), finish_reason="STOP"),
        types.Candidate(content=types.Content(role="model", parts=[types.Part(text="second")]),
                        finish_reason="MAX_TOKENS"),
    ])
    result = parse_chat_response(raw, REQUEST)
    assert (result.content, result.finish_reason) == ("first", "stop")


texts = st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=12)


@given(st.lists(st.tuples(texts, st.booleans()), min_size=1, max_size=8))
def test_without_tags_visible_and_native_text_pass_through_unchanged(parts: list[tuple[str, bool]]) -> None:
    content, thinking = parse(*(th(x) if thought else t(x) for x, thought in parts))
    assert content == "".join(x for x, thought in parts if not thought)
    assert thinking == ("".join(x for x, thought in parts if thought) or None)


@pytest.mark.parametrize(("raw", "has_calls", "expected"), [
    ("STOP", False, "stop"),
    (None, False, "stop"),
    ("MAX_TOKENS", False, "length"),
    ("SAFETY", False, "content_filter"),
    ("RECITATION", False, "content_filter"),
    ("BLOCKLIST", False, "content_filter"),
    ("PROHIBITED_CONTENT", False, "content_filter"),
    ("SPII", False, "content_filter"),
    ("IMAGE_SAFETY", False, "content_filter"),
    ("STOP", True, "tool_calls"),
    ("OTHER", False, "other"),
    ("LANGUAGE", False, "language"),
    ("MALFORMED_FUNCTION_CALL", False, "malformed_function_call"),
    (types.FinishReason.MAX_TOKENS, False, "length"),
])
def test_finish_reason_vocabulary(raw: Any, has_calls: bool, expected: str) -> None:
    assert finish_reason(raw, has_tool_calls=has_calls) == expected


@pytest.mark.parametrize(("finish", "expected"), [("STOP", "tool_calls"), ("MAX_TOKENS", "length")])
def test_function_call_response_finish_reason(finish: str, expected: str) -> None:
    result = parse_chat_response(response({"function_call": {"name": "get_time", "args": {}}}, finish=finish), REQUEST)
    assert result.finish_reason == expected
    assert result.has_tool_calls


def test_tool_calls_keep_gemini_ids_and_get_stable_ones_otherwise() -> None:
    raw = response(
        {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"function_call": {"id": "g-7", "name": "get_time", "args": {}}},
    )
    first = parse_chat_response(raw, REQUEST).tool_calls
    again = parse_chat_response(raw, REQUEST).tool_calls
    assert first is not None and again is not None
    assert [c.id for c in first] == [c.id for c in again]  # same response, same ids
    assert first[0].id != first[1].id and first[0].id.startswith("call_")
    assert first[2].id == "g-7"
    assert first[0].arguments == {"city": "Paris"} and first[2].arguments == {}
    assert first[0].id == tool_call_id("resp-1", 0, "get_weather", {"city": "Paris"})


def test_thought_signatures_are_kept_and_replayed_unchanged() -> None:
    sig_thought, sig_text, sig_call = b"\x00\x01sig-a", b"\xffsig-b\x10", b"sig-c\x80"
    raw = response(
        {"text": "Planning.", "thought": True, "thought_signature": sig_thought},
        {"text": "Calling.", "thought_signature": sig_text},
        {"function_call": {"name": "get_time", "args": {}}, "thought_signature": sig_call},
    )
    result = parse_chat_response(raw, REQUEST)
    kinds = [(s["part"], s["kind"]) for s in result.metadata["thought_signatures"]]
    assert kinds == [(0, "thought"), (1, "text"), (2, "function_call")]
    assert result.tool_calls is not None
    assert result.metadata["thought_signatures"][2]["tool_call_id"] == result.tool_calls[0].id
    [model_turn] = map_contents([assistant_message(result)])
    assert model_turn["role"] == "model"
    assert [p.get("thought_signature") for p in model_turn["parts"]] == [sig_thought, sig_text, sig_call]
    assert model_turn["parts"][0] == {"text": "Planning.", "thought": True, "thought_signature": sig_thought}
    assert model_turn["parts"][2]["function_call"] == {"id": result.tool_calls[0].id, "name": "get_time", "args": {}}


def test_signatures_alone_are_enough_to_replay_a_tool_call_turn() -> None:
    raw = response({"function_call": {"name": "get_time", "args": {}}, "thought_signature": b"sig"})
    result = parse_chat_response(raw, REQUEST)
    message = ChatMessage.assistant(tool_calls=result.tool_calls or [])
    message = message.model_copy(update={"metadata": {"thought_signatures": result.metadata["thought_signatures"]}})
    [model_turn] = map_contents([message])
    assert model_turn["parts"][0]["thought_signature"] == b"sig"


def test_usage_model_and_metadata() -> None:
    raw = response(t("x"), usage_metadata=types.GenerateContentResponseUsageMetadata(
        prompt_token_count=3, candidates_token_count=4, thoughts_token_count=5, total_token_count=12),
        model_version="gemini-2.5-flash-001")
    result = parse_chat_response(raw, REQUEST)
    assert result.usage.model_dump() == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 12,
                                         "thinking_tokens": 5, "cached_tokens": None,
                                         "tool_uses": None, "cost": None}  # priced by the provider
    assert result.model == "gemini-2.5-flash-001"
    assert result.response_id == "resp-1" and "response_id" not in result.metadata


def test_blocked_prompt_and_empty_answer() -> None:
    blocked = types.GenerateContentResponse(prompt_feedback=types.GenerateContentResponsePromptFeedback(
        block_reason="SAFETY", block_reason_message="unsafe"))
    with pytest.raises(ContentFilteredError, match=r"SAFETY.*unsafe"):
        parse_chat_response(blocked, REQUEST)
    with pytest.raises(InvalidResponseError, match="no candidates"):
        parse_chat_response(types.GenerateContentResponse(), REQUEST)


def test_json_answers_are_decoded_as_written_without_think_tag_extraction() -> None:
    """``<think>`` extraction is for chat text; inside a JSON value a <think> tag is data."""
    json_request = ChatRequest(messages=[ChatMessage.user("q")], model="gemini-2.5-flash", json_mode=True)
    text = '{"note": "<think>keep</think>  me"}'
    result = parse_chat_response(response(th("Reason."), t(text)), json_request)
    assert (result.content, result.thinking) == (text, "Reason.")
    assert parse_chat_response(response(t(text)), REQUEST).content == '{"note": " me"}'
