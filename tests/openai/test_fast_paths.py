"""The per-call fast paths of the OpenAI plugin give exactly what the general code gives.

Each fast path is checked against the code it short-cuts (kept here as the reference, or reached
through the public function with an input that avoids the fast path), on SDK-built objects: the
SDK builds responses without validation (``construct``), so any JSON value can sit in any field.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Annotated, Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai._models import construct_type
from openai.types.responses import Response, ResponseStreamEvent, ResponseUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from openai_scenarios import make_provider
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, computed_field, field_serializer

from core_openai_plugin import request_mapper, response_parser
from core_openai_plugin.errors import error_from_code
from core_openai_plugin.provider import OpenAIProvider
from core_openai_plugin.request_mapper import map_chat
from core_openai_plugin.response_parser import dump, parse_response, usage_dump, usage_from
from core_openai_plugin.stream_parser import ResponsesStreamParser
from llm_core.messages import ChatMessage, TextPart
from llm_core.requests import ChatRequest, ThinkingOptions
from llm_core.streaming import CallContext, StreamEvent
from llm_core.tools import ToolSpec

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference_dump(obj: Any) -> dict[str, Any]:
    """What ``dump`` gave before the fast paths (and still gives for every other object)."""
    result: dict[str, Any] = obj.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return result


def dumped_with_warnings(function: Any, obj: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(obj)
    return result, [str(w.message) for w in caught]


# -- SDK usages: every JSON value in every place, plus unknown fields --------------------------

json_scalars = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
counts = st.one_of(st.integers(min_value=0, max_value=10**7), json_values)
extra_keys = st.text(min_size=1, max_size=8).filter(
    lambda k: (
        k
        not in {
            "input_tokens",
            "input_tokens_details",
            "output_tokens",
            "output_tokens_details",
            "total_tokens",
            "cached_tokens",
            "cache_write_tokens",
            "cache_write_tokens_details",
            "reasoning_tokens",
            "ttl_12h_tokens",
            "ttl_30m_tokens",
        }
    )
)


def optional_fields(fields: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Any subset of ``fields`` (the SDK keeps what the server sent, required or not), plus extras
    now and then."""
    return st.fixed_dictionaries({}, optional=fields).flatmap(
        lambda base: st.one_of(
            st.just(base),
            st.dictionaries(extra_keys, json_values, min_size=1, max_size=2).map(lambda extra: {**base, **extra}),
        )
    )


write_details = optional_fields({"ttl_12h_tokens": counts, "ttl_30m_tokens": counts})
input_details = optional_fields(
    {
        "cached_tokens": counts,
        "cache_write_tokens": counts,
        "cache_write_tokens_details": st.one_of(write_details, json_values),
    }
)
output_details = optional_fields({"reasoning_tokens": counts})
usage_bodies = optional_fields(
    {
        "input_tokens": counts,
        "input_tokens_details": st.one_of(input_details, json_values),
        "output_tokens": counts,
        "output_tokens_details": st.one_of(output_details, json_values),
        "total_tokens": counts,
    }
)
plain_usage_bodies = st.fixed_dictionaries(
    {
        "input_tokens": st.integers(min_value=0, max_value=10**7),
        "input_tokens_details": st.fixed_dictionaries(
            {"cached_tokens": st.integers(min_value=0, max_value=10**7)},
            optional={"cache_write_tokens": st.integers(min_value=0, max_value=10**7)},
        ),
        "output_tokens": st.integers(min_value=0, max_value=10**7),
        "output_tokens_details": st.fixed_dictionaries({"reasoning_tokens": st.integers(min_value=0, max_value=10**7)}),
        "total_tokens": st.integers(min_value=0, max_value=10**7),
    }
)


def sdk_usage(body: dict[str, Any]) -> ResponseUsage:
    """A usage built the way the SDK builds the ``usage`` of a received response."""
    usage = construct_type(type_=ResponseUsage, value=body)
    assert isinstance(usage, ResponseUsage)
    return usage


