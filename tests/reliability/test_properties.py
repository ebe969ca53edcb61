"""Property tests: the parsers never fail with an unhandled exception, and always give the
documented result.

- core: message normalisation, tool specs, tool-call arguments, decision questions and answers,
  media checks, JSON decoding and the retry waits, on arbitrary input;
- Gemini: arbitrary part sequences through the real SDK → content and thinking (thought parts
  are thinking, ``<think>`` blocks in the text move to thinking); arbitrary tool outputs → the
  JSON object sent as ``functionResponse.response``;
- both plugins: a stream cut into arbitrary HTTP chunks (also inside a UTF-8 character)
  through the real SDK's SSE parsing → the same tokens, metadata and event order.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from llm_core.capabilities import decode_json
from llm_core.decisions import DecisionAnswer, parse_questions, validate_answers
from llm_core.errors import (
    InvalidDecisionResponse,
    InvalidInputError,
    InvalidResponseError,
    LLMError,
    RateLimitError,
)
from llm_core.media import check_media
from llm_core.messages import ChatMessage, normalize_messages
from llm_core.requests import coerce_tools
from llm_core.responses import CompletionResponse
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEventType
from tests.reliability import upstreams as up
from tests.reliability.fault_fixtures import Rig, Sleeps
from tests.reliability.fault_server import chunks, json_response

PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
WIRE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_scalars = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False) | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
anything = st.recursive(
    json_scalars | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["role", "content", "type", "text", "data", "name", "tool_calls",
                                        "tool_call_id", "id", "arguments", "mime_type", "url"]) | st.text(max_size=4),
                      inner, max_size=4),
    max_leaves=10,
)
roles = st.sampled_from(["user", "assistant", "system", "tool", "wizard", "", "USER"])
T = TypeVar("T")


def outcome(call: Callable[[], T]) -> tuple[T | None, LLMError | None]:
    """The result, or the typed error; any other exception escapes (and fails the test)."""
    try:
        return call(), None
    except LLMError as error:
        return None, error


# -- core -------------------------------------------------------------------------------------------


@PROPS
@given(anything)
def test_normalize_messages_accepts_or_refuses_clearly(value: Any) -> None:
    result, error = outcome(lambda: normalize_messages(value))
    if error is not None or result is None:
        assert isinstance(error, InvalidInputError) and str(error).strip()
        return
    assert result and all(isinstance(m, ChatMessage) for m in result)
    assert any(m.role.value != "system" for m in result)


@PROPS
@given(st.lists(st.fixed_dictionaries({"role": roles, "content": anything}), max_size=4))
def test_role_and_content_combinations(messages: list[dict[str, Any]]) -> None:
    _, error = outcome(lambda: normalize_messages(messages))
    assert error is None or isinstance(error, InvalidInputError)


@PROPS
@given(st.text(max_size=40) | json_values.map(json.dumps))
def test_tool_call_arguments_decode_to_an_object_or_are_refused(arguments: str) -> None:
    turn = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f", "arguments": arguments}]}
    result, error = outcome(lambda: normalize_messages([{"role": "user", "content": "hi"}, turn]))
    if error is not None or result is None:
        assert isinstance(error, InvalidInputError) and "arguments" in str(error)
        return
    message = result[1]
    assert message.tool_calls is not None
    decoded = message.tool_calls[0].arguments
    assert isinstance(decoded, dict)
    assert arguments.strip() == "" or decoded == json.loads(arguments)


@PROPS
@given(st.lists(anything, max_size=3))
def test_tool_specs_are_valid_or_refused(tools: list[Any]) -> None:
    specs, error = outcome(lambda: coerce_tools(tools, "fake"))
    if error is not None or specs is None:
        assert isinstance(error, InvalidInputError) and "tool" in str(error)
        return
    for spec in specs:
        assert spec.parameters["type"] == "object" and isinstance(spec.parameters["properties"], dict)


@PROPS
@given(st.lists(anything, max_size=3))
def test_decision_questions_are_valid_or_refused(questions: list[Any]) -> None:
    parsed, error = outcome(lambda: parse_questions(questions))
    if error is not None or parsed is None:
        assert isinstance(error, InvalidInputError)
        return
    assert len({q.key for q in parsed}) == len(parsed)


numbers = st.none() | st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 12).map(float)


@PROPS
@given(
    st.builds(
        DecisionAnswer,
        key=st.sampled_from(["ok", "pick", "rate", "other"]),
        kind=st.sampled_from(["yes_no", "choice", "score"]),
        value=numbers,
        choice=st.none() | st.sampled_from(["yes", "no", "a", "b", "lo", "hi", ""]),
        probabilities=st.none()
        | st.dictionaries(st.sampled_from(["yes", "no", "a", "b", "0", "1", "2"]), st.floats(), max_size=3),
        confidence=numbers,
    ),
)
@example(DecisionAnswer(key="pick", kind="choice", value=math.inf, choice="a"))
@example(DecisionAnswer(key="pick", kind="choice", value=math.nan, choice="b"))
def test_decision_answers_are_valid_or_refused_with_the_key(answer: DecisionAnswer) -> None:
    questions = parse_questions([
        {"key": "ok", "kind": "yes_no", "instructions": "ok?"},
        {"key": "pick", "kind": "choice", "instructions": "pick", "options": ["a", "b"]},
        {"key": "rate", "kind": "score", "instructions": "rate", "levels": ["lo", "hi"]},
    ])
    asked = next((q for q in questions if q.key == answer.key), None)
    result, error = outcome(
        lambda: validate_answers([asked] if asked else questions[:1], {answer.key: answer}, provider="fake")
    )
    if error is not None or result is None:
        assert isinstance(error, InvalidDecisionResponse) and error.key is not None and error.reason
        return
    [accepted] = result.values()
    for number in (accepted.value, accepted.confidence, *(accepted.probabilities or {}).values()):
        assert number is None or math.isfinite(number)


@PROPS
@given(st.binary(max_size=64), st.none() | st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/bmp",
                                                             "application/pdf", "text/plain", "png", "jpg", ""]))
def test_media_checks_accept_or_refuse(data: bytes, mime: str | None) -> None:
    def check(head: bytes) -> str:
        return check_media(head + data, mime, kind="image", formats=("png", "jpeg", "pdf"), max_bytes=48,
                           provider="fake")

    for head in (b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"%PDF-"):
        result, error = outcome(lambda head=head: check(head))  # type: ignore[misc]
        if error is not None or result is None:
            assert isinstance(error, InvalidInputError) and str(error).strip()
            continue
        assert "/" in result and len(head + data) <= 48


@PROPS
@given(st.text(max_size=60) | json_values.map(json.dumps), st.sampled_from(["stop", "length", "content_filter"]))
def test_json_answers_decode_or_keep_the_raw_text(text: str, finish: str) -> None:
    response = CompletionResponse(content=text, model="m", provider="fake", finish_reason=finish)
    value, error = outcome(lambda: decode_json(response, None, "fake"))
    if error is not None:
        assert isinstance(error, InvalidResponseError) and error.raw == text
        return
    assert finish != "content_filter"
    assert value == json.loads(text)


@PROPS
@given(
    st.none() | st.floats(allow_nan=True, allow_infinity=True),
    st.integers(1, 12),
    st.floats(0, 30),
    st.floats(0, 2),
)
def test_retry_waits_are_finite_and_bounded(
    hint: float | None, attempt: int, max_retry_after: float, jitter: float
) -> None:
    policy = RetryPolicy(max_retry_after=max_retry_after, jitter=jitter, max_delay=20.0)
    wait = policy.wait_for(attempt, RateLimitError("quota", provider="fake", retry_after=hint))
    assert math.isfinite(wait) and wait >= 0
    if hint is not None and not math.isnan(hint):
        assert wait == min(max(hint, 0.0), max_retry_after)
    else:
        assert wait <= 20.0


# -- Gemini: thinking extraction on arbitrary part sequences ---------------------------------------


def _spec_split(parts: list[tuple[str, bool]]) -> tuple[str, str | None]:
    """The split, restated independently of the implementation: thought parts joined as they are
    are the native thinking; ``<think>…</think>`` blocks (any case, across lines) are cut from the
    visible text, their insides joined by newlines and stripped (where there were blocks, the text
    left has its runs of spaces and tabs squeezed and is stripped); native thinking comes first,
    then the inline, on a line of its own."""
    native = "".join(text for text, thought in parts if thought)
    visible = "".join(text for text, thought in parts if not thought)
    block = re.compile(r"<think>(.*?)</think>", re.IGNORECASE | re.DOTALL)
    found = block.findall(visible)
    if found:
        inline = "\n".join(found).strip() or None
        content = re.sub(r"[ \t]+", " ", block.sub(" ", visible)).strip()
    else:
        inline, content = None, visible
    thinking = f"{native}\n{inline}" if native and inline else (native or inline or None)
    return content, thinking


fragments = st.lists(
    st.sampled_from(["<think>", "</think>", "<THINK>", "</Think>", "<th", "ink>", "</", " ", "\t", "\n", "  "])
    | st.text(alphabet="ab é\t\n<>/", max_size=6),
    max_size=5,
).map("".join)
text_parts = st.builds(
    lambda text, thought: {"text": text, **({"thought": thought} if thought is not None else {})},
    fragments,
    st.none() | st.booleans(),
)
other_parts = st.sampled_from([
    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
    {"functionCall": {"name": "noop", "args": {}}},
    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
    {"text": "signed", "thoughtSignature": "c2lnbmF0dXJl"},
])
part_lists = st.lists(text_parts | other_parts, max_size=7)


@pytest.fixture
def gemini(rigs: dict[str, Rig], sleeps: Sleeps) -> tuple[Any, Any]:
    if "gemini" not in rigs:
        pytest.fail("the gemini plugin is not installed")
    rig = rigs["gemini"]
    return rig.provider(retry=sleeps.policy()), rig.reset()


@WIRE
@given(part_lists)
def test_gemini_thinking_extraction_on_arbitrary_parts(gemini: tuple[Any, Any], parts: list[dict[str, Any]]) -> None:
    provider, server = gemini
    server.clear()
    server.script(json_response(200, up.gemini_content(parts)))
    if not parts:  # an answer without a single part is no answer: an error, never ''/stop
        with pytest.raises(InvalidResponseError, match="without any content part"):
            provider.chat_completion("hi")
        return
    response = provider.chat_completion("hi")
    texts = [(p["text"], p.get("thought") is True) for p in parts if "text" in p]
    assert (response.content, response.thinking) == _spec_split(texts)
    calls = [p for p in parts if "functionCall" in p]
    assert len(response.tool_calls or []) == len(calls)
    assert response.finish_reason == ("tool_calls" if calls else "stop")


# -- Gemini: tool results on arbitrary output --------------------------------------------------------


def _sent_tool_object(provider: Any, output: str) -> Any:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": output},
    ]
    request = provider.builder.chat(messages)
    sent = provider.map_chat_request(request)["contents"][-1]["parts"][0]["function_response"]
    assert sent["name"] == "get_weather"
    assert request.messages[-1].content == output, "the caller's tool output is untouched"
    return sent["response"]


@PROPS
@given(json_values)
def test_gemini_tool_results_of_json_become_objects(gemini: tuple[Any, Any], value: Any) -> None:
    """A JSON object is sent as it is, a list as {"0": ..., "1": ...}, a scalar as {"result": text}."""
    provider, server = gemini
    output = json.dumps(value)
    sent = _sent_tool_object(provider, output)
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:  # NaN/Infinity inside: the output is not JSON, so it goes as text
        assert sent == {"result": output}
    else:
        _assert_spec_2_shape(sent, value, output)
    assert server.count == 0


def _assert_spec_2_shape(sent: Any, value: Any, output: str) -> None:
    if isinstance(value, dict):
        assert sent == value
    elif isinstance(value, list):
        assert list(sent) == [str(i) for i in range(len(value))] and list(sent.values()) == value
    else:
        assert sent == {"result": output}


@PROPS
@given(st.text(max_size=30))
@example("[1e999]")
@example('{"a": -1e400}')
def test_gemini_tool_results_of_any_text_are_json_objects(gemini: tuple[Any, Any], output: str) -> None:
    """Whatever the tool printed, Gemini gets an object that is strict JSON (no NaN/Infinity)."""
    provider, server = gemini
    assume(output.strip())
    sent = _sent_tool_object(provider, output)
    assert isinstance(sent, dict)
    json.dumps(sent, allow_nan=False)
    assert server.count == 0


# -- both plugins: arbitrary SSE chunking through the real SDK -------------------------------------

STREAM_PIECES = ["Grüße", " aus", " 東京", " 🙂", " and", " more"]


def _sse_body(name: str) -> bytes:
    events = up.gemini_sse_events(STREAM_PIECES) if name == "gemini" else up.openai_sse_events(STREAM_PIECES)
    return "".join(events).encode()


def _split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points) if b > a]


@pytest.mark.parametrize("name", ["gemini", "openai"])
def test_arbitrary_sse_chunking_gives_the_same_stream(name: str, rigs: dict[str, Rig], sleeps: Sleeps) -> None:
    if name not in rigs:
        pytest.fail(f"the {name} plugin is not installed")
    rig = rigs[name]
    provider = rig.provider(retry=sleeps.policy())
    body = _sse_body(name)

    @WIRE
    @given(st.lists(st.integers(0, 10**6), max_size=25))
    def check(cuts: list[int]) -> None:
        server = rig.reset()
        server.script(chunks(_split(body, cuts)))
        events = list(provider.stream_chat_completion("hi"))
        kinds = [e.type for e in events]
        tokens = [e.text for e in events if e.type is StreamEventType.TOKEN]
        assert kinds == [StreamEventType.TOKEN] * len(tokens) + [StreamEventType.METADATA, StreamEventType.END]
        assert "".join(t or "" for t in tokens) == "".join(STREAM_PIECES)
        meta = events[-2].metadata
        assert meta is not None and (meta.input_tokens, meta.output_tokens) == (7, 5)
        assert meta.stop_reason == "stop"
        assert server.count == 1

    check()
