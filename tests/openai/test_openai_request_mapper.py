"""The one Responses request mapper, as a pure function (docs/openai.md, "How requests are sent")."""

from __future__ import annotations

import pytest

from core_openai_plugin.request_mapper import reasoning_config, replay_reasoning
from core_openai_plugin.schemas import is_strict_schema
from llm_core.errors import InvalidInputError
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, TextPart
from llm_core.requests import ThinkingOptions
from llm_core.tools import ToolCall, ToolSpec
from tests.openai.openai_scenarios import City, make_provider
from tests.openai.openai_wire import PDF, PNG


def mapped(messages, **options):
    provider = make_provider(**options.pop("provider_options", {}))
    request = provider.builder.chat(messages, **options)
    return provider.map_chat_request(request)


def test_store_false_and_system_text_as_instructions():
    payload = mapped([{"role": "system", "content": "Be brief."}, {"role": "system", "content": "Be kind."},
                      {"role": "user", "content": "Hi"}], model="gpt-4.1")
    assert payload == {"model": "gpt-4.1", "input": "Hi",
                       "instructions": "Be brief.\n\nBe kind.", "store": False}


def test_system_argument_and_no_system():
    assert mapped("Hi", model="gpt-4.1", system="Terse.")["instructions"] == "Terse."
    assert "instructions" not in mapped("Hi", model="gpt-4.1")


def test_temperature_zero_is_sent_and_max_tokens_becomes_max_output_tokens():
    payload = mapped("Hi", model="gpt-4.1", temperature=0.0, top_p=0.5, max_tokens=7)
    assert payload["temperature"] == 0.0 and payload["top_p"] == 0.5 and payload["max_output_tokens"] == 7


def test_sampling_on_reasoning_models_is_refused_unless_switched_off():
    with pytest.raises(InvalidInputError, match=r"gpt-5\.4-mini is an OpenAI reasoning model.*top_p"):
        mapped("Hi", model="gpt-5.4-mini", top_p=0.9)
    payload = mapped("Hi", model="gpt-5.4-mini", temperature=0.3, provider_options={"strict_sampling": False})
    assert payload["temperature"] == 0.3


def test_stop_sequences_do_not_exist_in_the_responses_api():
    with pytest.raises(InvalidInputError, match="no stop sequences"):
        mapped("Hi", model="gpt-4.1", stop=["END"])


@pytest.mark.parametrize(("thinking", "expected"), [
    (None, None),
    (ThinkingOptions(), {"summary": "auto"}),
    (ThinkingOptions(level="low"), {"effort": "low", "summary": "auto"}),
    (ThinkingOptions(level="minimal", include_thoughts=False), {"effort": "minimal"}),
    (ThinkingOptions(summary="concise", budget=2048), {"summary": "concise"}),  # budget has no counterpart
    (ThinkingOptions(include_thoughts=False), None),
])
def test_reasoning_config(thinking, expected):
    assert reasoning_config(thinking) == expected


def test_encrypted_reasoning_is_included_for_reasoning_models_only():
    assert mapped("Hi", model="gpt-5.4-mini")["include"] == ["reasoning.encrypted_content"]
    assert "include" not in mapped("Hi", model="gpt-4.1")
    # a model outside the catalogue: only when reasoning is asked for
    assert "include" not in mapped("Hi", model="my-local-model")
    assert mapped("Hi", model="my-local-model", thinking=True)["include"] == ["reasoning.encrypted_content"]