@FAST
@given(usage_bodies)
def test_dump_of_any_sdk_usage_equals_the_serializer(body: dict[str, Any]) -> None:
    usage = sdk_usage(body)
    expected, expected_warnings = dumped_with_warnings(reference_dump, usage)
    got, got_warnings = dumped_with_warnings(dump, usage)
    assert got == expected
    assert list(got) == list(expected)  # same key order, nested too (JSON text is identical)
    assert repr(got) == repr(expected)  # and the same types (1 == True == 1.0 would hide them)
    assert got_warnings == expected_warnings


@FAST
@given(plain_usage_bodies)
def test_dump_of_plain_usages_takes_the_fast_path(body: dict[str, Any]) -> None:
    usage = sdk_usage(body)
    plan = response_parser._DUMP_KINDS.get(ResponseUsage) or response_parser._dump_kind(ResponseUsage)
    walked = response_parser._walk_ints(usage, plan)
    assert walked is not None  # the usage of every call does not go through the serializer
    assert repr(walked) == repr(reference_dump(usage)) and walked == body


@FAST
@given(plain_usage_bodies)
def test_dump_of_validated_usages_equals_the_serializer(body: dict[str, Any]) -> None:
    usage = ResponseUsage.model_validate(
        {**body, "input_tokens_details": {"cache_write_tokens": 0, **body["input_tokens_details"]}}
    )
    assert repr(dump(usage)) == repr(reference_dump(usage))


def test_dump_of_changed_usages_equals_the_serializer() -> None:
    usage = sdk_usage({"input_tokens": 3, "output_tokens": 4, "total_tokens": 7})
    usage.output_tokens = True  # type: ignore[assignment]  # no validation on assignment
    assert dumped_with_warnings(dump, usage) == dumped_with_warnings(reference_dump, usage)
    usage = sdk_usage({"input_tokens": 3, "output_tokens": 4})
    usage.__dict__["surprise"] = 1  # a key the serializer does not know
    assert dumped_with_warnings(dump, usage) == dumped_with_warnings(reference_dump, usage)
    subclassed = sdk_usage({"output_tokens_details": {"reasoning_tokens": 1}})
    subclassed.output_tokens_details = type("Sub", (OutputTokensDetails,), {}).construct(reasoning_tokens=2)
    assert dumped_with_warnings(dump, subclassed) == dumped_with_warnings(reference_dump, subclassed)


# -- which models get a plan: only those whose serializer cannot change an int -----------------


