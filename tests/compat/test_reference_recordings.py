"""Recorded Chat Completions traffic of real servers (OpenAI, DeepSeek, Groq, OpenRouter, Ollama,
Gemini's compatibility layer; see ``tests.compat.reference``) replayed through the real openai SDK
and our endpoint provider: every answer parses as the server meant it, and the requests we send
in its place have the shape the server was sent."""

from __future__ import annotations

import base64
import re

import pytest
from pydantic import BaseModel

from llm_core.errors import AuthenticationError, InvalidRequestError, NotFoundError, RateLimitError
from llm_core.messages import ChatMessage, ImagePart
from llm_core.streaming import StreamEventType
from llm_core.tools import ToolCall, ToolSpec
from tests.compat.reference import FOLDER, Recording

pytestmark = pytest.mark.skipif(
    not FOLDER.is_dir(), reason=f"the reference recordings are not beside the repository ({FOLDER})"
)
KEY = {"api_key": "sk-test-0123456789"}


class CityLocation(BaseModel):
    city: str
    country: str


def tool(tool_name: str, /, **properties: str) -> ToolSpec:
    schema = {"type": "object", "properties": {p: {"type": t} for p, t in properties.items()},
              "required": list(properties), "additionalProperties": False}  # fmt: skip
    return ToolSpec(name=tool_name, parameters=schema)


def streamed(events: list) -> tuple[str, str, object]:
    text = "".join(e.text or "" for e in events if e.type is StreamEventType.TOKEN and not e.token_type.is_thinking)
    thinking = "".join(e.text or "" for e in events if e.type is StreamEventType.TOKEN and e.token_type.is_thinking)
    return text, thinking, events[-2].metadata if events[-2].type is StreamEventType.METADATA else events[-2].error


def test_openai_plain_chat_with_a_system_message() -> None:
    recording = Recording("test_openai_instructions")
    provider = recording.provider(preset="openai", **KEY)
    answer = provider.chat_completion(
        [ChatMessage.system("You are a helpful assistant."), ChatMessage.user("What is the capital of France?")],
        model="gpt-4o",
    )
    assert answer.content == "The capital of France is Paris." and answer.provider == "recorded"
    assert answer.usage.prompt_tokens == recording.response(0)["usage"]["prompt_tokens"]
    assert recording.sent[0]["messages"] == recording.request(0)["messages"]


def test_openai_streamed_tool_call_then_answer() -> None:
    recording = Recording("test_run_stream_sync_streams_real_model")
    provider = recording.provider(preset="openai", **KEY)
    question = "What is the capital of the UK? Use the tool, then answer."
    get_capital = tool("get_capital", country="string")
    events = list(provider.stream_chat_completion(question, model="gpt-4o-mini", tools=[get_capital]))
    _, _, first = streamed(events)
    (call,) = first.tool_calls
    assert (call.name, call.arguments, first.input_tokens) == ("get_capital", {"country": "UK"}, 53)
    assert recording.sent[0]["stream_options"] == {"include_usage": True}
    turns = [ChatMessage.user(question), ChatMessage.assistant(tool_calls=[call]), ChatMessage.tool(call.id, "London")]
    text, _, meta = streamed(list(provider.stream_chat_completion(turns, model="gpt-4o-mini", tools=[get_capital])))
    assert "London" in text and meta.stop_reason == "stop"
    assert recording.sent[1]["messages"] == recording.request(1)["messages"]


def test_openai_parallel_tool_calls_are_assembled_by_index() -> None:
    recording = Recording("test_complex_agent_run")
    provider = recording.provider(preset="openai", **KEY)
    tools = [tool("get_weather", city="string"), tool("get_country"), tool("get_product_name")]
    question = "Tell me: the capital of the country; the weather there; the product name"
    events = list(provider.stream_chat_completion(question, model="gpt-4o", tools=tools, tool_choice="required"))
    _, _, meta = streamed(events)
    assert [(c.name, c.arguments) for c in meta.tool_calls] == [("get_country", {}), ("get_product_name", {})]
    assert recording.sent[0]["tool_choice"] == "required"


