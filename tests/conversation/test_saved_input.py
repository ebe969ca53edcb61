"""A saved conversation is input someone may have edited: ``from_json`` refuses anything that is
not one with a single :class:`InvalidInputError` naming what is wrong (never an AttributeError,
TypeError, KeyError or RecursionError), and ``options`` cannot replace the history or settings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_core import InvalidInputError
from llm_core.conversation import AsyncConversation, Conversation
from llm_core.testing import FakeProvider, FakeReply


def _saved() -> dict[str, Any]:
    fake = FakeProvider()
    fake.script(FakeReply(content="Hi."))
    chat = fake.conversation(system="Be brief.", temperature=0.2)
    chat.send("Hello")
    saved: dict[str, Any] = json.loads(chat.to_json())
    return saved


def _with(**changes: Any) -> str:
    return json.dumps({**_saved(), **changes})


TAMPERED = {
    "a list": ("[1]", "a saved conversation is a JSON object, not an array"),
    "null": ("null", "a saved conversation is a JSON object, not null"),
    "a number": ("5", "a saved conversation is a JSON object, not a number"),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, "the document nests deeper than 200 levels"),
    "deep nesting in metadata": (
        _with(messages=[{"role": "user", "content": "x", "metadata": {"a": json.loads("[" * 300 + "]" * 300)}}]),
        "nests deeper than 200 levels",
    ),
    "options a list": (_with(options=[1, 2]), "options must be an object, not an array"),
    "options a string": (_with(options="x"), "options must be an object, not a string"),
    "options.messages": (_with(options={"messages": []}), "options.messages is not a call option"),
    "options.usage": (_with(options={"usage": {}}), "options.usage is not a call option"),
    "options.system": (_with(options={"system": "x"}), "options.system is not a call option"),
    "options.tools": (_with(options={"tools": []}), "options.tools is not a call option"),
    "messages missing": (json.dumps({"format": "llm-core.conversation/1"}), "messages must be a list, not null"),
    "messages an object": (_with(messages={"a": 1}), "messages must be a list, not an object"),
    "a message a list": (_with(messages=[[1]]), r"messages\[0\] must be an object, not an array"),
    "a message without role": (_with(messages=[{"content": "x"}]), r"messages\[0\]: role: Field required"),
    "metadata a list": (
        _with(messages=[{"role": "assistant", "content": "x", "metadata": [1]}]),
        r"messages\[0\]: metadata: Input should be a valid dictionary",
    ),
    "tool calls of the wrong type": (
        _with(messages=[{"role": "assistant", "content": "", "tool_calls": [{"id": 1}]}]),
        r"messages\[0\]: tool_calls\.0\.",
    ),
    "answered_by not text": (
        _with(messages=[{"role": "assistant", "content": "x", "metadata": {"answered_by": ["fake"]}}]),
        r"messages\[0\]\.metadata\.answered_by must be a string",
    ),
    "usage a list": (_with(usage=[1]), "usage must be an object, not an array"),
    "usage of the wrong type": (_with(usage={"prompt_tokens": "many"}), "usage: prompt_tokens"),
    "system a number": (_with(system=5), "system must be a string or null, not a number"),
    "model an object": (_with(model={}), "model must be a string or null, not an object"),
    "max_steps a string": (_with(max_steps="3"), "max_steps must be a positive integer, not '3'"),
    "max_steps true": (_with(max_steps=True), "max_steps must be a positive integer, not True"),
    "max_steps 0": (_with(max_steps=0), "max_steps must be a positive integer, not 0"),
    "format missing": (json.dumps({"messages": []}), r"not a saved conversation \(format None\)"),
    "bytes not utf-8": (b"\xff\xfe{", "not JSON"),
}


@pytest.mark.parametrize(("data", "why"), list(TAMPERED.values()), ids=list(TAMPERED))
def test_tampered_documents_are_refused(data: str, why: str) -> None:
    with pytest.raises(InvalidInputError, match=f"from_json: .*{why}"):
        Conversation.from_json(data, provider=FakeProvider())


@pytest.mark.parametrize("data", [[1], None, 5, b""], ids=["list", "None", "int", "empty bytes"])
def test_values_that_are_no_document_are_refused(data: Any) -> None:
    with pytest.raises(InvalidInputError, match="from_json"):
        AsyncConversation.from_json(data, provider=FakeProvider().aio)


def test_the_untampered_document_resumes() -> None:
    fake = FakeProvider()
    chat = Conversation.from_json(_with(), provider=fake)
    assert [m.role.value for m in chat.messages] == ["system", "user", "assistant"]
    assert chat.options == {"temperature": 0.2}


@pytest.mark.parametrize(
    "metadata",
    [
        {"gemini_parts": 5},
        {"thought_signatures": 5},
        {"thought_signatures": [{"tool_call_id": "c1"}]},
        {"thought_signatures": [{"kind": "text", "signature": 3}]},
    ],
    ids=["parts a number", "signatures a number", "signature missing", "signature a number"],
)
def test_gemini_replay_data_of_the_wrong_type_is_refused_before_sending(metadata: dict[str, Any]) -> None:
    from core_gemini_plugin.contents import map_contents
    from llm_core import ChatMessage, ToolCall

    saved = _saved()
    saved["messages"][-1] = {
        "role": "assistant",
        "content": "Hi.",
        "tool_calls": [{"id": "c1", "name": "f", "arguments": {}}],
        "metadata": {"answered_by": "gemini", **metadata},
    }
    saved["messages"].append({"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "f"})
    messages = Conversation.from_json(json.dumps(saved), provider=FakeProvider()).messages
    assert messages[-2].tool_calls == [ToolCall(id="c1", name="f", arguments={})]
    with pytest.raises(InvalidInputError, match=r"\[gemini\] (saved gemini_parts|a saved thought signature)"):
        map_contents([*messages, ChatMessage.user("go on")])


def test_to_json_leaves_credentials_out() -> None:
    chat = FakeProvider().conversation(
        temperature=0.1,
        api_key="option-secret-123",
        extra_headers={"x-goog-api-key": "header-secret-123", "Authorization": "Bearer x", "X-Trace": "t"},
    )
    saved = chat.to_json()
    assert "secret" not in saved and "Bearer" not in saved
    assert json.loads(saved)["options"] == {"temperature": 0.1, "extra_headers": {"X-Trace": "t"}}


def test_an_option_that_holds_itself_cannot_be_saved() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(InvalidInputError, match="a call option cannot be saved as JSON"):
        FakeProvider().conversation(metadata=loop).to_json()
