"""The pure request mappers: tool results as JSON objects (the full table), system text,
temperature 0.0, JSON, images, thinking options, tools, embeddings; invalid input refused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, strategies as st

from core_gemini_plugin.contents import MAX_INLINE_BYTES, map_contents, replay_part, tool_result_object
from core_gemini_plugin.request_mapper import (
    map_chat_request,
    map_embedding_request,
    map_image_request,
    map_imagen_request,
)
from llm_core.errors import InvalidInputError
from llm_core.messages import ChatMessage, ImagePart
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest, ThinkingOptions
from llm_core.tools import ToolCall, ToolSpec
from tests.gemini.gemini_inputs import PNG, TOOL_RESULT_TABLE, WEATHER, CityLocation


def chat(*messages: ChatMessage, model: str = "gemini-2.5-flash", **fields: Any) -> dict[str, Any]:
    return map_chat_request(ChatRequest(messages=list(messages) or [ChatMessage.user("Hi")], model=model, **fields))


# -- tool results: sent as JSON objects (the two JSON-object slots) -----------------------------


@pytest.mark.parametrize(("output", "expected"), TOOL_RESULT_TABLE, ids=[o for o, _ in TOOL_RESULT_TABLE])
def test_tool_result_table(output: str, expected: dict[str, Any]) -> None:
    assert tool_result_object(output) == expected
    [_, _, results] = map_contents([
        ChatMessage.user("go"), ChatMessage.assistant(tool_calls=[ToolCall(id="c1", name="lookup")]),
        ChatMessage.tool("c1", output)])
    assert results["parts"] == [{"function_response": {"id": "c1", "name": "lookup", "response": expected}}]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4))
def test_a_json_object_is_sent_as_it_is(value: dict[str, Any]) -> None:
    assert tool_result_object(json.dumps(value)) == value


@given(st.lists(json_values, max_size=5))
def test_a_json_list_becomes_an_object_keyed_by_position(value: list[Any]) -> None:
    assert tool_result_object(json.dumps(value)) == {str(i): item for i, item in enumerate(value)}


@given(st.one_of(st.text(), st.integers().map(str), st.floats(allow_nan=False).map(json.dumps),
                 st.text().map(json.dumps), st.booleans().map(json.dumps)))
def test_anything_else_keeps_the_original_string_under_result(output: str) -> None:
    try:
        decoded = json.loads(output)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict | list):
        return
    assert tool_result_object(output) == {"result": output}


@pytest.mark.parametrize("arguments", [{}, {"0": "zero", "1": "one"}, {"nested": {"a": [1, {"b": None}]}}])
def test_function_call_args_are_always_objects_and_the_callers_data_stay(arguments: dict[str, Any]) -> None:
    tool_call = ToolCall(id="c1", name="lookup", arguments=arguments)
    saved = {"gemini_parts": [{"function_call": {"id": "c1", "name": "lookup", "args": arguments}}]}
    before = (copy.deepcopy(tool_call.arguments), copy.deepcopy(saved))
    for message in (ChatMessage.assistant(tool_calls=[tool_call]),
                    ChatMessage(role="assistant", tool_calls=[tool_call], metadata=saved)):
        [turn] = map_contents([message])
        sent = turn["parts"][0]["function_call"]["args"]
        assert sent == arguments and isinstance(sent, dict)
        sent["mutated"] = True
    assert (tool_call.arguments, saved) == before


def test_function_response_name_from_the_matching_call_else_the_message_name() -> None:
    turns = map_contents([
        ChatMessage.user("go"),
        ChatMessage.assistant(tool_calls=[ToolCall(id="a", name="get_weather", arguments={"city": "Oslo"})]),
        ChatMessage.tool("a", '{"temp_c": 3}', name="ignored_name"),
        ChatMessage(role="tool", name="get_time", content="12:00"),
    ])
    results = turns[2]["parts"]
    assert len(turns) == 3  # consecutive tool results share one user turn
    assert results[0]["function_response"] == {"id": "a", "name": "get_weather", "response": {"temp_c": 3}}
    assert results[1]["function_response"] == {"name": "get_time", "response": {"result": "12:00"}}


def test_a_tool_result_without_a_name_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="matches no earlier tool call"):
        map_contents([ChatMessage.user("go"), ChatMessage.tool("unknown-id", "1")])


# -- system text, temperature, messages -----------------------------------------------------------


def test_system_text_becomes_system_instruction_and_zero_temperature_is_sent() -> None:
    payload = chat(ChatMessage.system("Be brief."), ChatMessage.system("Use French."), ChatMessage.user("Hi"),
                   temperature=0.0, top_p=0.5, max_tokens=64, stop=["END"])
    assert payload["config"] == {"system_instruction": "Be brief.\n\nUse French.", "temperature": 0.0, "top_p": 0.5,
                                 "max_output_tokens": 64, "stop_sequences": ["END"]}
    assert payload["contents"] == "Hi"  # one plain user text: the SDK sends it as one user turn
    assert payload["model"] == "gemini-2.5-flash"


def test_assistant_turns_are_model_turns_and_images_are_inline_data() -> None:
    contents = map_contents([
        ChatMessage.user(["What is this?", ImagePart(data=PNG)]),
        ChatMessage.assistant("A pixel."),
        ChatMessage.user([ImagePart(url="https://example.com/cat.webp", mime_type="image/webp")]),
    ])
    assert contents[0] == {"role": "user", "parts": [
        {"text": "What is this?"}, {"inline_data": {"data": PNG, "mime_type": "image/png"}}]}
    assert contents[1] == {"role": "model", "parts": [{"text": "A pixel."}]}
    assert contents[2]["parts"] == [{"file_data": {"file_uri": "https://example.com/cat.webp",
                                                   "mime_type": "image/webp"}}]


def test_inline_data_over_the_request_limit_is_refused() -> None:
    big = b"%PDF-" + b"0" * (MAX_INLINE_BYTES // 2)
    parts = [{"type": "document", "data": big, "mime_type": "application/pdf"}] * 3
    with pytest.raises(InvalidInputError, match="inline data per request"):
        map_contents([ChatMessage(role="user", content=parts)])


def test_unknown_options_are_refused_and_known_ones_passed() -> None:
    payload = chat(options={"top_k": 20, "seed": 7, "safety_settings": [{"category": "HARM_CATEGORY_HARASSMENT",
                                                                         "threshold": "BLOCK_NONE"}]})
    assert payload["config"]["top_k"] == 20 and payload["config"]["seed"] == 7
    with pytest.raises(InvalidInputError, match=r"unknown chat option 'reasoning_effort' for Gemini \(valid: "):
        chat(options={"reasoning_effort": "high"})
    with pytest.raises(InvalidInputError, match=r"unknown chat option 'top_kk' for Gemini; did you mean 'top_k'\?"):
        chat(options={"top_kk": 20})


# -- thinking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "model", "expected"), [
    (ThinkingOptions(), "gemini-2.5-flash", {"include_thoughts": True}),
    (ThinkingOptions(budget=1024), "gemini-2.5-flash", {"include_thoughts": True, "thinking_budget": 1024}),
    (ThinkingOptions(include_thoughts=False, budget=0), "gemini-2.5-flash",
     {"include_thoughts": False, "thinking_budget": 0}),
    (ThinkingOptions(level="high"), "gemini-3-flash-preview", {"include_thoughts": True, "thinking_level": "HIGH"}),
    (ThinkingOptions(budget=-1), "gemini-3-flash-preview", {"include_thoughts": True, "thinking_budget": -1}),
])
def test_thinking_config(options: ThinkingOptions, model: str, expected: dict[str, Any]) -> None:
    assert chat(model=model, thinking=options)["config"]["thinking_config"] == expected


@pytest.mark.parametrize(("options", "model", "message"), [
    (ThinkingOptions(budget=100, level="low"), "gemini-3-flash-preview", "not both"),
    (ThinkingOptions(level="low"), "gemini-2.5-pro", "takes a thinking budget"),
])
def test_thinking_combinations_gemini_rejects_are_refused_first(options: ThinkingOptions, model: str,
                                                                message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        chat(model=model, thinking=options)


# -- JSON ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "expected"), [
    (None, None),
    ({"type": "object", "properties": {"a": {"type": "integer"}}},
     {"type": "object", "properties": {"a": {"type": "integer"}}}),
    (CityLocation, CityLocation.model_json_schema()),
])
def test_json_mode_sends_mime_type_and_schema(schema: Any, expected: dict[str, Any] | None) -> None:
    config = chat(json_mode=True, response_schema=schema)["config"]
    assert config["response_mime_type"] == "application/json"
    assert config.get("response_json_schema") == expected


# -- tools --------------------------------------------------------------------------------------


def test_function_declarations_use_the_json_schema_as_is() -> None:
    bare = ToolSpec(name="ping")
    config = chat(tools=[WEATHER, bare])["config"]
    assert config["tools"] == [{"function_declarations": [
        {"name": "get_weather", "description": "Current weather for a city.",
         "parameters_json_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                    "required": ["city"]}},
        {"name": "ping", "parameters_json_schema": {"type": "object", "properties": {}}},
    ]}]
    assert "tool_config" not in config


@pytest.mark.parametrize(("choice", "expected"), [
    ("auto", {"mode": "AUTO"}), ("none", {"mode": "NONE"}), ("required", {"mode": "ANY"}),
    ("get_weather", {"mode": "ANY", "allowed_function_names": ["get_weather"]}),
])
def test_tool_choice(choice: str, expected: dict[str, Any]) -> None:
    assert chat(tools=[WEATHER], tool_choice=choice)["config"]["tool_config"] == {"function_calling_config": expected}


@pytest.mark.parametrize(("fields", "message"), [
    ({"tools": [WEATHER], "tool_choice": "get_time"}, "not auto, none, required or one of the given tools"),
    ({"tool_choice": "auto"}, "tool_choice needs tools"),
])
def test_bad_tool_choice_is_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        chat(**fields)


# -- embeddings ---------------------------------------------------------------------------------


def test_embedding_request() -> None:
    request = EmbeddingRequest(inputs=["a", "b"], model="gemini-embedding-001", dimensions=768,
                               task_type="retrieval_document", options={"title": "Notes"})
    assert map_embedding_request(request) == {"model": "gemini-embedding-001", "contents": ["a", "b"], "config": {
        "task_type": "RETRIEVAL_DOCUMENT", "output_dimensionality": 768, "title": "Notes"}}


@pytest.mark.parametrize(("fields", "message"), [
    ({"task_type": "summarize"}, "unknown embedding task_type"),
    ({"options": {"auto_truncate": True}}, "unknown embedding option"),
])
def test_bad_embedding_options_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        map_embedding_request(EmbeddingRequest(inputs=["a"], model="gemini-embedding-001", **fields))


# -- images: Gemini image models and Imagen --------------------------------------------------------


def test_image_request_is_one_user_turn_text_then_images() -> None:
    second = ImagePart(data=b"\xff\xd8\xff\xe0", mime_type="image/jpeg")
    request = ImageRequest(prompt="Blend them.", model="gemini-2.5-flash-image", mime_type="image/webp",
                           input_images=[ImagePart(data=PNG, mime_type="image/png"), second], size="2k",
                           aspect_ratio="16:9")
    assert map_image_request(request) == {
        "model": "gemini-2.5-flash-image",
        "contents": [{"role": "user", "parts": [
            {"text": "Blend them."},
            {"inline_data": {"data": PNG, "mime_type": "image/png"}},
            {"inline_data": {"data": b"\xff\xd8\xff\xe0", "mime_type": "image/jpeg"}},
        ]}],
        "config": {"response_modalities": ["IMAGE"], "image_config": {"aspect_ratio": "16:9", "image_size": "2K"}},
    }  # the requested MIME type (image/webp) is not sent


@pytest.mark.parametrize(("fields", "message"), [
    ({"size": "1024x1024"}, "not one of 1K, 2K, 4K"),
    ({"aspect_ratio": "7:3"}, "aspect ratio"),
    ({"quality": "hd"}, "no quality"),
    ({"options": {"n": 2}}, "unknown image option"),
])
def test_bad_image_options_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        map_image_request(ImageRequest(prompt="x", model="gemini-2.5-flash-image", **fields))


def test_imagen_request_sends_the_requested_mime_type() -> None:
    request = ImageRequest(prompt="A lighthouse.", model="imagen-4.0-generate-001", mime_type="image/jpeg",
                           aspect_ratio="4:3", options={"seed": 3})
    assert map_imagen_request(request) == {"model": "imagen-4.0-generate-001", "prompt": "A lighthouse.", "config": {
        "output_mime_type": "image/jpeg", "aspect_ratio": "4:3", "seed": 3}}
    with pytest.raises(InvalidInputError, match="no input images"):
        map_imagen_request(request.model_copy(update={"input_images": [ImagePart(data=PNG, mime_type="image/png")]}))


# -- values JSON cannot carry: sent as text, or refused before sending ------------------------------


@pytest.mark.parametrize("output", ["NaN", "Infinity", "-Infinity", "[1, NaN]", '{"x": Infinity}'])
def test_nan_and_infinity_in_a_tool_result_are_not_json(output: str) -> None:
    assert tool_result_object(output) == {"result": output}  # not JSON: sent as text, {"result": ...}


def test_nan_in_replayed_tool_call_arguments_is_refused_before_sending() -> None:
    call = ToolCall.model_construct(id="c1", name="f", arguments={"x": float("nan")})
    with pytest.raises(InvalidInputError, match="tool call arguments are not JSON"):
        chat(ChatMessage.user("q"), ChatMessage(role="assistant", tool_calls=[call]))


def test_a_saved_replay_part_whose_args_is_a_list_becomes_an_object() -> None:
    saved = {"function_call": {"id": "c1", "name": "f", "args": ["a", "b"]}}
    assert replay_part(saved) == {"function_call": {"id": "c1", "name": "f", "args": {"0": "a", "1": "b"}}}


@pytest.mark.parametrize("saved", [
    {"function_call": {"name": "f", "args": "text"}},
    {"function_call": ["f"]},
    "a part",
])
def test_a_saved_replay_part_that_is_not_an_object_is_a_typed_error(saved: Any) -> None:
    with pytest.raises(InvalidInputError, match="saved Gemini"):
        replay_part(saved)
