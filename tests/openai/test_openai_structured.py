"""generate_json: a Pydantic model's strict schema (the one responses.parse would send),
JSON schema dicts, JSON mode."""

from __future__ import annotations

import pytest

from llm_core.errors import InvalidResponseError
from llm_core.streaming import StreamEventType
from tests.openai.openai_scenarios import PLANETS, City

CITY_FORMAT = {
    "type": "json_schema", "strict": True, "name": "City",
    "schema": {"properties": {"city": {"title": "City", "type": "string"},
                              "country": {"title": "Country", "type": "string"}},
               "required": ["city", "country"], "title": "City", "type": "object", "additionalProperties": False},
}


async def test_a_pydantic_schema_is_sent_as_its_strict_json_schema(player):
    city = await player.play("json_model")
    assert city == City(city="Tokyo", country="Japan")
    sent = player.sent()
    assert sent["text"] == {"format": CITY_FORMAT}  # the strict schema responses.parse builds
    assert sent["store"] is False


async def test_parse_with_a_reasoning_model(player):
    city = await player.play("json_reasoning")
    assert city.city == "Tokyo"
    sent = player.sent()
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"} and sent["text"] == {"format": CITY_FORMAT}


async def test_json_mode_without_schema(player):
    data = await player.play("json_mode")
    assert data == {"colours": ["red", "yellow", "blue"]}
    sent = player.sent()
    assert sent["text"] == {"format": {"type": "json_object"}}
    assert sent["instructions"] == "Answer in JSON."  # JSON mode needs the word in the input


async def test_a_dict_schema_is_a_strict_json_schema_format(player):
    data = await player.play("json_dict_schema")
    assert data == {"planets": ["Mars", "Venus"]}
    assert player.sent()["text"] == {"format": {"type": "json_schema", "name": "Planets", "schema": PLANETS,
                                                "strict": True}}


async def test_a_refusal_is_an_invalid_response_with_the_refusal_text(player):
    with pytest.raises(InvalidResponseError, match="refused") as caught:
        await player.play("json_refusal")
    assert caught.value.raw == "I'm sorry, I can't help with that request."


async def test_unparsable_output_is_an_invalid_response_with_the_raw_text(player):
    with pytest.raises(InvalidResponseError, match="cut off") as caught:
        await player.play("json_truncated")
    assert caught.value.raw == '{"city":"Tok'
    assert player.sent()["max_output_tokens"] == 8


async def test_a_streamed_schema_is_sent_as_the_call_sends_it(player):
    events = await player.play("json_stream")
    text = "".join(e.text for e in events if e.type is StreamEventType.TOKEN)
    assert City.model_validate_json(text) == City(city="Tokyo", country="Japan")
    assert player.sent()["text"] == {"format": CITY_FORMAT} and player.sent()["stream"] is True


async def test_a_json_call_is_retried_like_any_call(player):
    city = await player.play("json_model_429")
    assert city.city == "Tokyo"
    assert player.sleeps == [1.0] and player.cassette.play_count == 2
