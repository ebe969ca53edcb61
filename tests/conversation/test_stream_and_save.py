"""A streamed tool loop (event order, sync and async, failures) and save/resume through JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from llm_core import InvalidInputError, MaxStepsError, ServerError, StreamEvent, StreamEventType, ToolCall
from llm_core.conversation import Conversation
from llm_core.testing import FakeProvider, FakeReply

T = StreamEventType


def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return f"{city}: sunny"


def script() -> list[FakeReply]:
    return [
        FakeReply(
            content="Checking.",
            thinking="Two cities.",
            tool_calls=[
                ToolCall(id="p", name="get_weather", arguments={"city": "Paris"}),
                ToolCall(id="a", name="get_weather", arguments={"city": "Atlantis"}),
            ],
            metadata={"signature": "c2lnLTE="},
        ),
        FakeReply(content="Paris is sunny.", metadata={"signature": "c2lnLTI="}),
    ]


def kinds(events: list[StreamEvent]) -> list[str]:
    return [e.type.value for e in events]


EXPECTED = [
    "TOKEN", "TOKEN", "METADATA",  # turn 1: thinking, text, its metadata
    "TOOL_CALL", "TOOL_CALL", "TOOL_RESULT", "TOOL_RESULT",  # calls, then results, in call order
    "TOKEN", "TOKEN", "TOKEN", "METADATA",  # turn 2
    "END",
]  # fmt: skip


def check_loop(events: list[StreamEvent], chat: Any) -> None:
    assert kinds(events) == EXPECTED
    calls = [e.tool_call for e in events if e.type is T.TOOL_CALL]
    assert [(c.id, c.arguments) for c in calls if c] == [("p", {"city": "Paris"}), ("a", {"city": "Atlantis"})]
    results = [e for e in events if e.type is T.TOOL_RESULT]
    assert [(r.tool_call.id if r.tool_call else None, r.text) for r in results] == [
        ("p", "Paris: sunny"),
        ("a", '{"error": "LookupError: no such city"}'),
    ]
    assert results[0].error is None and results[1].error is not None
    assert "no such city" in str(results[1].error)
    assert "".join(e.text or "" for e in events[7:10]) == "Paris is sunny."
    assert [m.role.value for m in chat.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    first = chat.messages[1]
    assert first.content == "Checking." and first.metadata["signature"] == "c2lnLTE="  # replay data kept
    assert chat.responses[0].thinking == "Two cities."


def test_stream_event_order_sync() -> None:
    fake = FakeProvider(replies=script())
    chat = fake.conversation(tools=[get_weather])
    events = list(chat.stream("Paris and Atlantis?"))
    check_loop(events, chat)
    assert fake.requests[1]["messages"][1]["metadata"]["signature"] == "c2lnLTE="  # sent back


def test_stream_event_order_async() -> None:
    fake = FakeProvider(replies=script())

    async def run() -> tuple[Any, list[StreamEvent]]:
        chat = fake.aio.conversation(tools=[get_weather])
        return chat, [e async for e in chat.stream("Paris and Atlantis?")]

    chat, events = asyncio.run(run())
    check_loop(events, chat)


def test_a_failing_turn_ends_with_error_then_end() -> None:
    fake = FakeProvider(
        replies=[
            FakeReply(tool_calls=[ToolCall(id="p", name="get_weather", arguments={"city": "Paris"})]),
            FakeReply(content="Paris is", stream_error=ServerError("down", provider="fake"), stream_error_after=1),
        ]
    )
    events = list(fake.conversation(tools=[get_weather]).stream("Paris?"))
    assert kinds(events) == ["METADATA", "TOOL_CALL", "TOOL_RESULT", "TOKEN", "ERROR", "END"]
    assert isinstance(events[-2].error, ServerError)


def test_max_steps_in_a_stream_is_an_error_event() -> None:
    looping = FakeReply(tool_calls=[ToolCall(id="p", name="get_weather", arguments={"city": "Paris"})])
    fake = FakeProvider(replies=[looping, looping])
    chat = fake.conversation(tools=[get_weather], max_steps=2)
    events = list(chat.stream("Paris?"))
    assert kinds(events) == ["METADATA", "TOOL_CALL", "TOOL_RESULT"] * 2 + ["ERROR", "END"]
    assert isinstance(events[-2].error, MaxStepsError) and events[-2].error.conversation is chat


def test_an_invalid_message_raises_at_the_call() -> None:
    chat = FakeProvider().conversation()
    with pytest.raises(InvalidInputError):
        chat.stream("   ")


def test_save_and_resume_through_json() -> None:
    fake = FakeProvider(replies=script())
    chat = fake.conversation(system="Be brief.", tools=[get_weather], temperature=0.2, max_steps=4)
    chat.send("Paris and Atlantis?")
    saved = chat.to_json()
    data = json.loads(saved)
    assert data["tools"] == ["get_weather"] and data["options"] == {"temperature": 0.2}
    assert data["messages"][2]["metadata"] == {"signature": "c2lnLTE=", "answered_by": "fake"}

    other = FakeProvider(replies=[FakeReply(content="Still sunny.")])
    resumed = Conversation.from_json(saved, provider=other, tools=[get_weather])
    assert resumed.messages == chat.messages
    assert resumed.usage == chat.usage
    assert (resumed.system, resumed.max_steps, resumed.options) == ("Be brief.", 4, {"temperature": 0.2})
    assert resumed.send("And now?").content == "Still sunny."
    sent = other.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert sent[2]["metadata"]["signature"] == "c2lnLTE="  # the same provider gets its replay data back
    assert other.requests[0]["temperature"] == 0.2

    async def resume_async() -> str:
        again = FakeProvider(replies=[FakeReply(content="async")])
        from llm_core.conversation import AsyncConversation

        conversation = AsyncConversation.from_json(json.loads(saved), provider=again.aio, tools=[get_weather])
        return (await conversation.send("Async?")).content

    assert asyncio.run(resume_async()) == "async"


@pytest.mark.parametrize("data", ["not json", "{}", '{"format": "llm-core.conversation/1"}'])
def test_from_json_refuses_what_is_no_saved_conversation(data: str) -> None:
    with pytest.raises(InvalidInputError, match="from_json"):
        Conversation.from_json(data, provider=FakeProvider())


def test_options_that_are_no_json_cannot_be_saved() -> None:
    chat = FakeProvider().conversation(thinking=object())
    with pytest.raises(InvalidInputError, match="cannot be saved as JSON"):
        chat.to_json()
