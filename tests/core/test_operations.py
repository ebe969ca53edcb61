"""Every operation is declared once (llm_core.operations) and every surface has it: the provider,
``provider.aio``, the router and ``router.aio``, with the declared signature and docstring; what a
class implements, what a router asks for and what observers hear all follow the declaration."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import llm_core
from llm_core import (
    BaseProvider,
    FallbackExhaustedError,
    Feature,
    ProviderSpec,
    RateLimitError,
    Registry,
    StreamEventType,
    TokenCount,
    UnsupportedFeatureError,
    hookimpl,
)
from llm_core.features import CHAT_OPTIONS
from llm_core.operation import Call, Cost, Stream, call
from llm_core.operations import DECLARED_ONLY, OPERATIONS, Operations, find
from llm_core.requests import ChatRequest
from llm_core.responses import CompletionResponse
from llm_core.specs import ModelInfo
from llm_core.testing import FakeProvider, FakeReply
from llm_core.wire import ChatRoute, ChatWire

RegisterFake = Callable[..., FakeProvider]


def surfaces(registry: Registry) -> dict[str, Any]:
    provider = FakeProvider()
    router = registry.router()
    return {"provider": provider, "provider.aio": provider.aio, "router": router, "router.aio": router.aio}


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_every_surface_has_every_operation_with_its_declared_signature(op: Any, registry: Registry) -> None:
    declared = inspect.signature(op._sync)  # the declaration's, ``self`` first
    declared = declared.replace(parameters=list(declared.parameters.values())[1:])
    for where, surface in surfaces(registry).items():
        method = getattr(surface, op.name)
        assert method.__name__ == op.name, where
        assert method.__doc__ == op.doc and op.doc.strip(), where
        assert inspect.signature(method) == declared, where
        assert inspect.iscoroutinefunction(method) == (where.endswith("aio") and isinstance(op, Call)), where


def test_operations_are_found_by_name() -> None:
    assert find("decide") is Operations.decide
    assert find(Operations.embeddings) is Operations.embeddings
    with pytest.raises(ValueError, match="'answerr' is not an operation; the operations are: chat_completion"):
        find("answerr")


def test_the_alias_answer_is_generate_text() -> None:
    assert Operations.answer is Operations.generate_text
    assert FakeProvider().answer("hi") == "echo: hi"
    assert [op.name for op in OPERATIONS].count("generate_text") == 1


def test_declared_only_features_are_those_with_no_operation_or_aspect() -> None:
    assert {op.feature for op in OPERATIONS} & DECLARED_ONLY == set()
    assert {Feature.AUDIO, Feature.TEXT_TO_SPEECH, Feature.TRANSCRIPTION} == DECLARED_ONLY


# -- what a class implements follows the operations' builders and hooks -------------------------


class ChatOnly(BaseProvider):
    """Chat hooks only: every other operation is unsupported, sync and async alike."""

    spec = ProviderSpec("chat-only", "Chat only", {"chat"}, factory=lambda **_: None, models=[ModelInfo("m", {"chat"})],
                       requires_credentials=False, default_model="m")

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return {"text": request.messages[-1].text}

    def _send_chat(self, payload: dict[str, Any]) -> str:
        return str(payload["text"])

    async def _asend_chat(self, payload: dict[str, Any]) -> str:
        return str(payload["text"])

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        return CompletionResponse(content=raw, model=request.model, provider=self.identifier)


class Counting(ChatOnly):
    """Adds the four count_tokens hooks: that alone makes it implement token counting."""

    spec = ProviderSpec(
        "counting",
        "Counting",
        {"chat", "token_counting"},
        factory=lambda **_: None,
        models=[ModelInfo("m", {"chat", "token_counting"})],
        requires_credentials=False,
        default_model="m",
    )

    def map_count_tokens_request(self, request: ChatRequest) -> dict[str, Any]:
        return {"words": [m.text for m in request.messages]}

    def _send_count_tokens(self, payload: dict[str, Any]) -> int:
        return sum(len(text.split()) for text in payload["words"])

    async def _asend_count_tokens(self, payload: dict[str, Any]) -> int:
        return self._send_count_tokens(payload)

    def parse_count_tokens(self, raw: int, request: ChatRequest) -> TokenCount:
        return TokenCount(input_tokens=raw, model=request.model, provider=self.identifier)


def test_implemented_features_follow_the_wire_methods_a_class_has() -> None:
    # every chat-shaped operation goes through the chat methods (decisions as structured output)
    chat_shaped = {op.feature for op in OPERATIONS if op.route.wire is ChatWire} | {Feature.DECISION}
    assert ChatOnly.implemented_features() == chat_shaped | {Feature.DOCUMENTS} | CHAT_OPTIONS | DECLARED_ONLY
    assert Counting.implemented_features() - ChatOnly.implemented_features() == {Feature.TOKEN_COUNTING}
    assert FakeProvider.implemented_features() >= {op.feature for op in OPERATIONS}


@pytest.mark.parametrize(
    "name", [op.name for op in OPERATIONS if op.feature not in (Feature.CHAT, Feature.COMPLETION)]
)
def test_an_operation_a_class_lacks_raises_unsupported_sync_and_async(name: str) -> None:
    provider = ChatOnly()
    op = find(name)
    args, options = op.example
    refused = f"Chat only does not support {op.feature.value}"
    with pytest.raises(UnsupportedFeatureError, match=refused):
        getattr(provider, name)(*args, **options)

    async def call_aio() -> Any:
        result = getattr(provider.aio, name)(*args, **options)
        return await result if inspect.iscoroutine(result) else result

    with pytest.raises(UnsupportedFeatureError, match=refused):
        asyncio.run(call_aio())


def test_a_class_with_the_hooks_gets_the_operation_on_every_surface() -> None:
    provider = Counting()
    assert provider.count_tokens("one two three").input_tokens == 3
    assert asyncio.run(provider.aio.count_tokens("one two", system="be brief")).input_tokens == 4


# -- a plugin declares an operation of its own the same way ------------------------------------


class ShoutRoute(ChatRoute):
    """The plugin's own request builder, then the chat methods."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ChatRequest:
        request: ChatRequest = p.build_shout_request(*args, **options)
        return request


