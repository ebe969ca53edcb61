"""TestProvider answers every capability with valid output derived from the request;
FunctionProvider answers from the application's function."""

from __future__ import annotations

import asyncio
import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from llm_core.decisions import parse_questions, validate_answers
from llm_core.features import Feature
from llm_core.messages import ChatMessage
from llm_core.streaming import StreamEventType
from llm_core.testing import CallInfo, FunctionProvider, TestProvider
from llm_core.testing.schema_values import value_for
from llm_core.tools import ToolCall, ToolSpec


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


class Owner(BaseModel):
    name: str = Field(min_length=3)
    email: str | None = None


class Pet(BaseModel):
    name: str
    age: int = Field(ge=2, le=30)
    weight: float = Field(gt=0.5)
    colour: Colour
    kind: Literal["dog", "cat"]
    born: datetime.date
    tags: list[str] = Field(min_length=2)
    owner: Owner
    vaccinated: bool


def test_generate_json_is_valid_for_a_pydantic_model() -> None:
    pet = TestProvider().generate_json("Invent a pet", Pet)
    assert isinstance(pet, Pet)
    assert pet.age >= 2 and pet.weight > 0.5 and len(pet.tags) == 2 and len(pet.owner.name) >= 3


def test_generate_json_for_a_json_schema_and_without_one() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5, "multipleOf": 3}},
        "required": ["n"],
    }
    assert TestProvider().generate_json("A number", schema) == {"n": 6}
    assert TestProvider(text="fine").generate_json("Anything") == {"response": "fine"}


def test_every_value_validates_against_its_schema() -> None:
    for model in (Pet, Owner):
        model.model_validate(value_for(model.model_json_schema()))


def test_tools_are_called_with_arguments_matching_their_schema_then_text() -> None:
    class Weather(BaseModel):
        city: str
        days: int = Field(ge=1)
        unit: Literal["C", "F"]

    tool = ToolSpec(name="get_weather", parameters=Weather.model_json_schema())
    other = ToolSpec(name="get_time", parameters={"type": "object", "properties": {"zone": {"type": "string"}}})
    provider = TestProvider()
    first = provider.chat_completion_with_tools("Weather in Paris?", [tool, other])
    assert [c.name for c in first.tool_calls or ()] == ["get_weather", "get_time"]
    Weather.model_validate(first.tool_calls[0].arguments)  # type: ignore[index]
    results = [
        ChatMessage.user("Weather in Paris?"),
        ChatMessage(role="assistant", content="", tool_calls=first.tool_calls),
        ChatMessage(role="tool", content="sunny", tool_call_id="call_0", name="get_weather"),
    ]
    second = provider.chat_completion_with_tools(results, [tool, other])
    assert second.tool_calls is None and second.content == '{"get_weather": "sunny"}'
    only = TestProvider(call_tools=["get_time"]).chat_completion_with_tools("Time?", [tool, other])
    assert [c.name for c in only.tool_calls or ()] == ["get_time"]


def test_a_conversation_with_output_gets_a_valid_structured_answer() -> None:
    calls: list[str] = []

    def lookup(city: str) -> str:
        """The weather of a city."""
        calls.append(city)
        return "sunny"

    reply = TestProvider().conversation(tools=[lookup]).send("Weather?", output=Owner)
    assert isinstance(reply.output, Owner) and len(reply.output.name) >= 3
    assert calls == ["a"]


def test_decisions_are_valid_answers() -> None:
    questions = [
        {"key": "is_bug", "kind": "yes_no", "instructions": "A bug?"},
        {"key": "area", "kind": "choice", "instructions": "Where?", "options": ["ui", "api"]},
    ]
    response = TestProvider().decide({"task": "triage"}, questions)
    validate_answers(parse_questions(questions), response.answers, provider="test")


def test_embeddings_have_the_right_dimension_and_are_deterministic() -> None:
    provider = TestProvider(embedding_dimensions=12)
    vectors = provider.embeddings(["a", "b"]).vectors
    assert [len(v) for v in vectors] == [12, 12] and vectors[0] != vectors[1]
    assert provider.embeddings(["a"], dimensions=40).vectors[0][:12] == vectors[0][:12]
    assert len(provider.embeddings(["a"], dimensions=40).vectors[0]) == 40
    assert TestProvider(embedding_dimensions=12).embeddings(["a"]).vectors == [vectors[0]]


def test_streams_thinking_and_async_alike() -> None:
    provider = TestProvider(text="one two")
    events = list(provider.stream_chat_completion("hi", thinking=True))
    tokens = [(e.text, e.is_thinking) for e in events if e.type is StreamEventType.TOKEN]
    assert tokens == [("thinking about it", True), ("one ", False), ("two", False)]
    assert events[-1].type is StreamEventType.END
    assert asyncio.run(provider.aio.chat_completion("hi")).content == "one two"
    assert provider.supports_feature(Feature.VISION) and provider.requests[-1]["operation"] == "chat"


def test_function_provider_sees_messages_and_tools() -> None:
    seen: list[tuple[list[Any], CallInfo]] = []

    def answer(messages: list[ChatMessage], info: CallInfo) -> str | list[ToolCall]:
        seen.append((messages, info))
        if info.tools and not any(m.role.value == "tool" for m in messages):
            return [ToolCall(id="1", name=info.tools[0].name, arguments={"city": "Oslo"})]
        return f"{len(messages)} messages"

    provider = FunctionProvider(answer)
    tool = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
    called = provider.chat_completion_with_tools("Weather?", [tool], temperature=0.1)
    assert called.tool_calls == [ToolCall(id="1", name="get_weather", arguments={"city": "Oslo"})]
    messages, info = seen[0]
    assert messages[0].text == "Weather?" and info.tools == [tool] and info.model == "fake-model"
    assert provider.chat_completion([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]).content == (
        "2 messages"
    )
    streamed = "".join(e.text or "" for e in provider.stream_chat_completion("x") if e.type is StreamEventType.TOKEN)
    assert streamed == "1 messages"
    schema_seen = FunctionProvider(lambda m, i: '{"name": "Bob"}')
    assert schema_seen.generate_json("who?", Owner) == Owner(name="Bob")
