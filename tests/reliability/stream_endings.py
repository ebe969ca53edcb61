"""How a stream that failed ends, as the tests of every plugin read it."""

from __future__ import annotations

from collections.abc import Sequence

from llm_core.errors import LLMError
from llm_core.streaming import StreamEvent, StreamEventType


def ending_error(streamed: Sequence[StreamEvent]) -> LLMError | None:
    """The error of a stream that ended ERROR then END with no METADATA (asserted)."""
    kinds = [e.type for e in streamed]
    assert kinds[-2:] == [StreamEventType.ERROR, StreamEventType.END] and StreamEventType.METADATA not in kinds
    return streamed[-2].error