def test_openai_vision_sends_the_image_as_the_recorded_data_url() -> None:
    recording = Recording("test_image_url_input_force_download")
    url = recording.request(0)["messages"][0]["content"][1]["image_url"]["url"]
    image = ImagePart(data=base64.b64decode(url.split(",", 1)[1]), mime_type="image/jpeg")
    provider = recording.provider(preset="openai", **KEY)
    answer = provider.analyze_image(image, "What is this vegetable?", model="gpt-4.1-nano")
    assert answer.content == "This vegetable is a potato."
    assert recording.sent[0]["messages"][0]["content"][1]["image_url"]["url"] == url


def test_openai_reasoning_model_counts_thinking_apart() -> None:
    recording = Recording("test_max_completion_tokens[o3-mini]")
    provider = recording.provider(preset="openai", **KEY)
    limit = recording.request(0)["max_completion_tokens"]
    answer = provider.chat_completion("hello", model="o3-mini", max_tokens=limit)
    usage = recording.response(0)["usage"]
    reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
    counted = (answer.usage.thinking_tokens, answer.usage.completion_tokens)
    assert counted == (reasoning, usage["completion_tokens"] - reasoning)
    assert "max_tokens" not in recording.sent[0] and recording.sent[0]["max_completion_tokens"] > 0


def test_openai_json_schema_with_tools_then_the_json_answer() -> None:
    recording = Recording("test_openai_native_output")
    provider = recording.provider(preset="openai", **KEY)
    question = "What is the largest city in the user country?"
    first = provider.chat_completion_with_tools(question, [tool("get_user_country")], model="gpt-4o",
                                                json_mode=True, response_schema=CityLocation)  # fmt: skip
    assert recording.sent[0]["response_format"]["type"] == "json_schema"
    turns = [ChatMessage.user(question), first.to_message(), ChatMessage.tool(first.tool_calls[0].id, "Mexico")]
    answer = provider.generate_json(turns, CityLocation, model="gpt-4o", tools=[tool("get_user_country")])
    assert answer == CityLocation(city="Mexico City", country="Mexico")


def test_ollama_json_schema_with_reasoning_keyless() -> None:
    recording = Recording("test_ollama_local_native_output_uses_json_schema")
    provider = recording.provider(preset="ollama")
    answer = provider.chat_completion("What is the capital of France?", model="qwen3:0.6b",
                                      json_mode=True, response_schema=CityLocation)  # fmt: skip
    assert CityLocation.model_validate_json(answer.content) == CityLocation(city="Paris", country="France")
    assert answer.thinking is not None and answer.thinking.startswith("Okay, the user is asking")
    assert recording.sent[0]["response_format"]["json_schema"]["name"] == "CityLocation"


def test_groq_json_schema_with_reasoning() -> None:
    recording = Recording("test_groq_native_output")
    provider = recording.provider(preset="groq", **KEY)
    answer = provider.chat_completion("What is the largest city in Mexico?", model="openai/gpt-oss-120b",
                                      json_mode=True, response_schema=CityLocation)  # fmt: skip
    assert answer.content == '{"city":"Mexico City","country":"Mexico"}' and answer.thinking


def test_groq_tool_use_failed_is_an_invalid_request_then_the_loop_goes_on() -> None:
    recording = Recording("test_tool_use_failed_error")
    provider = recording.provider(preset="groq", **KEY)
    get = tool("get_something_by_name", name="string")
    with pytest.raises(InvalidRequestError, match="tool_use_failed"):
        provider.chat_completion_with_tools("Call it.", [get], model="openai/gpt-oss-120b")
    second = provider.chat_completion_with_tools("Call it.", [get], model="openai/gpt-oss-120b")
    assert second.tool_calls == [ToolCall(id="fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", name="get_something_by_name",
                                          arguments={"name": "test"})]  # fmt: skip
    assert second.thinking is not None and second.finish_reason == "tool_calls"


