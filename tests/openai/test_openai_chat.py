"""Chat, completion and reasoning through the Responses API, replayed through the real SDK."""

from __future__ import annotations

from decimal import Decimal

import pytest

from llm_core.errors import InvalidInputError, UnsupportedFeatureError
from llm_core.responses import CompletionResponse
from tests.openai.openai_scenarios import CAPITAL


async def test_chat_sends_instructions_store_false_and_temperature_zero(player):
    response = await player.play("chat_basic")
    sent = player.sent()
    assert isinstance(response, CompletionResponse)
    assert response.content == "The capital of France is Paris."
    assert response.model == "gpt-4.1-2025-04-14"
    assert response.finish_reason == "stop" and response.is_complete
    assert response.usage.prompt_tokens == 26 and response.usage.completion_tokens == 8
    assert response.usage.total_tokens == 34 and response.usage.thinking_tokens == 0
    assert response.thinking is None and response.tool_calls is None
    assert response.response_id == player.answered()["id"] and response.response_id.startswith("resp_")
    assert "response_id" not in response.metadata  # the typed field holds it
    assert response.usage.cached_tokens == 0  # input_tokens_details.cached_tokens, as the API reports it
    # the recorded request (matched on its JSON body) is the one mapped by the single mapper
    assert sent == {
        "model": "gpt-4.1",
        "input": "What is the capital of France?",  # one plain user text: the documented string form
        "instructions": "Answer in one short sentence.",
        "store": False,
        "temperature": 0.0,
    }


async def test_prompt_object_settings_reach_the_request(player):
    response = await player.play("chat_prompt")
    sent = player.sent()
    assert response.content == "Bonjour !"
    assert sent["max_output_tokens"] == 50 and sent["instructions"] == "You translate into French."
    assert sent["temperature"] == 0.0 and sent["input"] == "Hello!"


@pytest.mark.parametrize("method", ["complete", "generate_text", "answer"])
async def test_completion_helpers_send_the_same_request(player, method):
    def call(p):
        return getattr(p, method)("Say hello in French.")

    result = await player.play("complete_default", call=call)
    text = result.content if isinstance(result, CompletionResponse) else result
    assert text == "Bonjour !"
    if isinstance(result, CompletionResponse):
        assert result.model.startswith("gpt-5.4-mini")
        assert result.usage.thinking_tokens == 64 and result.usage.completion_tokens == 10
        assert result.thinking is None  # a reasoning item without summary is no thinking text
        assert len(result.metadata["reasoning_items"]) == 1


async def test_max_output_tokens_gives_finish_reason_length(player):
    response = await player.play("chat_incomplete")
    assert response.finish_reason == "length" and response.is_truncated
    assert response.content.startswith("The sea")
    assert response.metadata["status"] == "incomplete"


async def test_refusal_is_content_filter_with_the_refusal_text(player):
    response = await player.play("chat_refusal")
    assert response.finish_reason == "content_filter" and response.is_filtered
    assert response.content == "I'm sorry, but I can't help with that."
    assert response.metadata["refusal"] == response.content


async def test_reasoning_summaries_become_thinking(player):
    response = await player.play("chat_reasoning")
    assert response.content == 'There are 3 r\'s in "strawberry".'
    assert response.thinking == (
        "**Counting letters**\n\nI spell the word: s-t-r-a-w-b-e-r-r-y. The r's are at positions 3, 8 and 9."
        "\n\n**Answer**\n\nSo there are three."
    )
    assert response.has_thinking
    assert response.usage.thinking_tokens == 128 and response.usage.completion_tokens == 52
    [item] = response.metadata["reasoning_items"]
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAAA")
    sent = player.sent()
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert sent["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert "temperature" not in sent


async def test_encrypted_reasoning_is_sent_back_in_the_next_stateless_turn(player):
    response = await player.play("chat_reasoning_replay")
    assert response.content == "'raspberry' has 3 r's as well."
    second = player.sent(1)
    first_reasoning = player.answered(0)["output"][0]
    assert second["store"] is False
    # the first answer's reasoning item goes back unchanged, before the assistant's text
    assert second["input"][1] == {key: first_reasoning[key] for key in ("type", "id", "summary", "encrypted_content")}
    assert second["input"][2] == {"role": "assistant", "content": 'There are 3 r\'s in "strawberry".'}
    assert second["input"][3] == {"role": "user", "content": "And in 'raspberry'?"}


async def test_temperature_on_a_reasoning_model_is_refused_before_sending(player, no_network):
    with pytest.raises(InvalidInputError, match=r"reasoning model.*temperature"):
        await player.invoke(lambda p: p.chat_completion(CAPITAL, model="gpt-5.4-mini", temperature=0.2))
    assert no_network == []


async def test_thinking_on_a_model_without_reasoning_is_refused(player, no_network):
    with pytest.raises(UnsupportedFeatureError, match=r"gpt-4\.1.*thinking"):
        await player.invoke(lambda p: p.chat_completion(CAPITAL, model="gpt-4.1", thinking=True))
    assert no_network == []


async def test_cached_prompt_tokens_are_counted_and_billed_at_the_cached_price(player):
    """A repeated long prompt: ``input_tokens_details.cached_tokens`` is read, and the catalogue's
    cached-input price of gpt-5.4-mini bills those tokens (models.py: 0.75 / 0.075 / 4.50 USD per
    million input / cached input / output tokens; reasoning billed as output)."""
    response = await player.play("chat_cached")
    answered = player.answered()
    assert response.response_id == answered["id"]
    usage = response.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.thinking_tokens) == (
        1290, 1152, 8, 22)
    # (1290 - 1152) x 0.75 + 1152 x 0.075 + (8 + 22) x 4.50, per million
    assert usage.cost == Decimal("0.0003249")