def test_user_parts_become_typed_input_content():
    message = ChatMessage.user([
        TextPart(text="Look:"),
        ImagePart(data=PNG, mime_type="image/png"),
        ImagePart(url="https://example.com/cat.jpg"),
        DocumentPart(data=PDF, mime_type="application/pdf", name="report.pdf"),
    ])
    [item] = mapped([message], model="gpt-4.1", image_detail="high")["input"]
    assert item["role"] == "user"
    text, inline, linked, document = item["content"]
    assert text == {"type": "input_text", "text": "Look:"}
    assert inline["type"] == "input_image" and inline["detail"] == "high"
    assert inline["image_url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert linked == {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "high"}
    assert document["type"] == "input_file" and document["filename"] == "report.pdf"
    assert document["file_data"].startswith("data:application/pdf;base64,JVBERi0")


def test_tool_turns_become_function_call_items():
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Zürich"})
    payload = mapped([
        {"role": "user", "content": "Weather?"},
        ChatMessage.assistant("Let me check.", tool_calls=[call]),
        ChatMessage.tool("call_1", '{"temp": 3}'),
    ], model="gpt-4.1")
    assert payload["input"][1:] == [
        {"role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Zürich"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"temp": 3}'},
    ]


def test_an_assistant_turn_with_only_calls_sends_no_empty_message():
    call = ToolCall(id="call_1", name="f", arguments={})
    payload = mapped([{"role": "user", "content": "Go"}, ChatMessage.assistant("", tool_calls=[call]),
                      ChatMessage.tool("call_1", "done")], model="gpt-4.1")
    assert [item.get("type", "message") for item in payload["input"]] == [
        "message", "function_call", "function_call_output"]
    assert payload["input"][1]["arguments"] == "{}"


def test_a_tool_result_needs_the_call_id():
    with pytest.raises(InvalidInputError, match="tool_call_id"):
        mapped([{"role": "user", "content": "Go"}, {"role": "tool", "name": "f", "content": "x"}], model="gpt-4.1")


def test_extra_keys_of_plain_mappings_are_kept():
    payload = mapped([{"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": "Hello", "phase": "final_answer"},
                      {"role": "user", "content": "Again"}], model="gpt-4.1")
    assert payload["input"][1] == {"role": "assistant", "content": "Hello", "phase": "final_answer"}


def test_reasoning_items_are_replayed_before_the_assistant_turn():
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA", "status": None}
    payload = mapped([{"role": "user", "content": "Q"},
                      {"role": "assistant", "content": "A", "metadata": {"reasoning_items": [item]}},
                      {"role": "user", "content": "Q2"}], model="gpt-5.4-mini")
    assert payload["input"][1] == {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}


@pytest.mark.parametrize("bad", ["not a list", [{"type": "message"}], [{"type": "reasoning"}]])
def test_malformed_replay_metadata_is_refused(bad):
    with pytest.raises(InvalidInputError):
        replay_reasoning(bad)


def test_tools_are_strict_when_their_schema_allows_it():
    closed = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}
    payload = mapped("Hi", model="gpt-4.1", tools=[
        ToolSpec(name="closed", description="Closed schema", parameters=closed),
        ToolSpec(name="open", parameters={"type": "object", "properties": {"q": {"type": "string"}}}),
        ToolSpec(name="forced", parameters=closed, strict=False),
    ], tool_choice="closed")
    closed_tool, open_tool, forced = payload["tools"]
    assert closed_tool == {"type": "function", "name": "closed", "description": "Closed schema",
                           "parameters": closed, "strict": True}
    assert open_tool["strict"] is False and "description" not in open_tool
    assert forced["strict"] is False
    assert payload["tool_choice"] == {"type": "function", "name": "closed"}


@pytest.mark.parametrize("choice", ["auto", "none", "required"])
def test_tool_choice_keywords(choice):
    payload = mapped("Hi", model="gpt-4.1", tools=[ToolSpec(name="f")], tool_choice=choice)
    assert payload["tool_choice"] == choice


def test_tool_choice_must_name_a_tool():
    with pytest.raises(InvalidInputError, match="tool_choice 'g'"):
        mapped("Hi", model="gpt-4.1", tools=[ToolSpec(name="f")], tool_choice="g")


