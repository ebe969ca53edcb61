"""Embedding inputs beyond a provider's per-request limit (``max_embedding_inputs``) go out as
several requests, in order; the caller gets one response with every vector in input order and
the usage of all the requests."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from llm_core.errors import InvalidInputError
from llm_core.testing import FakeProvider


class SmallBatches(FakeProvider):
    max_embedding_inputs: ClassVar[int | None] = 2


TEXTS = ["one", "two words", "three more words", "four", "five and six"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_inputs_over_the_limit_are_split_in_order_and_merged(mode: str) -> None:
    provider = SmallBatches()
    alone = FakeProvider().embeddings(TEXTS)  # the same fake without a limit: one request
    merged = asyncio.run(provider.aio.embeddings(TEXTS)) if mode == "async" else provider.embeddings(TEXTS)
    assert [r["inputs"] for r in provider.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    assert merged.vectors == alone.vectors  # each vector still belongs to its own text
    assert merged.usage.prompt_tokens == alone.usage.prompt_tokens == 10
    assert merged.metadata["requests"] == 3
    assert (merged.model, merged.provider) == (alone.model, alone.provider)


def test_inputs_within_the_limit_are_one_request() -> None:
    provider = SmallBatches()
    response = provider.embeddings(TEXTS[:2])
    assert len(provider.requests) == 1 and len(response.vectors) == 2
    assert "requests" not in response.metadata


def test_an_invalid_input_anywhere_refuses_the_whole_call_before_any_batch() -> None:
    provider = SmallBatches()
    with pytest.raises(InvalidInputError, match=r"input\[3\]"):
        provider.embeddings([*TEXTS[:3], "  ", "last"])
    assert provider.requests == []
