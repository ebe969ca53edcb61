"""A router conversation falls back per model call: the history is translated for the provider
that answers, another provider's replay data is never sent to it (but kept), tool-call ids stay
the same, every response says who answered; only providers offering every needed feature."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from llm_core import (
    AuthenticationError,
    FallbackExhaustedError,
    ImagePart,
    NoMatchingProviderError,
    ProviderTimeoutError,
    RateLimitError,
    Registry,
    ServerError,
    StreamEventType,
    TextPart,
    ToolCall,
)
from llm_core.features import Feature
from llm_core.testing import FakeProvider, FakeReply
from llm_core.testing.fake import ALL_FEATURES, PNG_1X1

Register = Callable[..., FakeProvider]


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def calling(call_id: str, order: str, replay: str) -> FakeReply:
    return FakeReply(
        tool_calls=[ToolCall(id=call_id, name="lookup", arguments={"order": order})], metadata={"replay": replay}
    )


def assistant_metadata(provider: FakeProvider, request: int) -> list[dict[str, Any]]:
    return [m.get("metadata", {}) for m in provider.requests[request]["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize(
    "failure",
    [
        RateLimitError("quota", provider="alpha", retry_after=0),
        ServerError("down", provider="alpha", status_code=503),
        ProviderTimeoutError("late", provider="alpha"),
    ],
    ids=type,
)
def test_turn_two_falls_back_and_turn_three_goes_back(
    registry: Registry, register_fake: Register, failure: Exception
) -> None:
    alpha = register_fake(registry, "alpha")
    beta = register_fake(registry, "beta")
    alpha.script(calling("a1", "1", "alpha-1"), FakeReply(content="Order 1 shipped.", metadata={"replay": "alpha-2"}))
    chat = registry.router("chat", prefer=["alpha", "beta"]).conversation(tools=[lookup])
    first = chat.send("Where is order 1?")
    assert (first.provider, first.metadata["answered_by"], first.metadata["fallback_from"]) == ("alpha", "alpha", [])

    # turn 2: alpha fails, beta answers (two model calls, both on beta)
    alpha.script(FakeReply(error=failure))
    beta.script(calling("b1", "2", "beta-1"), FakeReply(content="Order 2 shipped.", metadata={"replay": "beta-2"}))
    second = chat.send("And order 2?")
    assert second.content == "Order 2 shipped."
    assert [(s.provider, s.metadata["fallback_from"]) for s in second.steps] == [("beta", ["alpha"]), ("beta", [])]
    # beta got turn 1 as text and tool calls only: alpha's replay data is not sent to it
    assert assistant_metadata(beta, 0) == [{"metadata": {"answered_by": "alpha"}}.get("metadata")] * 2
    assert [m.get("tool_call_id") for m in beta.requests[0]["messages"] if m["role"] == "tool"] == ["a1"]
    # ... but the history keeps it, so the conversation can go back
    assert chat.messages[1].metadata == {"replay": "alpha-1", "answered_by": "alpha", "fallback_from": []}

    # turn 3: alpha is back and gets its own replay data, beta's turns as plain turns
    alpha.script(FakeReply(content="Anything else?"))
    third = chat.send("Thanks")
    assert third.provider == "alpha"
    sent = assistant_metadata(alpha, 3)
    assert [m.get("replay") for m in sent] == ["alpha-1", "alpha-2", None, None]
    assert sent[2] == {"answered_by": "beta"}
    tool_ids = [m.get("tool_call_id") for m in alpha.requests[3]["messages"] if m["role"] == "tool"]
    assert tool_ids == ["a1", "b1"]
    assert [m.metadata["answered_by"] for m in chat.messages if m.role.value == "assistant"] == [
        "alpha",
        "alpha",
        "beta",
        "beta",
        "alpha",
    ]


def test_a_bad_request_does_not_fall_back(registry: Registry, register_fake: Register) -> None:
    alpha = register_fake(registry, "alpha", FakeReply(error=AuthenticationError("bad key", provider="alpha")))
    beta = register_fake(registry, "beta")
    chat = registry.router("chat", prefer=["alpha", "beta"]).conversation(tools=[lookup])
    with pytest.raises(AuthenticationError):
        chat.send("hi")
    assert beta.requests == [] and len(alpha.requests) == 1


def test_every_provider_failing_raises_fallback_exhausted(registry: Registry, register_fake: Register) -> None:
    register_fake(registry, "alpha", FakeReply(error=ServerError("down", provider="alpha")))
    register_fake(registry, "beta", FakeReply(error=ServerError("down", provider="beta")))
    chat = registry.router("chat").conversation()
    with pytest.raises(FallbackExhaustedError) as caught:
        chat.send("hi")
    assert set(caught.value.errors) == {"alpha", "beta"}


def test_only_providers_with_every_needed_feature_are_asked(registry: Registry, register_fake: Register) -> None:
    text_only = register_fake(registry, "plain", features=ALL_FEATURES - {Feature.TOOLS, Feature.VISION})
    no_vision = register_fake(registry, "novision", features=ALL_FEATURES - {Feature.VISION})
    full = register_fake(registry, "full")
    router = registry.router("chat", prefer=["plain", "novision", "full"])
    no_vision.script(FakeReply(content="from novision"))
    assert router.conversation(tools=[lookup]).send("hi").provider == "novision"  # plain has no tools

    chat = router.conversation(tools=[lookup])
    full.script(FakeReply(content="a red pixel"))
    picture = [TextPart(text="What is this?"), ImagePart(data=PNG_1X1, mime_type="image/png")]
    assert chat.send(picture).provider == "full"  # the history now has an image
    assert text_only.requests == [] and len(no_vision.requests) == 1

    alone = Registry(strict=False)
    register_fake(alone, "plain", features=ALL_FEATURES - {Feature.TOOLS})
    with pytest.raises(NoMatchingProviderError, match="tools"):
        alone.router("chat").conversation(tools=[lookup])  # refused before any request


def test_router_stream_falls_back_before_the_first_token(registry: Registry, register_fake: Register) -> None:
    alpha = register_fake(registry, "alpha")
    beta = register_fake(registry, "beta")
    alpha.script(
        FakeReply(content="never", stream_error=RateLimitError("quota", provider="alpha"), stream_error_after=0)
    )
    beta.script(calling("b1", "7", "beta-1"), FakeReply(content="Order 7 shipped."))
    chat = registry.router("chat", prefer=["alpha", "beta"]).conversation(tools=[lookup])
    events = list(chat.stream("Order 7?"))
    kinds = [e.type for e in events]
    assert kinds[:3] == [StreamEventType.METADATA, StreamEventType.TOOL_CALL, StreamEventType.TOOL_RESULT]
    assert kinds[-1] is StreamEventType.END and StreamEventType.ERROR not in kinds
    meta = events[0].metadata
    assert meta is not None and meta.extra["answered_by"] == "beta" and meta.extra["fallback_from"] == ["alpha"]
    assert [m.metadata.get("answered_by") for m in chat.messages if m.role.value == "assistant"] == [
        "beta",
        "beta",
    ]  # the loop stays where it fell back


def test_async_router_conversation_falls_back(registry: Registry, register_fake: Register) -> None:
    alpha = register_fake(registry, "alpha", FakeReply(error=ServerError("down", provider="alpha")))
    beta = register_fake(registry, "beta", calling("b1", "3", "beta-1"), FakeReply(content="Order 3 shipped."))

    async def run() -> Any:
        chat = registry.router("chat", prefer=["alpha", "beta"]).aio.conversation(tools=[lookup])
        response = await chat.send("Order 3?")
        events = [e async for e in chat.stream("Again?")]
        return response, events

    alpha.script(FakeReply(content="Again: shipped."))
    response, events = asyncio.run(run())
    assert [s.provider for s in response.steps] == ["beta", "beta"]
    assert events[-1].type is StreamEventType.END and events[-2].metadata.extra["answered_by"] == "alpha"
    assert len(beta.requests) == 2