@pytest.mark.parametrize(("schema", "strict"), [
    ({"type": "object", "properties": {}, "additionalProperties": False}, True),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": False},
     False),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}},
                                            "required": ["b"]}},
      "required": ["a"], "additionalProperties": False}, False),
    ({"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
        "additionalProperties": False}}}, "required": ["items"], "additionalProperties": False}, True),
    ({"$defs": {"P": {"type": "object", "properties": {"n": {"type": "string"}}}},
      "type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
      "additionalProperties": False}, False),
    ({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
      "required": ["v"], "additionalProperties": False}, True),
])
def test_strict_schema_detection(schema, strict):
    assert is_strict_schema(schema) is strict


def test_structured_output_formats():
    with_model = mapped("Largest city in Japan as JSON?", model="gpt-4.1", json_mode=True, response_schema=City)
    assert with_model["text"] == {"format": {"type": "json_schema", "name": "City", "schema": {
        "properties": {"city": {"title": "City", "type": "string"}, "country": {"title": "Country", "type": "string"}},
        "required": ["city", "country"], "title": "City", "type": "object", "additionalProperties": False},
        "strict": True}}
    schema = {"title": "My colours!", "type": "object", "properties": {"c": {"type": "string"}}, "required": ["c"],
              "additionalProperties": False}
    with_dict = mapped("Colours?", model="gpt-4.1", json_mode=True, response_schema=schema)
    assert with_dict["text"] == {"format": {"type": "json_schema", "name": "My_colours_", "schema": schema,
                                            "strict": True}}
    plain = mapped("Give JSON with a key a.", model="gpt-4.1", json_mode=True)
    assert plain["text"] == {"format": {"type": "json_object"}} and "instructions" not in plain


def test_json_mode_says_json_when_the_prompt_does_not():
    payload = mapped("List three colours.", model="gpt-4.1", json_mode=True, system="Be exact.")
    assert payload["instructions"] == "Be exact.\n\nAnswer in JSON."


def test_options_pass_through_and_unknown_ones_are_refused():
    payload = mapped("Hi", model="gpt-4.1", service_tier="flex", parallel_tool_calls=False, verbosity="low",
                     safety_identifier="user-1", extra_body={"x": 1})
    assert payload["service_tier"] == "flex" and payload["parallel_tool_calls"] is False
    assert payload["text"] == {"verbosity": "low"} and payload["safety_identifier"] == "user-1"
    assert payload["extra_body"] == {"x": 1}
    refused = r"unknown chat option 'servce_tier' for OpenAI; did you mean 'service_tier'\?"
    with pytest.raises(InvalidInputError, match=refused):
        mapped("Hi", model="gpt-4.1", servce_tier="flex")


def test_provider_options_are_defaults_for_calls():
    payload = mapped("Hi", model="gpt-4.1", provider_options={"service_tier": "flex", "organization": "org-x"})
    assert payload["service_tier"] == "flex" and "organization" not in payload
    payload = mapped("Hi", model="gpt-4.1", service_tier="priority", provider_options={"service_tier": "flex"})
    assert payload["service_tier"] == "priority"


def test_one_plain_user_text_is_the_string_input_the_sdk_readme_sends():
    """The Responses API documents a string ``input`` as a text input with the user role."""
    assert mapped("Hi", model="gpt-4.1") == {"model": "gpt-4.1", "input": "Hi", "store": False}
    assert mapped([{"role": "system", "content": "Terse."}, {"role": "user", "content": "Hi"}],
                  model="gpt-4.1")["input"] == "Hi"


@pytest.mark.parametrize("messages", [
    [{"role": "user", "content": "Hi"}, {"role": "user", "content": "Again"}],  # two turns
    [{"role": "user", "content": "Hi", "phase": "final"}],  # a provider-specific extra key
    [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],  # typed parts
])
def test_any_other_conversation_is_sent_as_input_items(messages):
    assert isinstance(mapped(messages, model="gpt-4.1")["input"], list)


def test_json_mode_reads_the_string_input_for_the_word_json():
    assert "instructions" not in mapped("Answer as JSON: a city.", model="gpt-4.1", json_mode=True)
    assert mapped("A city.", model="gpt-4.1", json_mode=True)["instructions"] == "Answer in JSON."
