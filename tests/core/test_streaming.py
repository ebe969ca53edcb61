"""Stream events and token types."""

from __future__ import annotations

import pytest

from llm_core import CallContext, RateLimitError, StreamEvent, StreamEventType, StreamMetadata, TokenType


@pytest.mark.parametrize(
    ("context", "thinking", "expected"),
    [
        (None, False, TokenType.LLM_RESPONSE),
        (None, True, TokenType.LLM_THINKING),
        (CallContext.AGENT_THOUGHT, False, TokenType.AGENT_THOUGHT_LLM_RESPONSE),
        (CallContext.AGENT_THOUGHT, True, TokenType.AGENT_THOUGHT_LLM_THINKING),
        (CallContext.FINAL_SYNTHESIS, False, TokenType.FINAL_SYNTHESIS_LLM_RESPONSE),
        (CallContext.FINAL_SYNTHESIS, True, TokenType.FINAL_SYNTHESIS_LLM_THINKING),
    ],
)
def test_token_type_for_each_context(context: CallContext | None, thinking: bool, expected: TokenType) -> None:
    token_type = TokenType.for_chunk(thinking=thinking, context=context)
    assert token_type is expected
    assert token_type.is_thinking is thinking


def test_there_are_exactly_the_six_token_types_and_seven_event_types() -> None:
    assert {t.value for t in TokenType} == {
        "LLM_THINKING", "LLM_RESPONSE", "AGENT_THOUGHT_LLM_THINKING", "AGENT_THOUGHT_LLM_RESPONSE",
        "FINAL_SYNTHESIS_LLM_THINKING", "FINAL_SYNTHESIS_LLM_RESPONSE",
    }
    # the four of every stream, and the three a conversation's tool loop adds between turns
    assert {t.value for t in StreamEventType} == {
        "TOKEN", "METADATA", "ERROR", "END", "TOOL_CALL", "TOOL_RESULT", "TOOL_APPROVAL",
    }


def test_token_event_keeps_text_untrimmed() -> None:
    event = StreamEvent.token("  spaced \n", TokenType.AGENT_THOUGHT_LLM_THINKING)
    assert event.type is StreamEventType.TOKEN
    assert event.text == "  spaced \n"
    assert event.token_type is TokenType.AGENT_THOUGHT_LLM_THINKING
    assert event.is_thinking
    assert event.metadata is None and event.error is None
    assert not StreamEvent.token("x", TokenType.LLM_RESPONSE).is_thinking


def test_metadata_error_and_end_events() -> None:
    meta = StreamMetadata(input_tokens=3, output_tokens=5, thinking_tokens=2, stop_reason="stop", response_id="t")
    event = StreamEvent.meta(meta)
    assert event.type is StreamEventType.METADATA and event.metadata is meta
    assert event.text is None and not event.is_thinking

    error = RateLimitError("slow down", provider="p", retry_after=2.0)
    failure = StreamEvent.failure(error)
    assert failure.type is StreamEventType.ERROR and failure.error is error

    end = StreamEvent.end()
    assert end.type is StreamEventType.END
    assert end.text is None and end.metadata is None and end.error is None


def test_validated_construction_matches_the_shortcut_constructors() -> None:
    built = StreamEvent(type=StreamEventType.TOKEN, text="hi", token_type=TokenType.LLM_RESPONSE)
    assert built == StreamEvent.token("hi", TokenType.LLM_RESPONSE)