class Shouting(ChatOnly):
    """A plugin-level operation: its own builder, through the chat hooks, with its own answer."""

    @call(
        Feature.CHAT,
        route=ShoutRoute(),
        observed_as="shout",
        finish=lambda response, *args, **options: response.content.upper(),
        example=(("hi",), {}),
    )
    def shout(self, /, text: str, **options: Any) -> str:  # type: ignore[empty-body]
        """The model's answer to ``text``, in capitals."""

    def build_shout_request(self, text: str, **options: Any) -> ChatRequest:
        return self.builder.chat(f"{text}!", **options)


def test_a_plugin_declares_its_own_operation_for_sync_and_aio() -> None:
    provider = Shouting()
    assert provider.shout("hello") == "HELLO!"
    assert isinstance(vars(Shouting)["shout"], Call)
    # provider.aio is the core's view: a plugin adds its operations to its own view class, the
    # way the Gemini plugin adds generate_imagen (AsyncGeminiProvider.generate_imagen = ...)
    assert not hasattr(provider.aio, "shout")


# -- the router: one fallback loop for calls, streams and conversations ------------------------


def two_providers(registry: Registry, register_fake: RegisterFake) -> tuple[FakeProvider, FakeProvider]:
    a = register_fake(registry, "a")
    b = register_fake(registry, "b")
    return a, b


class Observed:
    def __init__(self) -> None:
        self.after: list[dict[str, Any]] = []
        self.before: list[dict[str, Any]] = []

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self.before.append(event)

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.after.append(event)


def test_router_aio_has_generate_image_and_falls_back(registry: Registry, register_fake: RegisterFake) -> None:
    a, _ = two_providers(registry, register_fake)
    a.script(FakeReply(error=RateLimitError("busy", provider="a", retry_after=0)))
    image = asyncio.run(registry.router("image").aio.generate_image("a red square"))
    assert image.metadata == {"answered_by": "b", "fallback_from": ["a"]}