def test_deepseek_reasoning_content_is_thinking_and_goes_back_with_its_turn() -> None:
    recording = Recording("test_deepseek_deferred_capability_with_thinking")
    provider = recording.provider(preset="deepseek", **KEY)
    turns = [ChatMessage.system(m["content"]) if m["role"] == "system" else ChatMessage.user(m["content"])
             for m in recording.request(0)["messages"]]  # fmt: skip
    load = tool("load_capability", id="string")
    first = provider.chat_completion_with_tools(turns, [load], model="deepseek-reasoner")
    recorded = recording.response(0)["choices"][0]["message"]
    assert first.thinking == recorded["reasoning_content"] and first.content == recorded["content"]
    turns += [first.to_message(), ChatMessage.tool(first.tool_calls[0].id, "{}")]
    second = provider.chat_completion_with_tools(turns, [load], model="deepseek-reasoner")
    assert recording.sent[1]["messages"][3]["reasoning_content"] == recorded["reasoning_content"]
    assert [call.name for call in second.tool_calls] == ["get_player_name", "roll_dice"]


def test_deepseek_streamed_reasoning_then_answer() -> None:
    recording = Recording("test_deepseek_model_thinking_stream")
    provider = recording.provider(preset="deepseek", **KEY)
    text, thinking, meta = streamed(list(provider.stream_chat_completion("Hello", model="deepseek-reasoner")))
    assert text == "Hello there! 😊 How can I help you today?" and thinking.startswith("Hmm, the user just said")
    assert (meta.thinking_tokens, meta.output_tokens, meta.input_tokens) == (198, 14, 6)


def test_openrouter_streamed_reasoning_and_its_details() -> None:
    recording = Recording("test_openrouter_streaming_reasoning")
    provider = recording.provider(preset="openrouter", **KEY)
    events = list(provider.stream_chat_completion("What is 2+2?", model="anthropic/claude-sonnet-4.5"))
    text, thinking, meta = streamed(events)
    assert "4" in text and thinking and meta.thinking_tokens == 13
    assert meta.extra["reasoning_replay"]["reasoning_details"]


def test_openrouter_a_stream_cut_after_reasoning_is_no_answer() -> None:
    recording = Recording("test_openrouter_stream_error")
    provider = recording.provider(preset="openrouter", **KEY)
    events = list(provider.stream_chat_completion("Hello there", model="minimax/minimax-m2:free", max_tokens=10))
    assert events[-2].type is StreamEventType.ERROR and events[-1].type is StreamEventType.END
    assert "Token limit reached" in str(events[-2].error)


def test_gemini_compatibility_layer_tool_call_then_answer() -> None:
    recording = Recording("test_compatible_api_with_tool_calls_without_id")
    provider = recording.provider(**KEY)
    clock = tool("get_current_time")
    model = "gemini-2.5-pro-preview-05-06"
    first = provider.chat_completion_with_tools("What is the current time?", [clock], model=model)
    (call,) = first.tool_calls
    assert call.name == "get_current_time" and call.id
    turns = [ChatMessage.user("What is the current time?"), first.to_message(), ChatMessage.tool(call.id, "Noon")]
    assert provider.chat_completion_with_tools(turns, [clock], model=model).content == "The current time is Noon."
    # the thought signature the layer sent with the call goes back with its turn
    signed = recording.response(0)["choices"][0]["message"]["extra_content"]
    assert recording.sent[1]["messages"][1]["extra_content"] == signed


@pytest.mark.parametrize(
    ("name", "preset", "error", "says"),
    [
        ("test_error_status_code_and_exception_events_with_invalid_api_key", "openai", AuthenticationError,
         "check OPENAI_API_KEY (or `llm-core keys set recorded`"),
        ("test_model_name_suggestion[openai-chat]", "openai", NotFoundError, "gpt-5.2-proo"),
        ("test_openai_o1_mini_system_role[developer]", "openai", InvalidRequestError, "unsupported_value"),
        ("test_openrouter_errors_raised", "openrouter", RateLimitError, "Provider returned error"),
    ],
)  # fmt: skip
def test_recorded_failures_map_to_the_taxonomy_and_name_the_endpoint(
    name: str, preset: str, error: type, says: str
) -> None:
    provider = Recording(name).provider(preset=preset, **KEY)
    with pytest.raises(error, match=re.escape(says)) as caught:
        provider.chat_completion("hello", model="gpt-4o")
    assert caught.value.provider == "recorded" and "does not implement" not in str(caught.value)
    assert "sk-test-0123456789" not in str(caught.value)
