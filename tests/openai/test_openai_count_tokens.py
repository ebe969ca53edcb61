"""``count_tokens`` through ``responses.input_tokens.count`` (``POST /v1/responses/input_tokens``),
replayed through the real SDK, sync and async.

Shapes: the request is what openai 3.57 sends for our call (recorded by cassette_author.py); the
answer is the SDK's ``InputTokenCountResponse`` (``{"object": "response.input_tokens",
"input_tokens": N}``, openai/types/responses/input_token_count_response.py).
"""

from __future__ import annotations

import json
import typing
from typing import Any

import httpx2
import pytest
from openai.types.responses import input_token_count_params

from core_openai_plugin import request_mapper
from core_openai_plugin.response_parser import parse_input_tokens
from llm_core.errors import InvalidInputError, InvalidResponseError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.messages import ChatMessage
from llm_core.registry import Registry
from llm_core.requests import ChatRequest
from llm_core.responses import TokenCount
from tests.observers.recording import Recorder
from tests.openai.openai_scenarios import CAPITAL, WEATHER, make_provider


async def test_count_tokens_sends_the_responses_input_and_reads_the_count(player: Any) -> None:
    counted = await player.play("count_tokens")
    assert player.cassette.requests[0].uri == "https://api.openai.com/v1/responses/input_tokens"
    # the chat mapper's payload, less store, include and service_tier (input_tokens.count takes none)
    assert player.sent() == {
        "model": "gpt-5.4-mini",
        "input": "What is the capital of France?",
        "instructions": "Answer in one short sentence.",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "low", "summary": "auto"},
        "tool_choice": "auto",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "strict": True,
                "description": "Current weather in a city.",
            }
        ],
    }
    assert counted == TokenCount(input_tokens=96, model="gpt-5.4-mini", provider="openai")


def test_the_payload_is_the_chat_payload_cut_to_what_the_endpoint_takes() -> None:
    provider = make_provider()
    request = provider.builder.chat(
        CAPITAL, model="gpt-5.4-mini", tools=[WEATHER], feature=Feature.TOKEN_COUNTING, service_tier="flex"
    )
    chat = provider.map_chat_request(request)
    counted = provider.map_count_tokens_request(request)
    assert counted == {key: value for key, value in chat.items() if key not in ("store", "include", "service_tier")}
    assert {"store", "include", "service_tier"} <= set(chat)


def test_the_kept_keys_are_parameters_of_input_tokens_count() -> None:
    accepted = set(typing.get_type_hints(input_token_count_params.InputTokenCountParams))
    assert request_mapper.COUNT_TOKENS_KEYS - {"extra_body", "extra_headers", "extra_query"} <= accepted


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (lambda p: p.count_tokens("Hi", model="gpt-5.4-mini", temperature=0.2), InvalidInputError, "reasoning model"),
        (lambda p: p.count_tokens("Hi", stop=["x"]), InvalidInputError, "no stop sequences"),
        (lambda p: p.count_tokens("Hi", verbosty="low"), InvalidInputError, "unknown chat option"),
        (lambda p: p.count_tokens("Hi", model="text-embedding-3-small"), UnsupportedFeatureError, "token_counting"),
        (lambda p: p.count_tokens("Hi", model="gpt-image-2"), UnsupportedFeatureError, "token_counting"),
    ],
)
async def test_invalid_counts_are_refused_before_sending(player: Any, no_network: list[Any], call: Any,
                                                        error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        await player.invoke(call)
    assert no_network == []


def _answering(body: str, sent: list[httpx2.Request]) -> Any:
    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=body.encode())

    return httpx2.MockTransport(answer)


@pytest.mark.parametrize(
    "body",
    [
        '{"object": "response.input_tokens"}',
        '{"object": "response.input_tokens", "input_tokens": null}',
        '{"object": "response.input_tokens", "input_tokens": "12"}',
        '{"object": "response.input_tokens", "input_tokens": -3}',
        '{"object": "response", "input_tokens": 12}',
    ],
)
async def test_an_answer_that_is_no_count_is_an_invalid_response(player: Any, body: str) -> None:
    sent: list[httpx2.Request] = []
    with pytest.raises(InvalidResponseError, match="no input token count"):
        await player.invoke(lambda p: p.count_tokens("Hi"), client_args={"transport": _answering(body, sent)})
    assert len(sent) == 1  # never a success with 0 tokens, and not retried on the same provider


def test_parser_reads_the_sdk_type() -> None:
    from openai.types.responses.input_token_count_response import InputTokenCountResponse

    request = ChatRequest(messages=[ChatMessage.user("hi")], model="gpt-4.1")
    raw = InputTokenCountResponse(object="response.input_tokens", input_tokens=7)
    assert parse_input_tokens(raw, request) == TokenCount(input_tokens=7, model="gpt-4.1", provider="openai")
    assert parse_input_tokens(raw, request).cached_tokens is None  # the endpoint does not say


@pytest.mark.usefixtures("fresh_registry")
async def test_observers_hear_count_tokens(player: Any) -> None:
    recorder = Recorder()
    Registry().add_observer(recorder)
    await player.play("count_tokens")
    assert [kind for kind, _ in recorder.events] == ["before", "after"]
    (_, before), (_, after) = recorder.events
    assert before["operation"] == after["operation"] == "count_tokens"
    assert set(before["features"]) >= {"token_counting", "tools", "thinking"}
    assert before["provider"] == "openai" and before["model"] == "gpt-5.4-mini"
    assert "test-key" not in json.dumps([before, after], default=str)
