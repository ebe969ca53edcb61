"""The hot-path shortcuts of the Gemini plugin give exactly what the code they replaced gave.

The reference implementations below are the parser and mapper as they were before the
shortcuts (kept verbatim, on the public pieces that did not change); every result is compared
field by field, including which fields were set, key order and the exception raised.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core_gemini_plugin import request_mapper, response_parser
from core_gemini_plugin.request_mapper import (
    CHAT_OPTIONS,
    _known_options,
    function_declaration,
    map_chat_request,
    map_contents,
    map_thinking,
    response_json_schema,
    tool_config,
)
from core_gemini_plugin.response_parser import (
    BLOCKING_FINISH_REASONS,
    PROVIDER,
    PartLog,
    enum_name,
    finish_reason,
    first_parts,
    parse_chat_response,
    raise_if_prompt_blocked,
    text_parts,
    usage_from,
)
from core_gemini_plugin.stream_parser import GeminiStreamParser
from llm_core.errors import InvalidInputError, InvalidResponseError, LLMError
from llm_core.messages import ChatMessage, TextPart, split_system
from llm_core.requests import ChatRequest, ThinkingOptions
from llm_core.responses import (
    FINISH_CONTENT_FILTER,
    FINISH_LENGTH,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    CompletionResponse,
    Usage,
)
from llm_core.streaming import CallContext, StreamEvent, StreamMetadata, TokenType
from llm_core.thinking import split_text_parts
from llm_core.tools import ToolCall, ToolSpec

REQUEST = ChatRequest(messages=[ChatMessage.user("q")], model="gemini-2.5-flash")

# -- the code the shortcuts replaced ---------------------------------------------------------


def old_enum_name(value: Any) -> str | None:
    if value is None:
        return None
    name = getattr(value, "value", value)
    return str(name).upper() or None


def old_finish_reason(raw: Any, *, has_tool_calls: bool = False) -> str:
    name = old_enum_name(raw)
    if name in (None, "FINISH_REASON_UNSPECIFIED", "STOP"):
        return FINISH_TOOL_CALLS if has_tool_calls else FINISH_STOP
    if name == "MAX_TOKENS":
        return FINISH_LENGTH
    if name in BLOCKING_FINISH_REASONS:
        return FINISH_CONTENT_FILTER
    assert name is not None
    return name.lower()


def old_usage_from(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if metadata is None:
        return Usage()
    return Usage(
        prompt_tokens=metadata.prompt_token_count or 0,
        completion_tokens=metadata.candidates_token_count or 0,
        total_tokens=metadata.total_token_count or 0,
        thinking_tokens=metadata.thoughts_token_count,
    )


def old_parse_chat_response(raw: types.GenerateContentResponse, request: ChatRequest) -> CompletionResponse:
    raise_if_prompt_blocked(raw)
    if not raw.candidates:
        raise InvalidResponseError("Gemini returned no candidates", provider=PROVIDER)
    candidate = raw.candidates[0]
    parts = first_parts(raw)
    content, thinking = split_text_parts(text_parts(parts))
    log = PartLog(raw.response_id)
    for part in parts:
        log.add(part)
    reason = old_enum_name(candidate.finish_reason)
    metadata: dict[str, Any] = {
        "response_id": raw.response_id,
        "model_version": raw.model_version,
        "finish_reason": reason,
        **log.replay_metadata(),
    }
    if candidate.finish_message:
        metadata["finish_message"] = candidate.finish_message
    if candidate.safety_ratings:
        metadata["safety_ratings"] = [r.model_dump(mode="json", exclude_none=True) for r in candidate.safety_ratings]
    return CompletionResponse(
        content=content,
        thinking=thinking,
        model=raw.model_version or request.model,
        provider=PROVIDER,
        usage=old_usage_from(raw.usage_metadata),
        finish_reason=old_finish_reason(reason, has_tool_calls=bool(log.tool_calls)),
        tool_calls=log.tool_calls or None,
        metadata=metadata,
    )


# -- comparison ------------------------------------------------------------------------------


def outcome(parse: Any, raw: types.GenerateContentResponse) -> Any:
    try:
        result = parse(raw, REQUEST)
    except LLMError as exc:
        return ("error", type(exc), str(exc), exc.provider)
    assert type(result) is CompletionResponse
    return (
        result.model_dump(),
        list(result.metadata),  # key order
        result.metadata,
        result.model_fields_set,
        result.usage.model_fields_set,
        repr(result),
    )


# -- responses -------------------------------------------------------------------------------

FINISH_REASONS = [None, *(r.value for r in types.FinishReason)]
plain_text = st.one_of(
    st.text(alphabet="ab <>/think\t\n", max_size=20),
    st.sampled_from(["<think>x</think>y", "a<THINK> b </think>c", "<Think>", "</think>z", "x < y", ""]),
)
signature = st.one_of(st.none(), st.just(b""), st.binary(min_size=1, max_size=6))
text_part = st.builds(
    dict,
    text=plain_text,
    thought=st.sampled_from([None, False, True]),
    thought_signature=signature,
)
call_part = st.builds(
    dict,
    function_call=st.builds(
        dict,
        name=st.sampled_from(["f", "get_time"]),
        args=st.dictionaries(st.sampled_from("xyz"), st.integers(0, 3), max_size=2),
        id=st.one_of(st.none(), st.just("g-1")),
    ),
    thought_signature=signature,
)
image_part = st.builds(
    dict,
    inline_data=st.just({"data": b"\x89PNG\r\n\x1a\n", "mime_type": "image/png"}),
    text=st.one_of(st.none(), plain_text),
)
# mostly the common shape (plain text parts), sometimes anything else
parts = st.one_of(
    st.lists(st.builds(dict, text=plain_text), min_size=1, max_size=4),
    st.lists(st.one_of(text_part, call_part, image_part, st.just({})), max_size=4),
)
usage = st.one_of(
    st.none(),
    st.builds(
        types.GenerateContentResponseUsageMetadata,
        prompt_token_count=st.one_of(st.none(), st.integers(0, 50)),
        candidates_token_count=st.one_of(st.none(), st.integers(0, 50)),
        total_token_count=st.one_of(st.none(), st.integers(0, 120)),
        thoughts_token_count=st.one_of(st.none(), st.integers(0, 20)),
    ),
)
feedback = st.one_of(
    st.none(),
    st.builds(
        types.GenerateContentResponsePromptFeedback,
        block_reason=st.sampled_from([None, "BLOCKED_REASON_UNSPECIFIED", "SAFETY", "OTHER"]),
        block_reason_message=st.one_of(st.none(), st.just("unsafe")),
    ),
)
rating = st.builds(
    types.SafetyRating,
    category=st.just("HARM_CATEGORY_HATE_SPEECH"),
    probability=st.sampled_from(["NEGLIGIBLE", "HIGH"]),
    blocked=st.one_of(st.none(), st.booleans()),
)


@st.composite
def candidates(draw: st.DrawFn) -> list[types.Candidate] | None:
    count = draw(st.sampled_from([1, 1, 1, 2, 0, None]))
    if count is None:
        return None
    found = []
    for _ in range(count):
        content_parts = draw(parts)
        content = draw(
            st.sampled_from(
                [
                    types.Content(role="model", parts=[types.Part(**p) for p in content_parts]),
                    types.Content(role="model", parts=None),
                    types.Content(role="model", parts=[]),
                    None,
                ]
            )
            if draw(st.integers(0, 5)) == 0
            else st.just(types.Content(role="model", parts=[types.Part(**p) for p in content_parts]))
        )
        found.append(
            types.Candidate(
                content=content,
                finish_reason=draw(st.sampled_from(FINISH_REASONS)),
                finish_message=draw(st.sampled_from([None, "", "stopped"])),
                safety_ratings=draw(st.one_of(st.none(), st.lists(rating, max_size=2))),
                index=0,
            )
        )
    return found


responses = st.builds(
    types.GenerateContentResponse,
    candidates=candidates(),
    usage_metadata=usage,
    prompt_feedback=feedback,
    response_id=st.one_of(st.none(), st.just("resp-1")),
    model_version=st.one_of(st.none(), st.just(""), st.just("gemini-2.5-flash-001")),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(responses)
def test_parse_chat_response_equals_the_code_it_replaced(raw: types.GenerateContentResponse) -> None:
    assert outcome(parse_chat_response, raw) == outcome(old_parse_chat_response, raw)
    assert outcome(response_parser.parse_chat_response_general, raw) == outcome(old_parse_chat_response, raw)


def plain_response(*texts: str, **fields: Any) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=[types.Part(text=t) for t in texts]), finish_reason="STOP"
            )
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=14, candidates_token_count=41, total_token_count=55
        ),
        model_version="gemini-2.5-flash",
        response_id="resp-1",
        **fields,
    )


def test_the_common_answer_takes_the_direct_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = plain_response("Hello", " there.", "<think>x</think>")
    expected = outcome(old_parse_chat_response, raw)

    def general(*args: Any) -> CompletionResponse:
        raise AssertionError("the general reading was used")

    monkeypatch.setattr(response_parser, "parse_chat_response_general", general)
    assert outcome(parse_chat_response, raw) == expected


@pytest.mark.parametrize(
    "part",
    [
        {"text": "t", "thought": True},
        {"text": "t", "thought_signature": b"sig"},
        {"function_call": {"name": "f", "args": {}}},
        {"inline_data": {"data": b"x", "mime_type": "image/png"}},
    ],
)
def test_anything_else_takes_the_general_reading(part: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    raw = types.GenerateContentResponse(
        candidates=[
            types.Candidate(content=types.Content(role="model", parts=[types.Part(text="a"), types.Part(**part)]))
        ]
    )
    used: list[bool] = []
    general = response_parser.parse_chat_response_general

    def spy(*args: Any) -> CompletionResponse:
        used.append(True)
        return general(*args)

    monkeypatch.setattr(response_parser, "parse_chat_response_general", spy)
    assert outcome(parse_chat_response, raw) == outcome(old_parse_chat_response, raw)
    assert used == [True]


ENUM_VALUES: list[Any] = [
    None,
    "",
    "stop",
    "STOP",
    "max_tokens",
    "Whatever",
    *types.FinishReason,
    *types.BlockedReason,
    *types.HarmCategory,
]


@pytest.mark.parametrize("value", ENUM_VALUES)
def test_enum_name_equals_the_code_it_replaced(value: Any) -> None:
    assert enum_name(value) == old_enum_name(value)


@pytest.mark.parametrize("value", ENUM_VALUES)
@pytest.mark.parametrize("has_tool_calls", [False, True])
def test_finish_reason_equals_the_code_it_replaced(value: Any, has_tool_calls: bool) -> None:
    assert finish_reason(value, has_tool_calls=has_tool_calls) == old_finish_reason(
        value, has_tool_calls=has_tool_calls
    )


@given(usage)
def test_usage_from_equals_the_code_it_replaced(metadata: types.GenerateContentResponseUsageMetadata | None) -> None:
    new, old = usage_from(metadata), old_usage_from(metadata)
    assert (new.model_dump(), new.model_fields_set) == (old.model_dump(), old.model_fields_set)


# -- request mapping -------------------------------------------------------------------------


def old_map_chat_request(request: ChatRequest) -> dict[str, Any]:
    system, turns = split_system(request.messages)
    contents = map_contents(turns)
    config: dict[str, Any] = {}
    if system:
        config["system_instruction"] = system
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["top_p"] = request.top_p
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if request.stop:
        config["stop_sequences"] = list(request.stop)
    if request.json_mode:
        config["response_mime_type"] = "application/json"
        schema = response_json_schema(request.response_schema)
        if schema is not None:
            config["response_json_schema"] = schema
    if request.thinking is not None:
        config["thinking_config"] = map_thinking(request.thinking, request.model)
    if request.tools:
        config["tools"] = [{"function_declarations": [function_declaration(t) for t in request.tools]}]
        if request.tool_choice:
            config["tool_config"] = tool_config(request.tool_choice, request.tools)
    elif request.tool_choice:
        raise InvalidInputError("tool_choice needs tools", provider=PROVIDER)
    config.update(_known_options(request.options, CHAT_OPTIONS, "chat"))
    return {"model": request.model, "contents": contents, "config": config}


def mapped(mapper: Any, request: ChatRequest) -> Any:
    try:
        payload = mapper(request)
    except LLMError as exc:
        return ("error", type(exc), str(exc))
    return payload, repr(payload)  # repr: key order and exact types too


message_text = st.sampled_from(["", "Hi", "Be brief.", " ", "<think>x</think>"])
messages = st.one_of(
    st.builds(ChatMessage.system, message_text),
    st.builds(ChatMessage.user, message_text),
    st.builds(ChatMessage.user, st.lists(st.sampled_from([TextPart(text="a"), "b"]), max_size=2)),
    st.builds(ChatMessage.assistant, message_text),
    st.just(ChatMessage.assistant(tool_calls=[ToolCall(id="c1", name="lookup")])),
    st.builds(ChatMessage.tool, st.just("c1"), st.sampled_from(["{}", "sunny"])),
)
# mostly the common shape (system and user strings), sometimes anything else
conversations = st.one_of(
    st.lists(st.one_of(st.builds(ChatMessage.system, message_text), st.builds(ChatMessage.user, message_text))),
    st.lists(messages, max_size=5),
)
LOOKUP = ToolSpec(name="lookup", description="Look up.", parameters={"type": "object", "properties": {}})
request_fields = st.fixed_dictionaries(
    {},
    optional={
        "temperature": st.sampled_from([0.0, 0.7]),
        "top_p": st.just(0.9),
        "max_tokens": st.just(64),
        "stop": st.sampled_from([[], ["END"]]),
        "json_mode": st.booleans(),
        "response_schema": st.just({"type": "object"}),
        "thinking": st.just(ThinkingOptions(budget=128, include_thoughts=True)),
        "tools": st.sampled_from([[], [LOOKUP]]),
        "tool_choice": st.sampled_from(["auto", "lookup", "other"]),
        "options": st.sampled_from([{}, {"top_k": 3}, {"seed": 1, "bogus": 2}]),
    },
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(conversations, request_fields)
def test_map_chat_request_equals_the_code_it_replaced(conversation: list[ChatMessage], fields: dict[str, Any]) -> None:
    request = ChatRequest(messages=conversation, model="gemini-2.5-flash", **fields)
    assert mapped(map_chat_request, request) == mapped(old_map_chat_request, request)


def test_the_plain_conversation_takes_the_direct_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    request = ChatRequest(
        messages=[ChatMessage.system("Be brief."), ChatMessage.user("Hi"), ChatMessage.system("Really.")],
        model="gemini-2.5-flash",
    )
    expected = mapped(old_map_chat_request, request)

    def general(*args: Any) -> Any:
        raise AssertionError("the general mapping was used")

    monkeypatch.setattr(request_mapper, "map_contents", general)
    monkeypatch.setattr(request_mapper, "split_system", general)
    assert mapped(map_chat_request, request) == expected
    assert expected[0]["config"] == {"system_instruction": "Be brief.\n\nReally."}


# -- streaming -------------------------------------------------------------------------------


class OldStreamParser:
    """The stream parser before the plain-text shortcut (verbatim)."""

    def __init__(self, request: ChatRequest) -> None:
        self._context = request.call_context
        self._log = PartLog()
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._finish: Any = None
        self._model: str | None = None
        self._response_id: str | None = None

    def feed(self, chunk: types.GenerateContentResponse) -> Any:
        raise_if_prompt_blocked(chunk)
        if chunk.response_id and self._response_id is None:
            self._response_id = self._log.response_id = chunk.response_id
        if chunk.model_version:
            self._model = chunk.model_version
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        if not chunk.candidates:
            return ()
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            self._finish = candidate.finish_reason
        parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
        events: list[StreamEvent] = []
        for part in parts:
            self._log.add(part, merge_text=True)
            if isinstance(part.text, str) and part.text:
                kind = TokenType.for_chunk(thinking=part.thought is True, context=self._context)
                events.append(StreamEvent.token(part.text, kind))
        return events

    def finish(self) -> StreamMetadata:
        if self._finish is None:
            raise InvalidResponseError("the Gemini stream ended without a finish reason (cut off)", provider=PROVIDER)
        usage = self._usage
        calls = self._log.tool_calls
        return StreamMetadata(
            input_tokens=usage.prompt_token_count if usage else None,
            output_tokens=usage.candidates_token_count if usage else None,
            thinking_tokens=usage.thoughts_token_count if usage else None,
            stop_reason=old_finish_reason(self._finish, has_tool_calls=bool(calls)),
            model=self._model,
            trace_id=self._response_id,
            raw_usage=usage.model_dump(mode="json", exclude_none=True) if usage else None,
            tool_calls=calls or None,
            extra={"finish_reason": old_enum_name(self._finish), **self._log.replay_metadata()},
        )


def streamed(parser: Any, chunks: list[types.GenerateContentResponse]) -> list[Any]:
    seen: list[Any] = []
    try:
        for chunk in chunks:
            events = parser.feed(chunk)
            seen.append((type(events), [(e.model_dump(), e.model_fields_set, repr(e)) for e in events]))
        meta = parser.finish()
    except LLMError as exc:
        seen.append(("error", type(exc), str(exc)))
    else:
        seen.append((meta.model_dump(), meta.model_fields_set, list(meta.extra), repr(meta)))
    return seen


@st.composite
def stream_chunks(draw: st.DrawFn) -> types.GenerateContentResponse:
    kind = draw(st.sampled_from(["plain", "plain", "plain", "any", "empty", "no-candidates"]))
    chunk_parts = draw(
        st.lists(st.builds(dict, text=plain_text), min_size=1, max_size=3)
        if kind == "plain"
        else st.lists(
            st.one_of(text_part, call_part, image_part, st.just({}), st.just({"thought_signature": b"s"})), max_size=3
        )
    )
    candidate = types.Candidate(
        content=None if kind == "empty" else types.Content(role="model", parts=[types.Part(**p) for p in chunk_parts]),
        finish_reason=draw(st.sampled_from([None, None, "STOP", "MAX_TOKENS", "SAFETY"])),
        index=0,
    )
    return types.GenerateContentResponse(
        candidates=None if kind == "no-candidates" else [candidate],
        usage_metadata=draw(usage),
        prompt_feedback=draw(st.one_of(st.none(), st.none(), st.none(), feedback)),
        response_id=draw(st.sampled_from([None, "r-1", "r-2"])),
        model_version=draw(st.sampled_from([None, "", "gemini-2.5-flash-001"])),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(stream_chunks(), max_size=8), st.sampled_from([None, *CallContext]))
def test_stream_parser_equals_the_code_it_replaced(
    chunks: list[types.GenerateContentResponse], context: CallContext | None
) -> None:
    request = ChatRequest(messages=[ChatMessage.user("q")], model="gemini-2.5-flash", call_context=context)
    assert streamed(GeminiStreamParser(request), chunks) == streamed(OldStreamParser(request), chunks)


def test_a_long_plain_stream_merges_into_one_replay_part() -> None:
    chunks = [
        types.GenerateContentResponse(
            candidates=[
                types.Candidate(
                    content=types.Content(role="model", parts=[types.Part(text=f"w{i} ")]),
                    finish_reason="STOP" if i == 499 else None,
                )
            ]
        )
        for i in range(500)
    ]
    new, old = streamed(GeminiStreamParser(REQUEST), chunks), streamed(OldStreamParser(REQUEST), chunks)
    assert new == old
    assert new[-1][0]["extra"]["gemini_parts"] == [{"text": "".join(f"w{i} " for i in range(500))}]


def chunk_of(*parts: dict[str, Any], finish: str | None = None) -> types.GenerateContentResponse:
    content = types.Content(role="model", parts=[types.Part(**p) for p in parts])
    return types.GenerateContentResponse(candidates=[types.Candidate(content=content, finish_reason=finish)])


@pytest.mark.parametrize(
    ("between", "expected"),
    [
        ({}, [{"text": "ab"}]),  # a part that logs nothing: the text goes on in the same part
        ({"text": "t", "thought": True}, [{"text": "a"}, {"text": "t", "thought": True}, {"text": "b"}]),
        ({"text": "s", "thought_signature": b"\x01"}, [{"text": "as", "thought_signature": "AQ=="}, {"text": "b"}]),
    ],
)
def test_plain_text_around_other_parts_is_logged_as_before(between: dict[str, Any], expected: list[Any]) -> None:
    chunks = [chunk_of({"text": "a"}), chunk_of(between), chunk_of({"text": "b"}, finish="STOP")]
    new, old = streamed(GeminiStreamParser(REQUEST), chunks), streamed(OldStreamParser(REQUEST), chunks)
    assert new == old
    assert new[-1][0]["extra"]["gemini_parts"] == expected
