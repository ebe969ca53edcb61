"""The tool loop over the fake provider: steps, history, usage, failures fed back, approvals,
max_steps, structured output, and the async twin (concurrent calls)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from llm_core import (
    ChatMessage,
    InvalidInputError,
    InvalidResponseError,
    MaxStepsError,
    ToolCall,
    ToolDecision,
    ToolExecutionError,
    ToolSpec,
    UnsupportedFeatureError,
    Usage,
)
from llm_core.conversation import AsyncConversation, Conversation, ConversationResponse
from llm_core.features import Feature
from llm_core.testing import FakeProvider, FakeReply, fake_spec

CALLS: list[str] = []


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    CALLS.append(city)
    if city == "Atlantis":
        raise LookupError("no such city")
    return {"city": city, "temp_c": 18}


def local_time(city: str) -> str:
    """Local time in a city."""
    return "09:30"


@pytest.fixture(autouse=True)
def _calls() -> None:
    CALLS.clear()


def call(tool: str, call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=tool, arguments=arguments)


def sent_roles(fake: FakeProvider, index: int) -> list[str]:
    return [m["role"] for m in fake.requests[index]["messages"]]


def test_a_three_step_loop_keeps_the_whole_history(fake: FakeProvider) -> None:
    fake.script(
        FakeReply(
            tool_calls=[call("get_weather", "c1", city="Paris")], usage=Usage(prompt_tokens=10, completion_tokens=2)
        ),
        FakeReply(
            tool_calls=[call("local_time", "c2", city="Paris")], usage=Usage(prompt_tokens=20, completion_tokens=3)
        ),
        FakeReply(content="18 °C at 09:30.", usage=Usage(prompt_tokens=30, completion_tokens=5, thinking_tokens=4)),
    )
    chat = fake.conversation(system="Be brief.", tools=[get_weather, local_time])
    response = chat.send("Weather and time in Paris?")
    assert isinstance(response, ConversationResponse)
    assert response.content == "18 °C at 09:30."
    assert [step.finish_reason for step in response.steps] == ["tool_calls", "tool_calls", "stop"]
    assert [m.role.value for m in chat.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert chat.messages[3] == ChatMessage.tool("c1", '{"city":"Paris","temp_c":18}', name="get_weather")
    assert chat.messages[5].content == "09:30"
    assert chat.usage == Usage(prompt_tokens=60, completion_tokens=10, total_tokens=74, thinking_tokens=4)
    assert len(fake.requests) == 3
    assert fake.requests[2]["tools"] == ["get_weather", "local_time"]
    assert sent_roles(fake, 2) == ["system", "user", "assistant", "tool", "assistant", "tool"]
    # the next send continues the same history
    fake.script(FakeReply(content="You're welcome."))
    chat.send("Thanks!")
    assert sent_roles(fake, 3)[-2:] == ["assistant", "user"]
    assert len(chat.responses) == 4


def test_parallel_calls_run_in_call_order_and_results_match_by_id(fake: FakeProvider) -> None:
    fake.script(
        FakeReply(tool_calls=[call("get_weather", "b", city="Tokyo"), call("get_weather", "a", city="Paris")]),
        FakeReply(content="done"),
    )
    fake.conversation(tools=[get_weather]).send("Tokyo and Paris?")
    assert CALLS == ["Tokyo", "Paris"]
    tool_turns = fake.requests[1]["messages"][2:]
    assert [(m["tool_call_id"], m["content"]) for m in tool_turns] == [
        ("b", '{"city":"Tokyo","temp_c":18}'),
        ("a", '{"city":"Paris","temp_c":18}'),
    ]


def test_invalid_arguments_and_exceptions_go_back_to_the_model(fake: FakeProvider) -> None:
    fake.script(
        FakeReply(tool_calls=[call("get_weather", "c1", town="Paris"), call("get_weather", "c2", city="Atlantis")]),
        FakeReply(tool_calls=[call("get_weather", "c3", city="Paris")]),
        FakeReply(content="Paris is 18 °C."),
    )
    chat = fake.conversation(tools=[get_weather])
    assert chat.send("Weather?").content == "Paris is 18 °C."
    results = [m for m in chat.messages if m.role.value == "tool"]
    assert results[0].content == (
        '{"error": "invalid arguments: city: Field required; town: Extra inputs are not permitted"}'
    )
    assert results[1].content == '{"error": "LookupError: no such city"}'
    assert CALLS == ["Atlantis", "Paris"]  # the invalid call never ran


def test_a_tool_out_of_retries_raises_with_the_conversation(fake: FakeProvider) -> None:
    failing = FakeReply(tool_calls=[call("get_weather", "x", city="Atlantis")])
    fake.script(failing, failing, failing)
    chat = fake.conversation(tools=[get_weather], tool_retries=1)
    with pytest.raises(ToolExecutionError, match="'get_weather' failed 2 times: no such city") as caught:
        chat.send("Atlantis?")
    assert caught.value.conversation is chat
    assert caught.value.call.arguments == {"city": "Atlantis"}
    assert isinstance(caught.value.__cause__, LookupError)
    assert len(fake.requests) == 2


def test_raise_tool_errors_raises_at_the_first_failure(fake: FakeProvider) -> None:
    fake.script(FakeReply(tool_calls=[call("get_weather", "x", city="Atlantis")]))
    chat = fake.conversation(tools=[get_weather], raise_tool_errors=True)
    with pytest.raises(ToolExecutionError) as caught:
        chat.send("Atlantis?")
    assert isinstance(caught.value.__cause__, LookupError)
    assert len(fake.requests) == 1


def test_unknown_tool_names_are_reported_to_the_model(fake: FakeProvider) -> None:
    fake.script(FakeReply(tool_calls=[call("get_wether", "x", city="Paris")]), FakeReply(content="ok"))
    chat = fake.conversation(tools=[get_weather])
    chat.send("Paris?")
    assert chat.messages[2].content == '{"error": "there is no tool named \'get_wether\' (tools: get_weather)"}'


def test_approval_hook_allows_denies_and_replaces(fake: FakeProvider) -> None:
    seen: list[str] = []

    def approve(request: ToolCall) -> Any:
        seen.append(request.id)
        return {"a": True, "b": ToolDecision.deny("not on weekends"), "c": {"city": "Lyon"}, "d": None}[request.id]

    fake.script(
        FakeReply(
            tool_calls=[
                call("get_weather", "a", city="Paris"),
                call("get_weather", "b", city="Oslo"),
                call("get_weather", "c", city="Nice"),
                call("get_weather", "d", city="Rome"),
            ]
        ),
        FakeReply(content="ok"),
    )
    chat = fake.conversation(tools=[get_weather], before_tool_call=approve, tool_retries=0)
    chat.send("Four cities?")
    assert seen == ["a", "b", "c", "d"]
    assert CALLS == ["Paris", "Lyon", "Rome"]
    outputs = {m.tool_call_id: m.content for m in chat.messages if m.role.value == "tool"}
    assert outputs["b"] == '{"error": "the call was denied: not on weekends"}'
    assert outputs["c"] == '{"city":"Lyon","temp_c":18}'


def test_max_steps_raises_with_the_conversation_and_send_goes_on(fake: FakeProvider) -> None:
    fake.script(*(FakeReply(tool_calls=[call("local_time", f"t{i}", city="Oslo")]) for i in range(2)))
    chat = fake.conversation(tools=[local_time], max_steps=2)
    with pytest.raises(MaxStepsError, match="after max_steps=2") as caught:
        chat.send("Time?")
    assert caught.value.conversation is chat
    assert chat.pending_calls == []  # the last calls ran: the history can go to any provider
    assert [m.role.value for m in chat.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    fake.script(FakeReply(content="09:30"))
    assert chat.send().content == "09:30"
    assert sent_roles(fake, 2) == ["user", "assistant", "tool", "assistant", "tool"]


def test_tool_specs_without_handler_wait_for_the_application(fake: FakeProvider) -> None:
    def echo(text: str) -> str:
        return text

    fake.script(
        FakeReply(tool_calls=[call("echo", "e", text="hi"), call("book", "m", room="A")]), FakeReply(content="booked")
    )
    chat = fake.conversation(tools=[ToolSpec(name="echo", handler=echo), ToolSpec(name="book")])
    response = chat.send("Echo and book")
    assert response.finish_reason == "tool_calls"
    assert [c.id for c in chat.pending_calls] == ["m"]
    with pytest.raises(InvalidInputError, match="no pending tool call"):
        chat.add_tool_result("e", "x")
    chat.add_tool_result("m", {"booked": True})
    assert chat.send().content == "booked"
    assert [m["content"] for m in fake.requests[1]["messages"][2:]] == ["hi", '{"booked":true}']


class City(BaseModel):
    name: str
    country: str


def test_output_model_ends_the_loop_with_a_validated_answer(fake: FakeProvider) -> None:
    fake.script(
        FakeReply(tool_calls=[call("get_weather", "w", city="Paris")]),
        FakeReply(tool_calls=[call("final_result", "f1", name="Paris")]),  # invalid: fed back
        FakeReply(tool_calls=[call("final_result", "f2", name="Paris", country="France")]),
    )
    chat = fake.conversation(tools=[get_weather])
    response = chat.send("Which city?", output=City)
    assert response.output == City(name="Paris", country="France")
    assert fake.requests[0]["tools"] == ["get_weather", "final_result"]
    assert "country: Field required" in chat.messages[4].content
    assert chat.messages[-1].content == "Final result received."
    fake.script(FakeReply(content='{"name": "Lyon", "country": "France"}'))
    assert chat.send("Another?", output=City).output == City(name="Lyon", country="France")
    fake.script(FakeReply(content="Lyon!"))
    with pytest.raises(InvalidResponseError, match="without calling final_result"):
        chat.send("And?", output=City)


def test_a_provider_without_tools_is_refused_up_front() -> None:
    plain = FakeProvider(spec=fake_spec("plain", features={Feature.CHAT, Feature.STREAMING}))
    with pytest.raises(UnsupportedFeatureError, match="does not support tools"):
        plain.conversation(tools=[get_weather])
    with pytest.raises(UnsupportedFeatureError, match="does not support thinking"):
        plain.conversation(thinking=True)
    plain.script(FakeReply(content="hello"))
    assert plain.conversation().send("hi").content == "hello"  # no tools: a plain chat


def test_bad_messages_are_refused(fake: FakeProvider) -> None:
    chat = fake.conversation()
    for bad in ("  ", ChatMessage.system("x"), 42, []):
        with pytest.raises(InvalidInputError):
            chat.send(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="nothing to continue"):
        chat.send()
    assert fake.requests == []


# -- async -------------------------------------------------------------------------------------


def test_async_calls_of_one_turn_run_concurrently(fake: FakeProvider) -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def slow_lookup(key: str) -> str:
        """Look a key up."""
        started.append(key)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), timeout=2)  # only returns when the other call runs too
        return key.upper()

    def blocking_lookup(key: str) -> str:
        """Look a key up (blocking)."""
        return key * 2

    fake.script(
        FakeReply(
            tool_calls=[
                call("slow_lookup", "1", key="a"),
                call("blocking_lookup", "2", key="b"),
                call("slow_lookup", "3", key="c"),
            ]
        ),
        FakeReply(content="A bb C"),
    )

    async def run() -> tuple[AsyncConversation, Any]:
        chat = fake.aio.conversation(tools=[slow_lookup, blocking_lookup])
        return chat, await chat.send("Look up a, b, c")

    chat, response = asyncio.run(run())
    assert response.content == "A bb C"
    assert [m.content for m in chat.messages if m.role.value == "tool"] == ["A", "bb", "C"]
    assert [m.tool_call_id for m in chat.messages if m.role.value == "tool"] == ["1", "2", "3"]


def test_async_hook_and_output(fake: FakeProvider) -> None:
    async def approve(request: ToolCall) -> ToolDecision:
        return ToolDecision.allow()

    fake.script(
        FakeReply(tool_calls=[call("get_weather", "w", city="Paris")]),
        FakeReply(tool_calls=[call("final_result", "f", name="Paris", country="France")]),
    )

    async def run() -> Any:
        chat = fake.aio.conversation(tools=[get_weather], before_tool_call=approve)
        return await chat.send("Which city?", output=City)

    assert asyncio.run(run()).output == City(name="Paris", country="France")
    assert CALLS == ["Paris"]


def test_sync_and_async_conversations_send_the_same_requests() -> None:
    def script() -> list[FakeReply]:
        return [
            FakeReply(tool_calls=[call("get_weather", "x", city="Atlantis"), call("local_time", "y", city="Oslo")]),
            FakeReply(content="done"),
        ]

    sync_fake, async_fake = FakeProvider(replies=script()), FakeProvider(replies=script())
    sync_chat: Conversation = sync_fake.conversation(tools=[get_weather, local_time], system="S")
    sync_chat.send("Go")

    async def run() -> AsyncConversation:
        chat = async_fake.aio.conversation(tools=[get_weather, local_time], system="S")
        await chat.send("Go")
        return chat

    async_chat = asyncio.run(run())
    assert sync_fake.requests == async_fake.requests
    assert sync_chat.messages == async_chat.messages
