"""The fallback router (Registry.router): when it moves on, when it must not, and who answered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from llm_core import (
    AuthenticationError,
    ConfigurationError,
    ContentFilteredError,
    FallbackExhaustedError,
    InvalidInputError,
    InvalidRequestError,
    InvalidResponseError,
    LLMError,
    NoMatchingProviderError,
    ProviderConnectionError,
    ProviderSpec,
    ProviderTimeoutError,
    RateLimitError,
    Registry,
    ServerError,
    StreamEventType,
)
from llm_core.testing import FakeProvider, FakeReply, fake_spec

RegisterFake = Callable[..., FakeProvider]

TRANSIENT = [
    RateLimitError("quota", provider="a", retry_after=0),
    ServerError("down", provider="a", status_code=503),
    ProviderTimeoutError("late", provider="a"),
    ProviderConnectionError("refused", provider="a"),
]
PERMANENT = [
    InvalidRequestError("bad request", provider="a", status_code=400),
    AuthenticationError("bad key", provider="a", status_code=401),
    ContentFilteredError("blocked", provider="a"),
]


@pytest.fixture
def two(registry: Registry, register_fake: RegisterFake, sleeps: Any) -> tuple[FakeProvider, FakeProvider]:
    """Providers "a" then "b", both able to do everything; "a" retries twice per call."""
    a = register_fake(registry, "a", retry=sleeps.policy(max_attempts=2))
    b = register_fake(registry, "b")
    return a, b


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda e: type(e).__name__)
def test_falls_back_after_retries_and_says_who_answered(
    registry: Registry, two: tuple[FakeProvider, FakeProvider], error: LLMError
) -> None:
    a, b = two
    a.script(FakeReply(error=error), FakeReply(error=error))
    b.script(FakeReply(content="from b"))
    router = registry.router("chat")
    response = router.chat_completion("hi")
    assert response.content == "from b"
    assert response.provider == "b"
    assert response.metadata["answered_by"] == "b"
    assert response.metadata["fallback_from"] == ["a"]
    assert router.last_provider == "b"
    assert len(a.requests) == 2  # a's own retries ran first
    assert len(b.requests) == 1


def test_the_first_provider_answers_when_it_can(registry: Registry, two: tuple[FakeProvider, FakeProvider]) -> None:
    a, b = two
    router = registry.router("chat")
    response = router.chat_completion("hi")
    assert (response.provider, response.metadata["answered_by"], response.metadata["fallback_from"]) == ("a", "a", [])
    assert router.last_provider == "a"
    assert len(a.requests) == 1
    assert b.requests == []


@pytest.mark.parametrize("error", PERMANENT, ids=lambda e: type(e).__name__)
def test_never_falls_back_on_a_bad_request(
    registry: Registry, two: tuple[FakeProvider, FakeProvider], error: LLMError
) -> None:
    a, b = two
    a.script(FakeReply(error=error))
    with pytest.raises(type(error)):
        registry.router("chat").chat_completion("hi")
    assert len(a.requests) == 1
    assert b.requests == []


def test_invalid_input_fails_at_the_first_provider_without_sending(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    with pytest.raises(InvalidInputError):
        registry.router("chat").chat_completion([])
    assert two[0].requests == [] and two[1].requests == []


def test_a_provider_without_its_key_is_skipped(registry: Registry, register_fake: RegisterFake) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    b = register_fake(registry, "b", FakeReply(content="from b"))
    router = registry.router("chat", prefer=["keyed", "b"])
    response = router.chat_completion("hi")
    assert response.provider == "b"
    assert response.metadata["fallback_from"] == []  # ranked last: never tried while b works
    assert len(b.requests) == 1


def test_a_keyless_provider_that_is_reached_is_skipped(registry: Registry, register_fake: RegisterFake) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    b = register_fake(registry, "b", FakeReply(error=ServerError("b down", provider="b")))
    b.retry_policy = b.retry_policy.with_(max_attempts=1)
    router = registry.router("chat", prefer=["b", "keyed"])
    with pytest.raises(FallbackExhaustedError) as info:
        router.chat_completion("hi")
    assert list(info.value.errors) == ["b", "keyed"]
    assert isinstance(info.value.errors["keyed"], ConfigurationError)


def test_every_provider_failing_raises_fallback_exhausted(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    a, b = two
    a.script(*[FakeReply(error=ServerError("a down", provider="a"))] * 2)
    b.script(FakeReply(error=RateLimitError("b busy", provider="b")))
    with pytest.raises(FallbackExhaustedError) as info:
        registry.router("chat").generate_text("hi")
    assert list(info.value.errors) == ["a", "b"]
    assert isinstance(info.value.errors["b"], RateLimitError)
    assert "a down" in str(info.value) and "b busy" in str(info.value)


def test_the_router_follows_preference_and_capabilities(registry: Registry, register_fake: RegisterFake) -> None:
    register_fake(registry, "texty", features=["chat", "completion"])
    seeing = register_fake(registry, "seeing", FakeReply(content="a cat"))
    assert registry.router("chat", prefer="seeing").generate_text("hi") == "a cat"
    router = registry.router("chat")
    assert router.analyze_image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, "what?").provider == "seeing"
    assert router.last_provider == "seeing"
    assert router.embeddings("x").provider == "seeing"
    assert len(seeing.requests) == 3
    with pytest.raises(NoMatchingProviderError, match="audio"):
        registry.router("audio").chat_completion("x")


def test_no_capable_provider_is_a_no_matching_provider_error(registry: Registry, register_fake: RegisterFake) -> None:
    register_fake(registry, "texty", features=["chat", "completion"])
    with pytest.raises(NoMatchingProviderError, match="vision"):
        registry.router("chat").analyze_image(b"x")


def test_each_call_of_the_surface_falls_back(registry: Registry, two: tuple[FakeProvider, FakeProvider]) -> None:
    a, b = two
    router = registry.router()
    questions = [{"kind": "yes_no", "key": "ok", "instructions": "OK?"}]
    calls: dict[str, Callable[[], Any]] = {
        "complete": lambda: router.complete("x"),
        "answer": lambda: router.answer("x"),
        "tools": lambda: router.chat_completion_with_tools("x", [{"name": "f"}]),
        "json": lambda: router.generate_json("x"),
        "embeddings": lambda: router.embeddings("x"),
        "image": lambda: router.generate_image_bytes("x"),
        "decide": lambda: router.decide("task", questions),
    }
    for name, call in calls.items():
        a.script(*[FakeReply(error=ServerError("down", provider="a"))] * 2)
        b.script(FakeReply(content='{"ok": true}'))
        call()
        assert router.last_provider == "b", name


# -- streams ---------------------------------------------------------------------------------------------


def test_a_stream_falls_back_before_the_first_token(registry: Registry, two: tuple[FakeProvider, FakeProvider]) -> None:
    a, b = two
    a.script(*[FakeReply(error=ServerError("down", provider="a"))] * 2)
    b.script(FakeReply(content="hello there"))
    router = registry.router("streaming")
    events = list(router.stream_chat_completion("hi"))
    assert [e.type for e in events] == [StreamEventType.TOKEN] * 2 + [StreamEventType.METADATA, StreamEventType.END]
    meta = events[2].metadata
    assert meta is not None
    assert meta.provider == "b"
    assert meta.extra["fallback_from"] == ["a"]
    assert router.last_provider == "b"


def test_a_stream_never_falls_back_after_a_token(registry: Registry, two: tuple[FakeProvider, FakeProvider]) -> None:
    a, b = two
    a.script(FakeReply(content="one two three", stream_error=ServerError("cut", provider="a"), stream_error_after=1))
    events = list(registry.router("streaming").stream_chat_completion("hi"))
    assert [e.type for e in events] == [StreamEventType.TOKEN, StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[1].error, ServerError)
    assert b.requests == []


def test_a_stream_does_not_fall_back_on_a_bad_request(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    a, b = two
    a.script(FakeReply(error=InvalidRequestError("bad", provider="a")))
    events = list(registry.router("streaming").stream_chat_completion("hi"))
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[0].error, InvalidRequestError)
    assert b.requests == []


def test_the_last_providers_stream_error_ends_the_stream(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    a, b = two
    a.script(*[FakeReply(error=ServerError("a down", provider="a"))] * 2)
    b.script(FakeReply(error=ServerError("b down", provider="b")))
    events = list(registry.router("streaming").stream_chat_completion("hi"))
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert events[0].error is not None and "b down" in str(events[0].error)


def test_a_stream_skips_providers_without_keys(registry: Registry, register_fake: RegisterFake) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    register_fake(registry, "b", FakeReply(content="ok"))
    router = registry.router("streaming", prefer=["keyed", "b"])
    assert list(router.stream_text("hi")) == ["ok"]
    assert router.last_provider == "b"


def test_a_stream_with_no_buildable_provider_reports_every_error(registry: Registry) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    events = list(registry.router("streaming").stream_chat_completion("hi"))
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[0].error, FallbackExhaustedError)
    assert isinstance(events[0].error.errors["keyed"], ConfigurationError)


# -- the async twin ---------------------------------------------------------------------------------------


async def test_async_router_falls_back_and_reports(registry: Registry, two: tuple[FakeProvider, FakeProvider]) -> None:
    a, b = two
    a.script(*[FakeReply(error=ProviderTimeoutError("late", provider="a"))] * 2)
    b.script(FakeReply(content="async b"))
    router = registry.router("chat")
    response = await router.aio.chat_completion("hi")
    assert (response.content, response.provider, response.metadata["fallback_from"]) == ("async b", "b", ["a"])
    assert router.last_provider == "b"
    assert len(a.requests) == 2


async def test_async_router_never_falls_back_on_a_bad_request(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    a, b = two
    a.script(FakeReply(error=InvalidRequestError("bad", provider="a")))
    with pytest.raises(InvalidRequestError):
        await registry.router("chat").aio.generate_text("hi")
    assert b.requests == []


async def test_async_router_skips_missing_keys_and_exhausts(registry: Registry, register_fake: RegisterFake) -> None:
    registry.register(fake_spec("keyed", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    b = register_fake(registry, "b", FakeReply(content="fine"), FakeReply(error=ServerError("down", provider="b")))
    router = registry.router("chat", prefer=["keyed", "b"])
    assert await router.aio.generate_text("hi") == "fine"
    with pytest.raises(FallbackExhaustedError) as info:
        await router.aio.generate_text("hi")
    assert set(info.value.errors) == {"keyed", "b"}
    assert len(b.requests) == 2


async def test_async_streams_fall_back_only_before_the_first_token(
    registry: Registry, two: tuple[FakeProvider, FakeProvider]
) -> None:
    a, b = two
    a.script(*[FakeReply(error=RateLimitError("busy", provider="a", retry_after=0))] * 2)
    b.script(FakeReply(content="x y"))
    router = registry.router("streaming")
    events = [e async for e in router.aio.stream_chat_completion("hi")]
    assert [e.type for e in events] == [StreamEventType.TOKEN] * 2 + [StreamEventType.METADATA, StreamEventType.END]
    assert events[2].metadata is not None and events[2].metadata.extra["fallback_from"] == ["a"]
    assert router.last_provider == "b"

    a.script(FakeReply(content="p q", stream_error=ServerError("cut", provider="a"), stream_error_after=1))
    events = [e async for e in router.aio.stream_chat_completion("hi")]
    assert [e.type for e in events] == [StreamEventType.TOKEN, StreamEventType.ERROR, StreamEventType.END]
    assert len(b.requests) == 1  # only the first stream reached b
    assert "".join([t async for t in router.aio.stream_text("hi")]) == "echo: hi"


def test_router_providers_are_built_once(registry: Registry) -> None:
    registry.register(fake_spec("a"))
    router = registry.router("chat")
    router.chat_completion("one")
    router.chat_completion("two")
    [provider] = {id(router._provider(c)) for c in router.candidates("chat_completion")}
    assert provider == id(registry.get("a"))
    assert isinstance(registry.get("a"), FakeProvider)
    assert len(registry.get("a").requests) == 2  # type: ignore[attr-defined]


class MalformedAnswers(FakeProvider):
    """A provider whose upstream answers 200 with a body that is no valid answer: its parser
    refuses it, as the plugins' parsers refuse ``{}`` or an HTML page."""

    def parse_chat_response(self, raw: FakeReply, request: Any) -> Any:
        raise InvalidResponseError("the answer has no output", provider=self.identifier)

    def new_stream_parser(self, request: Any) -> Any:
        parser = super().new_stream_parser(request)

        class Refusing:
            def feed(self, chunk: Any) -> Any:
                raise InvalidResponseError("a stream chunk is not an event", provider="malformed")

            def finish(self) -> Any:
                return parser.finish()

        return Refusing()


