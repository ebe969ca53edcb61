"""The one JSON-schema ``text.format`` of a Pydantic model: the request the openai SDK's own
``responses.parse(text_format=Model)`` sends, built without the SDK, and the same for a call, a
stream and a batch line."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

import httpx2
import pytest
from pydantic import BaseModel, Field

from core_openai_plugin.schemas import is_strict_schema, strict_json_schema, text_format
from tests.openai.openai_scenarios import City, make_provider

T = TypeVar("T")


class Unit(StrEnum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Reading(BaseModel):
    value: float
    unit: Unit


class Station(BaseModel):
    """A weather station."""

    name: str = Field(description="The station's name.")
    elevation: int = 0
    note: str | None = None
    latest: Reading = Field(description="The newest reading.")  # a $ref beside a description
    history: list[Reading]
    kind: Literal["manual", "automatic"]


class Node(BaseModel):  # recursive: the root itself is a $ref into $defs
    label: str
    children: list[Node]


class Cat(BaseModel):
    meows: bool


class Dog(BaseModel):
    barks: bool


class Pet(BaseModel):
    pet: Cat | Dog
    owner: City | None


class Kept(Exception):
    """The request was kept and never sent."""


def sent_by_responses_parse(model: type[BaseModel]) -> Any:
    """The ``text.format`` the SDK's public ``responses.parse`` puts on the wire. The transport
    keeps the request and fails it, so no response shape is needed."""
    from openai import OpenAI

    bodies: list[Any] = []

    def keep(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        raise Kept

    client = OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=0,
                    http_client=httpx2.Client(transport=httpx2.MockTransport(keep)))
    with pytest.raises(Kept):
        client.responses.parse(model="gpt-4.1", input="Hi", text_format=model)
    (body,) = bodies
    return body["text"]["format"]


@pytest.mark.parametrize("model", [City, Station, Node, Pet])
def test_a_model_is_sent_as_responses_parse_sends_it(model):
    assert text_format(model) == sent_by_responses_parse(model)


@pytest.mark.parametrize("model", [City, Station, Node, Pet])
def test_a_models_schema_is_strict_and_its_own_schema_stays_untouched(model):
    before = model.model_json_schema()
    schema = strict_json_schema(model)
    assert is_strict_schema(schema) and text_format(model)["strict"] is True
    assert model.model_json_schema() == before


def test_optional_fields_are_required_and_nullable_with_no_null_default():
    note = strict_json_schema(Station)["properties"]["note"]
    assert note == {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Note"}
    assert strict_json_schema(Station)["required"] == list(Station.model_fields)


def test_an_open_mapping_field_makes_the_format_not_strict():
    class Counts(BaseModel):
        counts: dict[str, int]

    fmt = text_format(Counts)
    assert fmt["schema"]["properties"]["counts"] == {"additionalProperties": {"type": "integer"},
                                                      "title": "Counts", "type": "object"}
    assert fmt["strict"] is False  # strict mode would refuse the open object: it is sent, not refused


def test_the_name_follows_the_api_rule():
    class Page(BaseModel, Generic[T]):
        items: list[T]

    assert text_format(Page[City])["name"] == "Page_City_"  # a-z, A-Z, 0-9, _ and -, at most 64


def test_call_stream_and_batch_send_the_same_format():
    provider = make_provider()
    request = provider.builder.json("Largest city in Japan?", City, model="gpt-4.1")
    call = provider.map_chat_request(request)
    assert call["text"] == {"format": text_format(City)} and "text_format" not in call
    batch = provider.batch.map_batch_request("generate", [("a", call)], "tag")
    (line,) = batch["file"][1].decode().splitlines()
    assert json.loads(line)["body"] == call  # the stream sends the same keywords with stream=True
