"""CompletionResponse helpers, Usage totals, EmbeddingResponse, ImageResponse."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, strategies as st

from llm_core import CompletionResponse, EmbeddingResponse, ImageResponse, InvalidInputError, ToolCall, Usage


def response(**values: object) -> CompletionResponse:
    return CompletionResponse(content="x", model="m", provider="p", **values)  # type: ignore[arg-type]


def test_defaults_finish_reason_stop_and_no_tool_calls_no_thinking() -> None:
    r = response()
    assert r.finish_reason == "stop"
    assert r.tool_calls is None
    assert r.thinking is None
    assert r.is_complete and not r.is_truncated and not r.is_filtered
    assert not r.has_tool_calls and not r.has_thinking


@pytest.mark.parametrize(
    ("finish", "truncated", "filtered", "complete"),
    [("stop", False, False, True), ("length", True, False, False),
     ("content_filter", False, True, False), ("tool_calls", False, False, False), ("other", False, False, False)],
)
def test_finish_reason_helpers(finish: str, truncated: bool, filtered: bool, complete: bool) -> None:
    r = response(finish_reason=finish)
    assert (r.is_truncated, r.is_filtered, r.is_complete) == (truncated, filtered, complete)


def test_has_tool_calls() -> None:
    assert response(tool_calls=[ToolCall(id="1", name="f")]).has_tool_calls
    assert not response(tool_calls=[]).has_tool_calls


@pytest.mark.parametrize(("thinking", "has"), [(None, False), ("", False), ("  \n\t", False), ("Reason.", True),
                                               (" x ", True)])
def test_has_thinking_means_non_blank(thinking: str | None, has: bool) -> None:
    assert response(thinking=thinking).has_thinking is has


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.none() | st.integers(0, 10**6))
@example(0, 0, 5)
def test_usage_total_includes_thinking_tokens(prompt: int, completion: int, thinking: int | None) -> None:
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, thinking_tokens=thinking)
    assert usage.total_tokens == prompt + completion + (thinking or 0)


def test_a_reported_total_is_kept() -> None:
    assert Usage(prompt_tokens=3, completion_tokens=4, total_tokens=10).total_tokens == 10
    assert Usage().total_tokens == 0
    assert Usage().thinking_tokens is None


def test_embedding_dimensions_is_the_length_of_the_first_vector() -> None:
    assert EmbeddingResponse(vectors=[[0.1, 0.2, 0.3]], model="m", provider="p").dimensions == 3
    assert EmbeddingResponse(vectors=[], model="m", provider="p").dimensions == 0


vectors = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=16)


@given(vectors)
def test_cosine_similarity_of_a_vector_with_itself_is_one(v: list[float]) -> None:
    similarity = EmbeddingResponse.cosine_similarity(v, v)
    if any(v) and math.sqrt(sum(x * x for x in v)) > 1e-100:
        assert similarity == pytest.approx(1.0)
    assert -1.0 - 1e-9 <= similarity <= 1.0 + 1e-9


@given(vectors, vectors)
def test_cosine_similarity_refuses_vectors_of_different_length(a: list[float], b: list[float]) -> None:
    if len(a) == len(b):
        assert EmbeddingResponse.cosine_similarity(a, b) == EmbeddingResponse.cosine_similarity(b, a)
    else:
        with pytest.raises(InvalidInputError, match="different length"):
            EmbeddingResponse.cosine_similarity(a, b)


def test_cosine_similarity_values_and_similarity_by_index() -> None:
    embedding = EmbeddingResponse(vectors=[[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]], model="m", provider="p")
    assert embedding.similarity(0, 1) == pytest.approx(0.0)
    assert embedding.similarity(0, 2) == pytest.approx(-1.0)
    assert EmbeddingResponse.cosine_similarity([0.0, 0.0], [1.0, 1.0]) == 0.0


def test_image_response_repr_does_not_dump_bytes() -> None:
    image = ImageResponse(data=b"\x89PNG" + b"z" * 500, mime_type="image/png", model="m", provider="p")
    assert "504 bytes" in repr(image)
    assert "zzzz" not in repr(image)
    assert "zzzz" not in str(image)


def test_image_response_round_trips_through_json() -> None:
    image = ImageResponse(data=b"\x89PNG\r\n\x1a\n\x00\xff", mime_type="image/png", model="m", provider="p")
    assert ImageResponse.model_validate_json(image.model_dump_json()) == image
    assert isinstance(image.model_dump(mode="json")["data"], str)


def test_to_message_carries_content_tool_calls_and_replay_metadata() -> None:
    from llm_core import ChatMessage, CompletionResponse, Role, ToolCall

    call = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    response = CompletionResponse(content="", model="m", provider="p", tool_calls=[call],
                                  metadata={"thought_signatures": ["sig"]})
    message = response.to_message()
    assert isinstance(message, ChatMessage)
    assert message.role is Role.ASSISTANT
    assert message.tool_calls == [call]
    assert message.metadata == {"thought_signatures": ["sig"]}
    message.metadata["x"] = 1  # a copy: the response is not changed
    assert "x" not in response.metadata