def test_router_count_tokens_falls_back_and_is_observed(registry: Registry, register_fake: RegisterFake) -> None:
    a, _ = two_providers(registry, register_fake)
    seen = Observed()
    registry.add_observer(seen)
    a.script(FakeReply(error=RateLimitError("busy", provider="a", retry_after=0)))
    counted = registry.router().count_tokens("three words here")
    assert (counted.input_tokens, counted.provider, counted.metadata["fallback_from"]) == (3, "b", ["a"])
    assert [e["operation"] for e in seen.before] == ["count_tokens", "count_tokens"]
    assert "token_counting" in seen.before[0]["features"]
    assert [e["operation"] for e in seen.after] == ["count_tokens", "fallback"]


def test_a_stream_through_a_router_names_who_answered(registry: Registry, register_fake: RegisterFake) -> None:
    a, b = two_providers(registry, register_fake)
    a.script(FakeReply(error=RateLimitError("busy", provider="a", retry_after=0)))
    b.script(FakeReply(content="from b"))
    events = list(registry.router().stream_chat_completion("hi"))
    meta = next(e.metadata for e in events if e.type is StreamEventType.METADATA)
    assert meta is not None and meta.extra["answered_by"] == "b" and meta.extra["fallback_from"] == ["a"]


def test_a_conversation_fallback_is_observed_like_a_router_call(
    registry: Registry, register_fake: RegisterFake
) -> None:
    a, _ = two_providers(registry, register_fake)
    seen = Observed()
    registry.add_observer(seen)
    a.script(FakeReply(error=RateLimitError("busy", provider="a", retry_after=0)))
    reply = registry.router().conversation().send("hi")
    assert reply.metadata["answered_by"] == "b"
    fallbacks = [e for e in seen.after if e["operation"] == "fallback"]
    assert [(e["provider"], e["fallback_from"]) for e in fallbacks] == [("b", ["a"])]


def test_a_conversation_stream_through_a_router_closes_the_provider_stream_when_left(
    registry: Registry, register_fake: RegisterFake
) -> None:
    a, _ = two_providers(registry, register_fake)
    a.script(FakeReply(content="one two three four"))
    closed: list[str] = []
    opened = a._open_stream

    def tracked(*args: Any) -> Any:
        events = opened(*args)

        def watch() -> Any:
            try:
                yield from events
            finally:
                closed.append("a")

        return watch()

    a._open_stream = tracked  # type: ignore[method-assign]
    stream = registry.router().conversation().stream("hi")
    first = next(e for e in stream if e.type is StreamEventType.TOKEN)
    assert first.text and closed == []
    stream.close()
    assert closed == ["a"]


def test_every_provider_failing_is_one_error(registry: Registry, register_fake: RegisterFake) -> None:
    a, b = two_providers(registry, register_fake)
    for fake in (a, b):
        fake.script(FakeReply(error=RateLimitError("busy", provider=fake.identifier, retry_after=0)))
    with pytest.raises(FallbackExhaustedError) as info:
        registry.router().chat_completion("hi")
    assert list(info.value.errors) == ["a", "b"]


# -- the public names --------------------------------------------------------------------------


def _type_checking_names() -> set[str]:
    tree = ast.parse(Path(llm_core.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    return {alias.asname or alias.name for n in block.body if isinstance(n, ast.ImportFrom) for alias in n.names}


def test_the_names_type_checkers_see_are_the_exported_ones() -> None:
    assert _type_checking_names() == set(llm_core.__all__)
    for name in llm_core.__all__:
        assert getattr(llm_core, name) is not None


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_every_operation_answers_with_an_exported_type(op: Any) -> None:
    answer = op._sync.__wrapped__.__annotations__["return"]  # e.g. "Iterator[StreamEvent]"
    named = set(re.findall(r"[A-Za-z_]\w*", answer)) - {"Any", "Iterator", "str", "bytes", "tuple"}
    assert named <= set(llm_core.__all__), answer


def test_costs_and_streams_follow_the_declarations() -> None:
    assert {op.name for op in OPERATIONS if isinstance(op, Stream)} == {"stream_chat_completion", "stream_text"}
    assert {op.name: op.cost for op in OPERATIONS if op.cost is not Cost.TOKENS} == {
        "embeddings": Cost.PROMPT,
        "generate_image": Cost.IMAGE,
        "generate_image_bytes": Cost.IMAGE,
        "count_tokens": Cost.FREE,
    }
