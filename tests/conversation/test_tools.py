"""Python functions as tools: the schema the model sees, validation, and bad input refused at
``conversation(...)`` before any request."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from llm_core import InvalidInputError, ToolSpec
from llm_core.conversation import tool_from_function
from llm_core.testing import FakeProvider


class Address(BaseModel):
    street: str
    city: str


def get_weather(
    city: Annotated[str, Field(description="City name, e.g. Paris")],
    unit: Literal["C", "F"] = "C",
    days: int = Field(1, ge=1, le=7, description="How many days"),
) -> str:
    """Current weather for a city.

    Returns the temperature and the sky."""
    return f"{city}: 18 {unit}"


async def ship(order_id: int, to: Address) -> dict[str, Any]:
    """Ship an order."""
    return {"order": order_id, "city": to.city}


def test_function_schema_from_signature_and_docstring() -> None:
    tool = tool_from_function(get_weather)
    assert tool.spec.name == "get_weather"
    assert tool.spec.description == "Current weather for a city.\n\nReturns the temperature and the sky."
    assert tool.spec.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1, "description": "How many days"},
        },
        "required": ["city"],
    }
    assert not tool.is_async


def test_async_function_and_nested_model() -> None:
    tool = tool_from_function(ship)
    assert tool.is_async
    assert tool.spec.parameters["properties"]["to"] == {"$ref": "#/$defs/Address"}
    assert set(tool.spec.parameters["$defs"]["Address"]["properties"]) == {"street", "city"}


def test_arguments_are_validated_against_the_signature() -> None:
    from llm_core.conversation.tools import ToolArgumentsError
    from llm_core.tools import ToolCall

    tool = tool_from_function(get_weather)
    assert tool.bind(ToolCall(id="1", name="get_weather", arguments={"city": "Paris", "days": "3"})) == {
        "city": "Paris",
        "unit": "C",
        "days": 3,
    }
    with pytest.raises(ToolArgumentsError, match="days: Input should be less than or equal to 7"):
        tool.bind(ToolCall(id="1", name="get_weather", arguments={"city": "Paris", "days": 9}))
    with pytest.raises(ToolArgumentsError, match="city: Field required"):
        tool.bind(ToolCall(id="1", name="get_weather", arguments={}))
    with pytest.raises(ToolArgumentsError, match="wind: Extra inputs are not permitted"):
        tool.bind(ToolCall(id="1", name="get_weather", arguments={"city": "Paris", "wind": 1}))


def _takes_socket(connection: socket.socket) -> str:
    return "x"


def _takes_callback(callback: Callable[[int], int]) -> str:
    return "x"


def _star_args(*cities: str) -> str:
    return "x"


def _kwargs(**options: str) -> str:
    return "x"


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([_takes_socket], "'_takes_socket' cannot become a tool"),
        ([_takes_callback], "'_takes_callback' cannot become a tool"),
        ([_star_args], r"\*cities cannot become a JSON schema"),
        ([_kwargs], r"\*options cannot become a JSON schema"),
        ([get_weather, get_weather], "'get_weather' is given twice"),
        ([get_weather, ToolSpec(name="get_weather")], "'get_weather' is given twice"),
        (["get_weather"], r"tools\[0\] is a str"),
        ([get_weather, 42], r"tools\[1\] is a int"),
        ([Address], r"tools\[0\] is a ModelMetaclass"),
        ("get_weather", "tools must be a list"),
    ],
)
def test_bad_tools_are_refused_before_any_request(fake: FakeProvider, tools: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        fake.conversation(tools=tools)
    with pytest.raises(InvalidInputError, match=message):
        fake.aio.conversation(tools=tools)
    assert fake.requests == []


def test_existing_tool_specs_with_and_without_handler(fake: FakeProvider) -> None:
    def handler(city: str) -> str:
        return city

    chat = fake.conversation(tools=[ToolSpec(name="echo", handler=handler), ToolSpec(name="manual")])
    assert chat.tools["echo"].handler is handler
    assert chat.tools["echo"].spec.handler is None  # what is sent carries no function
    assert chat.tools["manual"].handler is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_steps": 0}, "max_steps must be a positive integer"),
        ({"tool_retries": -1}, "tool_retries must be 0 or more"),
        ({"before_tool_call": "yes"}, "before_tool_call must be a function"),
        ({"tool_choice": "auto"}, "tool_choice= is not a call option"),
    ],
)
def test_bad_settings_are_refused(fake: FakeProvider, options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        fake.conversation(**options)
