"""Function tools: strict schemas, function_call items → tool calls, results as
function_call_output, parallel calls, reasoning replay across a tool round trip."""

from __future__ import annotations

import pytest

from llm_core.errors import InvalidRequestError, InvalidResponseError
from tests.openai.openai_scenarios import CITY_RESULTS, city_calls


async def test_function_calls_become_tool_calls_with_decoded_arguments(player):
    response = await player.play("tools_call")
    assert response.finish_reason == "tool_calls" and response.has_tool_calls
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_time", {"city": "Tokyo"})]
    assert response.tool_calls == city_calls()
    assert response.content == ""
    tools = player.sent()["tools"]
    assert [t["name"] for t in tools] == ["get_weather", "get_time"]
    assert all(t["type"] == "function" and t["strict"] is True for t in tools)


async def test_tool_results_go_back_as_function_call_output_items(player):
    response = await player.play("tools_round_trip")
    assert response.content == "It's 18 °C and sunny in Paris, and 21:05 in Tokyo."
    assert response.tool_calls is None and response.finish_reason == "stop"
    weather, clock = city_calls()
    items = player.sent()["input"][1:]
    assert items == [
        {"type": "function_call", "call_id": weather.id, "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call", "call_id": clock.id, "name": "get_time", "arguments": '{"city":"Tokyo"}'},
        {"type": "function_call_output", "call_id": weather.id, "output": CITY_RESULTS[0]},
        {"type": "function_call_output", "call_id": clock.id, "output": CITY_RESULTS[1]},
    ]


async def test_a_reasoning_model_gets_its_reasoning_back_with_the_tool_result(player):
    response = await player.play("tools_reasoning_round_trip")
    assert response.content == "No umbrella needed: it's sunny in Paris."
    first_output = player.answered(0)["output"]
    kinds = [item.get("type", "message") for item in player.sent(1)["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    replayed = player.sent(1)["input"][1]
    assert replayed["id"] == first_output[0]["id"]
    assert replayed["encrypted_content"] == first_output[0]["encrypted_content"]
    assert player.sent(1)["input"][2]["call_id"] == first_output[1]["call_id"]


async def test_tool_choice_forces_one_function(player):
    response = await player.play("tools_forced")
    assert [c.name for c in response.tool_calls] == ["get_weather"]
    sent = player.sent()
    assert sent["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert sent["parallel_tool_calls"] is False


async def test_a_rejected_tool_schema_is_an_invalid_request(player):
    with pytest.raises(InvalidRequestError, match="invalid_function_parameters") as caught:
        await player.play("tools_invalid_schema")
    assert caught.value.status_code == 400


async def test_undecodable_arguments_are_an_invalid_response(player):
    with pytest.raises(InvalidResponseError, match="search") as caught:
        await player.play("tools_bad_arguments")
    assert caught.value.raw == '{"query": "weather Paris'
    assert player.sent()["tools"][0]["strict"] is False  # an open schema cannot be strict
