"""The Chat Completions mapper and parsers on their own: what each request turns into before it is
sent, and how answers (and streams cut anywhere) read. Answers are built as the SDK builds them
(``ChatCompletion.construct`` / ``ChatCompletionChunk.construct``), in the shapes of the
reference recordings."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from core_openai_plugin.chat_mapper import Quirks, map_chat_completion
from core_openai_plugin.chat_parser import parse_chat_completion
from core_openai_plugin.chat_stream import ChatCompletionsStreamParser, ThinkSplitter
from llm_core.errors import InvalidInputError, InvalidResponseError, ProviderConnectionError
from llm_core.messages import ChatMessage, DocumentPart
from llm_core.requests import ChatRequest, ThinkingOptions
from llm_core.tools import ToolCall, ToolSpec

PLAIN = Quirks()
WEATHER = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                                   "required": ["city"], "additionalProperties": False})  # fmt: skip


def request(*messages: ChatMessage, **fields: Any) -> ChatRequest:
    return ChatRequest(messages=list(messages) or [ChatMessage.user("Hi")], model="llama3.2", **fields)


def mapped(req: ChatRequest, quirks: Quirks = PLAIN) -> dict[str, Any]:
    return map_chat_completion(req, quirks, endpoint="local")


def completion(message: dict[str, Any], finish: str = "stop", **more: Any) -> ChatCompletion:
    choices = [{"index": 0, "message": message, "finish_reason": finish}]
    return ChatCompletion.construct(id="chatcmpl-1", object="chat.completion", created=1, model="llama3.2",
                                    choices=choices, **more)  # fmt: skip


def parse(raw: Any) -> Any:
    return parse_chat_completion(raw, request(), endpoint="local", service="local at http://127.0.0.1:8080/v1")


def test_the_request_carries_what_the_call_asks_and_nothing_else() -> None:
    assert mapped(request()) == {"model": "llama3.2", "messages": [{"role": "user", "content": "Hi"}]}
    sent = mapped(request(ChatMessage.system("Be brief."), ChatMessage.user("Hi"), max_tokens=50, temperature=0.0,
                          stop=["END"], thinking=ThinkingOptions(level="low"), tools=[WEATHER],
                          tool_choice="get_weather"))  # fmt: skip
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    sampling = (sent["max_tokens"], sent["temperature"], sent["stop"], sent["reasoning_effort"])
    assert sampling == (50, 0.0, ["END"], "low")
    assert sent["tools"] == [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER.parameters,
                                                                "strict": True}}]  # fmt: skip
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "max_completion_tokens" in mapped(request(max_tokens=5), Quirks(max_tokens_field="max_completion_tokens"))


def test_json_answers_and_the_quirks_that_refuse_them_before_sending() -> None:
    json_mode = mapped(request(json_mode=True))
    assert json_mode["response_format"] == {"type": "json_object"}
    assert json_mode["messages"][0] == {"role": "system", "content": "Answer in JSON."}  # the word JSON mode needs
    schema = {"title": "City", "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}  # fmt: skip
    assert mapped(request(json_mode=True, response_schema=schema))["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "City", "schema": schema, "strict": True}}  # fmt: skip
    with pytest.raises(InvalidInputError, match="does not honour a JSON schema"):
        mapped(request(json_mode=True, response_schema=schema), Quirks(json_schema=False))
    with pytest.raises(InvalidInputError, match="together with tools"):
        mapped(request(json_mode=True, response_schema=schema, tools=[WEATHER]), Quirks(json_schema_with_tools=False))
    with pytest.raises(InvalidInputError, match="does not read documents"):
        mapped(request(ChatMessage.user(["Read it", DocumentPart(data=b"%PDF-1.4 x", mime_type="application/pdf")])))


def test_an_assistant_turn_goes_back_with_its_calls_and_the_reasoning_the_server_wants() -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    turn = ChatMessage.assistant("Let me look.", tool_calls=[call]).model_copy(
        update={"metadata": {"reasoning_replay": {"reasoning_content": "Weather needs the tool."}}}
    )
    sent = mapped(request(ChatMessage.user("Weather?"), turn, ChatMessage.tool("call_1", "sunny")))["messages"]
    function = {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert sent[1] == {"role": "assistant", "content": "Let me look.", "reasoning_content": "Weather needs the tool.",
                       "tool_calls": [{"id": "call_1", "type": "function", "function": function}]}  # fmt: skip
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


def test_think_blocks_in_the_content_are_thinking() -> None:
    answer = parse(completion({"role": "assistant", "content": "<think>\nFrance: Paris.\n</think>\n\nParis."}))
    assert (answer.content, answer.thinking) == ("Paris.", "France: Paris.")
    both = parse(completion({"role": "assistant", "content": "<think>b</think>Paris.", "reasoning_content": "a"}))
    assert both.thinking == "a\nb"  # native first, then the blocks (as for Gemini)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (completion({"role": "assistant", "content": ""}, "length"), "raise max_tokens"),
        (completion({"role": "assistant", "content": None}), "carries no text, tool call or refusal"),
        (ChatCompletion.construct(id="x", object="chat.completion", created=1, model="m", choices=[]), "no choices"),
        ("<html>Bad gateway</html>", "not a chat completion"),
        (completion({"role": "assistant", "content": None,
                     "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}),
         "without a function name"),
        (completion({"role": "assistant", "content": "ok"}, usage=[1, 2]), "usage"),
    ],
)  # fmt: skip
def test_what_is_not_an_answer_raises(raw: Any, says: str) -> None:
    with pytest.raises(InvalidResponseError, match=says) as caught:
        parse(raw)
    assert caught.value.provider == "local"


@pytest.mark.parametrize("cut", range(1, 24))
def test_think_tags_cut_anywhere_across_chunks(cut: int) -> None:
    text = "<think>plan it</think>The answer."
    splitter = ThinkSplitter()
    pieces = splitter.feed(text[:cut]) + splitter.feed(text[cut:]) + splitter.flush()
    assert "".join(p for p, thought in pieces if thought) == "plan it"
    assert "".join(p for p, thought in pieces if not thought) == "The answer."


def chunk(choices: list[dict[str, Any]], **more: Any) -> ChatCompletionChunk:
    return ChatCompletionChunk.construct(id="c1", object="chat.completion.chunk", created=1, model="llama3.2",
                                         choices=choices, **more)  # fmt: skip


def delta(content: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": content, "finish_reason": finish}


def stream_parser() -> ChatCompletionsStreamParser:
    return ChatCompletionsStreamParser(request(), endpoint="local", service="local")


def test_a_stream_of_reasoning_tool_pieces_and_text() -> None:
    parser = stream_parser()
    events = []
    for piece in (
        chunk([delta({"role": "assistant", "reasoning_content": "Think. "})]),
        chunk([delta({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "two", "arguments": "{}"}}]})]),
        chunk([delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "one", "arguments": '{"x"'}}]})]),
        chunk([delta({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]})]),
        chunk([delta({"content": "Done <"})]),
        chunk([delta({}, "tool_calls")]),
        chunk([], usage={"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}),
    ):
        events.extend(parser.feed(piece))
    meta = parser.finish()
    tokens = [(e.text, e.token_type.is_thinking) for e in events]
    assert tokens == [("Think. ", True), ("Done ", False), ("<", False)]
    assert [(c.id, c.name, c.arguments) for c in meta.tool_calls] == [("a", "one", {"x": 1}), ("b", "two", {})]
    assert (meta.stop_reason, meta.input_tokens, meta.output_tokens, meta.provider) == ("tool_calls", 9, 7, "local")
    assert meta.extra["reasoning_replay"] == {"reasoning_content": "Think. "}


def test_a_stream_without_usage_leaves_the_counts_unknown_and_one_without_an_end_is_an_error() -> None:
    parser = stream_parser()
    parser.feed(chunk([delta({"content": "Hi"})]))
    parser.feed(chunk([delta({}, "stop")]))
    meta = parser.finish()
    assert (meta.input_tokens, meta.output_tokens, meta.stop_reason) == (None, None, "stop")
    cut = stream_parser()
    cut.feed(chunk([delta({"content": "Hi"})]))
    with pytest.raises(ProviderConnectionError, match="ended before a finish_reason"):
        cut.finish()
    with pytest.raises(InvalidResponseError, match="no chunks"):
        stream_parser().finish()
    with pytest.raises(InvalidResponseError, match="stream chunk that is"):
        stream_parser().feed({"choices": []})
