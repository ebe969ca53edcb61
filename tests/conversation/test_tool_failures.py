"""A tool whose result cannot be serialised, or whose exception cannot be shown, is the tool's
failure, alike for ``send`` and ``stream`` (sync and async): an error result the model is told,
or with ``raise_tool_errors`` a :class:`ToolExecutionError` (a stream ends ``ERROR``, ``END``).
The loop's errors pickle, whatever tools the conversation holds."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest

from llm_core import InvalidInputError, MaxStepsError, ToolCall, ToolExecutionError, ToolSpec
from llm_core.conversation.tools import ToolOutputError
from llm_core.streaming import StreamEventType
from llm_core.testing import FakeProvider, FakeReply


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("str() fails")

    __repr__ = __str__


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() fails")


def circular() -> dict[str, Any]:
    """Returns a dict that holds itself."""
    value: dict[str, Any] = {}
    value["self"] = value
    return value


def unprintable() -> Unprintable:
    """Returns an object whose str() raises."""
    return Unprintable()


def raises_unprintable() -> str:
    """Raises an exception whose str() raises."""
    raise UnprintableError


TOOLS = {"circular": circular, "unprintable": unprintable, "raises_unprintable": raises_unprintable}
WHY = {
    "circular": "ToolOutputError: the dict it returned cannot be sent to the model",
    "unprintable": "ToolOutputError: the Unprintable it returned cannot be sent to the model",
    "raises_unprintable": "UnprintableError: <UnprintableError whose text cannot be shown>",
}


def _script(fake: FakeProvider, name: str) -> None:
    fake.script(FakeReply(tool_calls=[ToolCall(id="c1", name=name, arguments={})]), FakeReply(content="sorry"))


def _run(fake: FakeProvider, name: str, mode: str, **settings: Any) -> list[Any]:
    """The response (send) or the events (stream) of one turn, sync or async."""
    if mode.startswith("async"):
        chat = fake.aio.conversation(tools=[TOOLS[name]], **settings)

        async def go() -> list[Any]:
            if mode == "async-send":
                return [await chat.send("go")]
            return [event async for event in chat.stream("go")]

        return [chat, *asyncio.run(go())]
    chat = fake.conversation(tools=[TOOLS[name]], **settings)
    return [chat, chat.send("go")] if mode == "send" else [chat, *chat.stream("go")]


MODES = ["send", "stream", "async-send", "async-stream"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TOOLS))
def test_the_failure_goes_back_to_the_model(name: str, mode: str) -> None:
    fake = FakeProvider()
    _script(fake, name)
    chat, *results = _run(fake, name, mode)
    result = chat.messages[-2]
    assert result.role.value == "tool" and WHY[name] in result.content
    if mode.endswith("send"):
        assert results[0].content == "sorry"
    else:
        types = [e.type for e in results]
        assert types[-1] is StreamEventType.END and StreamEventType.ERROR not in types
        (tool_result,) = [e for e in results if e.type is StreamEventType.TOOL_RESULT]
        assert isinstance(tool_result.error, ToolExecutionError) and WHY[name] in tool_result.text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(TOOLS))
def test_raise_tool_errors_raises_a_tool_execution_error(name: str, mode: str) -> None:
    fake = FakeProvider()
    _script(fake, name)
    if mode.endswith("send"):
        with pytest.raises(ToolExecutionError, match=f"tool '{name}' failed") as raised:
            _run(fake, name, mode, raise_tool_errors=True)
        error = raised.value
    else:
        _chat, *events = _run(fake, name, mode, raise_tool_errors=True)
        assert [e.type for e in events[-2:]] == [StreamEventType.ERROR, StreamEventType.END]
        error = events[-2].error
        assert isinstance(error, ToolExecutionError)
    if name != "raises_unprintable":
        assert isinstance(error.__cause__, ToolOutputError)


def test_add_tool_result_refuses_what_cannot_be_serialised() -> None:
    fake = FakeProvider()
    fake.script(FakeReply(tool_calls=[ToolCall(id="c1", name="lookup", arguments={})]))
    chat = fake.conversation(tools=[ToolSpec(name="lookup", description="", parameters={"type": "object"})])
    chat.send("go")
    with pytest.raises(InvalidInputError, match="add_tool_result: the dict it returned cannot be sent"):
        chat.add_tool_result("c1", circular())


def weather(city: str) -> str:
    """A module-level tool: the conversation still holds its provider."""
    return "sunny"


@pytest.mark.parametrize("local", [True, False])
def test_loop_errors_pickle_with_a_function_tool(local: bool) -> None:
    def nearby(city: str) -> str:  # a local function: not picklable
        """Nearby cities."""
        raise LookupError(city)

    fake = FakeProvider()
    tool = nearby if local else weather
    calls = [ToolCall(id=f"c{i}", name=tool.__name__, arguments={"city": "x"}) for i in range(3)]
    fake.script(*(FakeReply(tool_calls=[c]) for c in calls))
    with pytest.raises(MaxStepsError) as steps:
        fake.conversation(tools=[tool], max_steps=1).send("go")
    fake.script(FakeReply(tool_calls=[ToolCall(id="c9", name="nearby", arguments={"city": "x"})]))
    with pytest.raises(ToolExecutionError) as failed:
        fake.conversation(tools=[nearby], raise_tool_errors=True).send("go")
    for error in (steps.value, failed.value):
        assert error.conversation is not None
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.conversation is None
    assert pickle.loads(pickle.dumps(failed.value)).call == failed.value.call
