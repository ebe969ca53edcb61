"""Structured output and tools (results sent as JSON objects) through the real SDK (sync and async)."""

from __future__ import annotations

import pytest

from core_gemini_plugin import assistant_message
from llm_core.errors import InvalidInputError, InvalidResponseError
from llm_core.messages import ChatMessage
from llm_core.tools import ToolCall
from tests.gemini.gemini_inputs import CLOCK, COLORS_SCHEMA, LOOKUP, TOOL_RESULT_TABLE, WEATHER, CityLocation
from tests.gemini.gemini_support import Offline, Runner, cassette, sent_body

# -- structured output -------------------------------------------------------------------------


def test_pydantic_schema_gives_a_validated_instance(run: Runner) -> None:
    with cassette("json_pydantic") as recorded:
        city = run("generate_json", "What is the largest city in Mexico?", schema=CityLocation)
    config = sent_body(recorded)["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == CityLocation.model_json_schema()
    assert city == CityLocation(city="Mexico City", country="Mexico")


def test_dict_schema_gives_decoded_json(run: Runner) -> None:
    with cassette("json_dict_schema") as recorded:
        data = run("generate_json", "Name the three primary colours.", schema=COLORS_SCHEMA)
    assert sent_body(recorded)["generationConfig"]["responseJsonSchema"] == COLORS_SCHEMA
    assert data == {"colors": ["red", "yellow", "blue"]}


def test_no_schema_gives_decoded_json(run: Runner) -> None:
    with cassette("json_no_schema") as recorded:
        data = run("generate_json", "Give the first three primes as a JSON object with the key primes.")
    assert sent_body(recorded)["generationConfig"] == {"responseMimeType": "application/json"}
    assert data == {"primes": [2, 3, 5]}


def test_invalid_json_raises_with_the_raw_text(run: Runner) -> None:
    with cassette("json_truncated"), pytest.raises(InvalidResponseError, match="max_tokens") as caught:
        run("generate_json", "What is the largest city in Mexico?", schema=CityLocation, max_tokens=6)
    assert caught.value.raw == '{\n  "city": "Mexico'


def test_schema_validation_failure_raises_with_the_raw_text(run: Runner) -> None:
    with cassette("json_schema_mismatch"), pytest.raises(InvalidResponseError) as caught:
        run("generate_json", "Which city hosts the Zócalo?", schema=CityLocation)
    assert caught.value.raw == '{"city": "Mexico City"}'
    assert "country" in str(caught.value)


def test_a_schema_that_is_neither_model_nor_dict_is_refused(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="schema"):
        provider.generate_json("x", schema=list)  # type: ignore[type-var]
    assert sent == []


# -- tools -----------------------------------------------------------------------------------


def test_tool_loop_with_generated_ids_and_replayed_signature(run: Runner) -> None:
    question = "What's the weather in Paris and Tokyo right now?"
    with cassette("tools_loop") as recorded:
        first = run("chat_completion_with_tools", question, [WEATHER, CLOCK], model="gemini-3-flash-preview")
        assert first.finish_reason == "tool_calls" and first.content == ""
        assert first.tool_calls is not None
        paris, tokyo = first.tool_calls
        assert (paris.name, paris.arguments, tokyo.arguments) == ("get_weather", {"city": "Paris"},
                                                                  {"city": "Tokyo"})
        assert paris.id != tokyo.id
        final = run("chat_completion_with_tools",
                    [ChatMessage.user(question), assistant_message(first),
                     ChatMessage.tool(paris.id, '{"temp_c": 18, "sky": "cloudy"}'),
                     ChatMessage.tool(tokyo.id, '{"temp_c": 24, "sky": "clear"}')],
                    [WEATHER, CLOCK], model="gemini-3-flash-preview")
    declarations = sent_body(recorded)["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["get_weather", "get_time"]
    assert declarations[1]["parameters_json_schema"] == {"type": "object", "properties": {}}
    model_turn, results = sent_body(recorded, 1)["contents"][1:]
    assert model_turn["parts"][0]["functionCall"] == {"id": paris.id, "name": "get_weather", "args": {"city": "Paris"}}
    assert model_turn["parts"][0]["thoughtSignature"]  # replayed, or Gemini 3 rejects the turn
    assert "thoughtSignature" not in model_turn["parts"][1]
    assert results == {"role": "user", "parts": [
        {"functionResponse": {"id": paris.id, "name": "get_weather", "response": {"temp_c": 18, "sky": "cloudy"}}},
        {"functionResponse": {"id": tokyo.id, "name": "get_weather", "response": {"temp_c": 24, "sky": "clear"}}},
    ]}
    assert final.content == "Paris is 18 °C and cloudy; Tokyo is 24 °C and clear."
    assert final.finish_reason == "stop" and final.tool_calls is None


def test_tool_result_table_on_the_wire(run: Runner) -> None:
    calls = [ToolCall(id=f"slot_{i}", name="lookup", arguments={"key": str(i)}) for i in range(len(TOOL_RESULT_TABLE))]
    calls[0] = ToolCall(id="slot_0", name="lookup", arguments={})
    calls[1] = ToolCall(id="slot_1", name="lookup", arguments={"0": "zero", "1": "one"})
    messages = [ChatMessage.user("Look up the seven records."), ChatMessage.assistant(tool_calls=calls),
                *(ChatMessage.tool(c.id, out) for c, (out, _) in zip(calls, TOOL_RESULT_TABLE, strict=True))]
    with cassette("tools_result_slots") as recorded:
        response = run("chat_completion_with_tools", messages, [LOOKUP])
    model_turn, results = sent_body(recorded)["contents"][1:]
    assert model_turn["parts"][0]["functionCall"]["args"] == {}
    assert model_turn["parts"][1]["functionCall"]["args"] == {"0": "zero", "1": "one"}
    assert [p["functionResponse"]["response"] for p in results["parts"]] == [want for _, want in TOOL_RESULT_TABLE]
    assert calls[1].arguments == {"0": "zero", "1": "one"}  # the caller's data are unchanged
    assert response.content == "All seven records were retrieved."


def test_tool_choice_restricts_to_one_function(run: Runner) -> None:
    with cassette("tools_choice_named") as recorded:
        response = run("chat_completion_with_tools", "Check the weather in Oslo.", [WEATHER, CLOCK],
                       tool_choice="get_weather")
    assert sent_body(recorded)["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    assert response.tool_calls is not None and response.tool_calls[0].arguments == {"city": "Oslo"}
    assert response.metadata["thought_signatures"][0]["tool_call_id"] == response.tool_calls[0].id


def test_a_malformed_function_call_is_reported_not_hidden(run: Runner) -> None:
    with cassette("tools_malformed_call"):
        response = run("chat_completion_with_tools", "Check the weather in Oslo.", [WEATHER])
    assert response.finish_reason == "malformed_function_call"
    assert response.tool_calls is None and response.content == ""
    assert response.metadata["finish_reason"] == "MALFORMED_FUNCTION_CALL"


def test_invalid_tools_are_refused_before_sending(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="tool 0 is invalid"):
        provider.chat_completion_with_tools("x", [{"name": "bad name!"}])
    with pytest.raises(InvalidInputError, match="at least one tool"):
        provider.chat_completion_with_tools("x", [])
    assert sent == []