class Plain(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int
    b: Optional[int] = None  # noqa: UP045  # the SDK's spelling (typing.Union)
    c: int | None = None


class Nested(BaseModel):
    plain: Plain
    maybe: Optional[Plain] = None  # noqa: UP045
    n: int = 0


class Aliased(BaseModel):
    a: int = Field(alias="A")


class SerializationAliased(BaseModel):
    a: int = Field(serialization_alias="A")


class Excluded(BaseModel):
    a: int = Field(exclude=True)


class Serialized(BaseModel):
    a: int

    @field_serializer("a")
    def _double(self, value: int) -> int:
        return value * 2


class AnnotatedSerializer(BaseModel):
    a: Annotated[int, PlainSerializer(lambda v: v * 2)]


class OptionalAnnotated(BaseModel):
    a: Annotated[int, PlainSerializer(lambda v: v * 2)] | None = None


class Computed(BaseModel):
    a: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def b(self) -> int:
        return self.a


class Text(BaseModel):
    a: str


class IntOrText(BaseModel):
    a: int | str


class HoldsSerialized(BaseModel):
    inner: Serialized


class OwnDump(BaseModel):
    a: int

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        return {"own": self.a}


class Cycle(BaseModel):
    a: int
    again: Cycle | None = None


@pytest.mark.parametrize(
    "model",
    [
        Aliased,
        SerializationAliased,
        Excluded,
        Serialized,
        AnnotatedSerializer,
        OptionalAnnotated,
        Computed,
        Text,
        IntOrText,
        HoldsSerialized,
        Cycle,
    ],
)
def test_models_whose_serializer_could_differ_have_no_plan(model: type[BaseModel]) -> None:
    assert response_parser._int_plan(model) is None


def test_plans_of_int_models() -> None:
    assert response_parser._int_plan(Plain) == {"a": None, "b": None, "c": None}
    plain = response_parser._int_plan(Plain)
    assert response_parser._int_plan(Nested) == {"plain": (Plain, plain), "maybe": (Plain, plain), "n": None}
    assert response_parser._dump_kind(OwnDump) is response_parser._GENERAL
    assert response_parser._dump_kind(Text) is response_parser._SERIALIZED
    assert response_parser._dump_kind(dict) is response_parser._GENERAL
    assert isinstance(response_parser._dump_kind(ResponseUsage), dict)
    assert response_parser._dump_kind(InputTokensDetails) not in (response_parser._GENERAL, None)


@pytest.mark.parametrize(
    "obj",
    [
        Plain(a=1),
        Plain(a=1, b=None),
        Plain(a=1, b=2, c=3, extra=4),
        Plain.model_construct(a=True),
        Nested(plain=Plain(a=1), maybe=None),
        Nested(plain=Plain(a=1), maybe=Plain(a=2, c=5)),
        Nested.model_construct(plain={"a": 1}),
        Aliased(A=1),
        Serialized(a=2),
        AnnotatedSerializer(a=2),
        OptionalAnnotated(a=2),
        Computed(a=1),
        HoldsSerialized(inner=Serialized(a=3)),
        Cycle(a=1, again=Cycle(a=2)),
        Text(a="x"),
    ],
)
def test_dump_of_any_model_equals_the_serializer(obj: BaseModel) -> None:
    got, got_warnings = dumped_with_warnings(dump, obj)
    expected, expected_warnings = dumped_with_warnings(reference_dump, obj)
    assert repr(got) == repr(expected) and got_warnings == expected_warnings


def test_dump_of_mappings_and_own_dumps() -> None:
    source = {"b": 1, "a": [2]}
    copied = dump(source)
    assert copied == source and copied is not source
    assert dump(OwnDump(a=1)) == {"own": 1}


# -- usage_dump: the usual usage built directly ----------------------------------------------

usual_usage_bodies = st.fixed_dictionaries(
    {
        "input_tokens": st.integers(min_value=0, max_value=10**7),
        "input_tokens_details": st.fixed_dictionaries({"cached_tokens": st.integers(min_value=0, max_value=10**7)}),
        "output_tokens": st.integers(min_value=0, max_value=10**7),
        "output_tokens_details": st.fixed_dictionaries({"reasoning_tokens": st.integers(min_value=0, max_value=10**7)}),
        "total_tokens": st.integers(min_value=0, max_value=10**7),
    }
)


def assert_dumps_like_the_serializer(usage: Any) -> None:
    expected, expected_warnings = dumped_with_warnings(reference_dump, usage)
    got, got_warnings = dumped_with_warnings(usage_dump, usage)
    assert got == expected
    assert list(got) == list(expected)  # same key order
    assert repr(got) == repr(expected)  # same types, nested dicts and their key order too
    assert got_warnings == expected_warnings


@FAST
@given(usage_bodies)
def test_usage_dump_of_any_sdk_usage_equals_the_serializer(body: dict[str, Any]) -> None:
    assert_dumps_like_the_serializer(sdk_usage(body))


@FAST
@given(usual_usage_bodies)
def test_usage_dump_builds_the_usual_usage_without_dump(body: dict[str, Any]) -> None:
    usage = sdk_usage(body)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(response_parser, "dump", None)  # would fail if called
        built = usage_dump(usage)
    assert repr(built) == repr(reference_dump(usage)) and built == body


def test_usage_dump_of_other_shapes_and_changed_usages_equals_the_serializer() -> None:
    usual = {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 2},
        "output_tokens": 80,
        "output_tokens_details": {"reasoning_tokens": 30},
        "total_tokens": 92,
    }
    others = [
        {**usual, "input_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 1}},
        {**usual, "output_tokens_details": {}},
        {**usual, "extra": 1},
        {key: value for key, value in usual.items() if key != "total_tokens"},
    ]
    for body in others:
        assert_dumps_like_the_serializer(sdk_usage(body))
    # validated, not constructed: the SDK type requires cache_write_tokens
    assert_dumps_like_the_serializer(
        ResponseUsage.model_validate({**usual, "input_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 0}})
    )
    for name, value in [("total_tokens", True), ("output_tokens", 1.0), ("input_tokens", None)]:
        changed = sdk_usage(usual)
        setattr(changed, name, value)  # no validation on assignment
        assert_dumps_like_the_serializer(changed)
    changed = sdk_usage(usual)
    changed.output_tokens_details = type("Sub", (OutputTokensDetails,), {}).construct(reasoning_tokens=2)
    assert_dumps_like_the_serializer(changed)
    changed = sdk_usage(usual)
    changed.input_tokens_details.cached_tokens = "2"  # type: ignore[assignment]
    assert_dumps_like_the_serializer(changed)


# -- usage_from: the SDK usage read from __dict__ -----------------------------------------------


def outcome(function: Any, *args: Any) -> tuple[str, Any]:
    """A result with its dict, fields set and repr, or the exception raised (type and text)."""
    try:
        result = function(*args)
    except Exception as exc:
        return "raised", (type(exc), str(exc))
    if isinstance(result, BaseModel):
        return "returned", (type(result), result.__dict__, result.model_fields_set, repr(result))
    return "returned", (type(result), repr(result))


@FAST
@given(usage_bodies)
def test_usage_from_any_sdk_usage_equals_the_general_path(body: dict[str, Any]) -> None:
    usage = sdk_usage(body)
    assert outcome(usage_from, usage) == outcome(response_parser._usage_general, usage)


@FAST
@given(plain_usage_bodies, st.dictionaries(st.sampled_from(["prompt_tokens", "other"]), json_values, max_size=2))
def test_usage_from_plain_sdk_usages_equals_the_general_path(body: dict[str, Any], extra: dict[str, Any]) -> None:
    usage = sdk_usage({**body, **extra})
    assert outcome(usage_from, usage) == outcome(response_parser._usage_general, usage)
    validated = ResponseUsage.model_validate(
        {**body, "input_tokens_details": {"cache_write_tokens": 0, **body["input_tokens_details"]}}
    )
    assert outcome(usage_from, validated) == outcome(response_parser._usage_general, validated)


def test_usage_from_takes_the_fast_path_for_the_sdk_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = sdk_usage(
        {
            "input_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 80,
            "output_tokens_details": {"reasoning_tokens": 30},
            "total_tokens": 92,
        }
    )
    expected = response_parser._usage_general(usage)
    monkeypatch.setattr(response_parser, "_usage_general", None)  # would fail if called
    result = usage_from(usage)
    assert result == expected and result.model_fields_set == expected.model_fields_set
    assert (result.prompt_tokens, result.completion_tokens, result.thinking_tokens) == (12, 50, 30)


def test_usage_from_other_usages_and_changed_sdk_usages() -> None:
    class ChatUsage(BaseModel):
        prompt_tokens: int
        completion_tokens: int
        total_tokens: int

    chat = ChatUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7)
    assert usage_from(chat).prompt_tokens == 3
    assert usage_from(None) == response_parser.Usage()
    changed = sdk_usage({"input_tokens": 3, "output_tokens": 4, "total_tokens": 7})
    changed.output_tokens_details = type("Sub", (OutputTokensDetails,), {}).construct(reasoning_tokens=2)
    assert outcome(usage_from, changed) == outcome(response_parser._usage_general, changed)
    changed.output_tokens = True  # type: ignore[assignment]
    assert outcome(usage_from, changed) == outcome(response_parser._usage_general, changed)


# -- parse_response: one completed message of one output_text part ------------------------------

texts = st.one_of(st.text(max_size=8), json_values)
parts = st.one_of(
    st.fixed_dictionaries({"type": st.just("output_text"), "text": texts, "annotations": st.just([])}),
    st.fixed_dictionaries({"type": st.just("refusal"), "refusal": st.text(max_size=5)}),
    st.fixed_dictionaries({"type": st.sampled_from(["output_text", "other"])}),
)
items = st.one_of(
    st.fixed_dictionaries(
        {
            "id": st.just("msg_1"),
            "type": st.just("message"),
            "role": st.just("assistant"),
            "status": st.just("completed"),
            "content": st.lists(parts, max_size=2),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call"),
            "call_id": st.just("call_1"),
            "name": st.just("f"),
            "arguments": st.just('{"a": 1}'),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("reasoning"),
            "id": st.just("rs_1"),
            "summary": st.just([{"type": "summary_text", "text": "t"}]),
        }
    ),
)
response_bodies = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["resp_1", None]),
        "object": st.just("response"),
        "created_at": st.just(1),
        "status": st.sampled_from(["completed", "incomplete", "in_progress", "failed", None]),
        "output": st.one_of(st.lists(items, max_size=2), st.none()),
        "parallel_tool_calls": st.just(True),
        "tool_choice": st.just("auto"),
        "tools": st.just([]),
    },
    optional={
        "model": st.sampled_from(["gpt-4.1-mini-2025-04-14", "", None]),
        "usage": st.one_of(st.none(), usage_bodies, plain_usage_bodies),
        "incomplete_details": st.one_of(st.none(), st.just({"reason": "max_output_tokens"})),
        "error": st.one_of(st.none(), st.just({"code": "server_error", "message": "boom"})),
        "unknown": json_values,
    },
)
REQUEST = ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-4.1-mini")


