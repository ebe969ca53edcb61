"""FakeProvider scripted per conformance scenario (shared by the kit's tests and pytester runs)."""

from __future__ import annotations

from llm_core.decisions import DecisionAnswer
from llm_core.testing import FakeProvider, FakeReply
from llm_core.tools import ToolCall
from llm_core.responses import Usage

CALL = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})


def replies(scenario: str) -> list[FakeReply]:
    """Enough replies for any check of ``scenario`` (each check gets a fresh provider)."""
    usage = Usage(prompt_tokens=7, completion_tokens=5)
    per_scenario: dict[str, list[FakeReply]] = {
        "chat": [FakeReply(content="Hello, reader, nice to meet you!", usage=usage)],
        "error": [FakeReply(error=ConnectionResetError("connection reset by peer"))],  # type: ignore[arg-type]
        "stream": [FakeReply(content="one, two, three, four, five", thinking="Counting.", usage=usage)],
        "stream_error": [
            FakeReply(content="six, seven", stream_error=ConnectionResetError("reset"), stream_error_after=1)  # type: ignore[arg-type]
        ],
        "tools": [
            FakeReply(tool_calls=[CALL]),
            FakeReply(content="It is sunny and 18 degrees in Paris."),
        ],
        "json": [FakeReply(content='{"name": "Paris", "country": "France", "population": 2100000}')],
        "vision": [FakeReply(content="Red.")],
        "documents": [FakeReply(content="42 EUR.")],
        "thinking": [FakeReply(content="No: 391 = 17 x 23.", thinking="Try small primes: 17 x 23 = 391.")],
    }
    return per_scenario.get(scenario, []) * 4


def scripted_fake(scenario: str, cls: type[FakeProvider] = FakeProvider, **config: object) -> FakeProvider:
    return cls(replies=replies(scenario), api_key="test-key-123", **config)  # type: ignore[arg-type]


__all__ = ["CALL", "DecisionAnswer", "replies", "scripted_fake"]