def _malformed(registry: Registry, sleeps: Any) -> MalformedAnswers:
    spec = fake_spec("malformed")
    provider = MalformedAnswers(spec=spec, retry=sleeps.policy(max_attempts=3))
    registry.register(
        ProviderSpec(
            spec.identifier,
            spec.name,
            spec.features,
            lambda **_: provider,
            spec.models,
            spec.default_model,
            requires_credentials=False,
        )
    )
    return provider


def test_a_malformed_answer_is_not_retried_but_falls_back(
    registry: Registry, register_fake: RegisterFake, sleeps: Any
) -> None:
    malformed = _malformed(registry, sleeps)
    good = register_fake(registry, "good", FakeReply(content="from good"), FakeReply(content="async good"))
    router = registry.router("chat", prefer=["malformed", "good"])
    response = router.chat_completion("hi")
    assert (response.content, response.provider, response.metadata["fallback_from"]) == (
        "from good",
        "good",
        ["malformed"],
    )
    assert len(malformed.requests) == 1 and sleeps.waits == []  # sent once: the same body would come back
    assert asyncio.run(router.aio.chat_completion("hi")).content == "async good"
    assert len(malformed.requests) == 2 and len(good.requests) == 2


def test_a_stream_whose_first_chunk_is_malformed_falls_back(
    registry: Registry, register_fake: RegisterFake, sleeps: Any
) -> None:
    _malformed(registry, sleeps)
    register_fake(registry, "good", FakeReply(content="streamed by good"))
    events = list(registry.router("streaming", prefer=["malformed", "good"]).stream_chat_completion("hi"))
    assert "".join(e.text or "" for e in events) == "streamed by good"
    meta = events[-2].metadata
    assert meta is not None and meta.extra["fallback_from"] == ["malformed"]