def parsed_outcome(function: Any, raw: Any) -> tuple[str, Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kind, value = outcome(function, raw, REQUEST)
    return kind, value, [str(w.message) for w in caught]


@FAST
@given(response_bodies)
def test_parse_response_of_any_sdk_response_equals_the_general_path(body: dict[str, Any]) -> None:
    raw = construct_type(type_=Response, value=body)
    assert type(raw) is Response
    assert parsed_outcome(parse_response, raw) == parsed_outcome(response_parser._parse_general, raw)


BENCHMARK_LIKE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1757604033,
    "status": "completed",
    "background": False,
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "model": "gpt-4.1-mini-2025-04-14",
    "output": [
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Hello."}],
            "role": "assistant",
        }
    ],
    "parallel_tool_calls": True,
    "store": False,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "usage": {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 25,
    },
    "metadata": {},
}


def test_parse_response_takes_the_fast_path_for_a_one_text_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    built = construct_type(type_=Response, value=BENCHMARK_LIKE)
    body = {
        **BENCHMARK_LIKE,
        "usage": {**BENCHMARK_LIKE["usage"], "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}},
    }
    validated = Response.model_validate(body)
    expected = [response_parser._parse_general(raw, REQUEST) for raw in (built, validated)]
    monkeypatch.setattr(response_parser, "_parse_general", None)  # would fail if called
    for raw, want in zip((built, validated), expected, strict=True):
        got = parse_response(raw, REQUEST)
        assert got.__dict__ == want.__dict__ and repr(got) == repr(want)
        assert got.model_fields_set == want.model_fields_set
        assert got.usage.model_fields_set == want.usage.model_fields_set
    assert got.content == "Hello." and got.metadata["raw_usage"]["total_tokens"] == 25


def test_parse_response_of_subclassed_or_other_objects_takes_the_general_path() -> None:
    sub = type("Sub", (Response,), {})
    raw = sub.construct(**BENCHMARK_LIKE)
    assert outcome(parse_response, raw, REQUEST) == outcome(response_parser._parse_general, raw, REQUEST)
    refused = construct_type(
        type_=Response,
        value={
            **BENCHMARK_LIKE,
            "output": [{**BENCHMARK_LIKE["output"][0], "content": [{"type": "refusal", "refusal": "no"}]}],
        },
    )
    result = parse_response(refused, REQUEST)
    assert result.finish_reason == "content_filter" and result.content == "no"


# -- map_chat: system and plain user messages, nothing else set ---------------------------------

SPEC_MODELS = [None, OpenAIProvider.spec.model("gpt-4.1-mini"), OpenAIProvider.spec.model("o4-mini")]
plain_texts = st.text(max_size=6)
chat_messages = st.one_of(
    plain_texts.map(ChatMessage.system),
    plain_texts.map(ChatMessage.user),
    plain_texts.map(lambda t: ChatMessage.user([TextPart(text=t)])),
    plain_texts.map(lambda t: ChatMessage.model_validate({"role": "user", "content": t, "phase": "x"})),
    plain_texts.map(lambda t: ChatMessage.model_validate({"role": "system", "content": t, "phase": "x"})),
    plain_texts.map(ChatMessage.assistant),
    plain_texts.map(lambda t: ChatMessage.tool("call_1", t)),
)
chat_requests = st.builds(
    lambda messages, model, extra: ChatRequest(messages=messages, model=model, **extra),
    st.lists(chat_messages, min_size=1, max_size=4),
    st.sampled_from(["gpt-4.1-mini", "o4-mini"]),
    st.fixed_dictionaries(
        {},
        optional={
            "temperature": st.one_of(st.none(), st.just(0.0), st.just(0.5)),
            "top_p": st.one_of(st.none(), st.just(1.0)),
            "stop": st.one_of(st.none(), st.just([]), st.just(["x"])),
            "max_tokens": st.one_of(st.none(), st.just(10)),
            "thinking": st.one_of(st.none(), st.just(ThinkingOptions(level="low"))),
            "tools": st.one_of(st.none(), st.just([]), st.just([ToolSpec(name="f")])),
            "tool_choice": st.one_of(st.none(), st.just("auto"), st.just("f")),
            "json_mode": st.booleans(),
            "options": st.one_of(st.just({}), st.just({"verbosity": "low"}), st.just({"service_tier": None})),
        },
    ),
)


def mapped_outcome(function: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        payload = function(*args, **kwargs)
    except Exception as exc:
        return "raised", (type(exc), str(exc))
    return "returned", repr(payload)  # keys, their order, values and their types


@FAST
@given(chat_requests, st.sampled_from(SPEC_MODELS), st.booleans())
def test_map_chat_equals_the_general_path(request: ChatRequest, model: Any, strict: bool) -> None:
    assert mapped_outcome(map_chat, request, model, strict_sampling=strict) == mapped_outcome(
        request_mapper._map_chat_general, request, model, strict_sampling=strict
    )


@pytest.mark.parametrize("model", SPEC_MODELS)
def test_map_chat_takes_the_fast_path_for_a_plain_call(monkeypatch: pytest.MonkeyPatch, model: Any) -> None:
    request = ChatRequest(
        messages=[ChatMessage.system("Be brief."), ChatMessage.user("Hi"), ChatMessage.system("Really.")],
        model="o4-mini",
    )
    expected = request_mapper._map_chat_general(request, model, strict_sampling=True)
    monkeypatch.setattr(request_mapper, "_map_chat_general", None)  # would fail if called
    payload = map_chat(request, model)
    assert repr(payload) == repr(expected)
    assert payload["instructions"] == "Be brief.\n\nReally." and payload["store"] is False
    assert ("include" in payload) == (model is not None and model.extra["reasoning"] is True)


@pytest.mark.parametrize(
    "options",
    [{}, {"strict_sampling": False}, {"verbosity": "low"}, {"organization": "org-1"}],
)
def test_map_chat_request_with_and_without_provider_options(options: dict[str, Any]) -> None:
    provider = make_provider(**options)
    request = ChatRequest(messages=[ChatMessage.system("S"), ChatMessage.user("U")], model="o4-mini", temperature=0.5)
    plain = ChatRequest(messages=[ChatMessage.user("U")], model="o4-mini")
    model = provider.provider_spec.model("o4-mini")
    strict = bool(options.get("strict_sampling", True))
    for chat in (request, plain):
        expected = mapped_outcome(
            request_mapper._map_chat_general, provider._with_defaults(chat), model, strict_sampling=strict
        )
        assert mapped_outcome(provider.map_chat_request, chat) == expected


# -- the stream parser: dispatch on the event type ----------------------------------------------


class ReferenceStreamParser(ResponsesStreamParser):
    """The parser with the if-chain ``feed`` the dispatch table replaced."""

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        kind = getattr(chunk, "type", None)
        if kind == "response.output_text.delta":
            if chunk.delta:
                self._text = True
                return (StreamEvent.token(chunk.delta, self._response_tokens),)
            return ()
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._thinking(chunk)
        if kind == "response.refusal.delta":
            self._refusal.append(chunk.delta)
        elif kind == "response.output_item.added":
            self._item_added(chunk.item)
        elif kind == "response.function_call_arguments.delta":
            pending = self._calls.get(chunk.item_id)
            if pending is not None:
                pending.arguments += chunk.delta
        elif kind == "response.function_call_arguments.done":
            pending = self._calls.get(chunk.item_id)
            if pending is not None:
                pending.arguments = chunk.arguments
        elif kind == "response.output_item.done":
            self._item_done(chunk.item)
        elif kind in ("response.completed", "response.incomplete"):
            self._final = chunk.response
        elif kind == "response.failed":
            raise self._failure(chunk.response)
        elif kind == "error":
            raise error_from_code(getattr(chunk, "code", None), chunk.message, provider="openai")
        return ()


def stream_response(status: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-4.1-mini",
        "status": status,
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    if status == "failed":
        body["error"] = {"code": "server_error", "message": "boom"}
    return body


call_item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
reasoning_done = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "t"}]}
message_item = {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
deltas = st.sampled_from(["", "a", "bc", " "])
stream_events = st.one_of(
    st.sampled_from(["response.created", "response.in_progress"]).map(
        lambda kind: {"type": kind, "response": stream_response("in_progress", None)}
    ),
    st.sampled_from([message_item, call_item]).map(
        lambda item: {"type": "response.output_item.added", "output_index": 0, "item": item}
    ),
    st.just(
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "annotations": [], "text": ""},
        }
    ),
    deltas.map(
        lambda d: {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": d,
            "logprobs": [],
        }
    ),
    st.tuples(deltas, st.integers(0, 1)).map(
        lambda t: {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": t[1],
            "delta": t[0],
        }
    ),
    st.tuples(deltas, st.integers(0, 1)).map(
        lambda t: {
            "type": "response.reasoning_text.delta",
            "item_id": "rs_1",
            "output_index": 0,
            "content_index": t[1],
            "delta": t[0],
        }
    ),
    deltas.map(
        lambda d: {
            "type": "response.refusal.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": d,
        }
    ),
    st.sampled_from(["fc_1", "fc_2"]).map(
        lambda i: {
            "type": "response.function_call_arguments.delta",
            "item_id": i,
            "output_index": 0,
            "delta": '{"a":',
        }
    ),
    st.sampled_from(["fc_1", "fc_2"]).map(
        lambda i: {
            "type": "response.function_call_arguments.done",
            "item_id": i,
            "output_index": 0,
            "arguments": '{"a": 1}',
        }
    ),
    st.sampled_from([call_item, {**call_item, "arguments": "{}"}, reasoning_done, message_item]).map(
        lambda item: {"type": "response.output_item.done", "output_index": 0, "item": item}
    ),
    st.tuples(st.sampled_from(["completed", "incomplete", "failed"]), st.one_of(st.none(), plain_usage_bodies)).map(
        lambda t: {"type": f"response.{t[0]}", "response": stream_response(t[0], t[1])}
    ),
    st.just({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}),
    st.just({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0}),
)


def event_outcome(function: Any, *args: Any) -> tuple[str, Any]:
    try:
        result = function(*args)
    except Exception as exc:
        return "raised", (type(exc), str(exc))
    return "returned", repr(result)


@FAST
@given(st.lists(stream_events, max_size=8), st.sampled_from([None, *CallContext]))
def test_stream_parser_equals_the_if_chain(bodies: list[dict[str, Any]], context: CallContext | None) -> None:
    request = ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-4.1-mini", call_context=context)
    parser, reference = ResponsesStreamParser(request), ReferenceStreamParser(request)
    for number, body in enumerate(bodies):
        event = construct_type(type_=ResponseStreamEvent, value={**body, "sequence_number": number})
        got, expected = event_outcome(parser.feed, event), event_outcome(reference.feed, event)
        assert got == expected
        if got[0] == "raised":
            return
    assert event_outcome(parser.finish) == event_outcome(reference.finish)


def test_stream_parser_tolerates_events_without_a_known_type() -> None:
    parser = ResponsesStreamParser(ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-4.1-mini"))
    assert parser.feed(object()) == ()
    assert parser.feed(type("Odd", (), {"type": ["unhashable"]})()) == ()
    assert parser.feed(type("Odd", (), {"type": "response.new_kind"})()) == ()
