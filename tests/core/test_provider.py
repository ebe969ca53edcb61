"""The provider base class, exercised through the FakeProvider of llm_core.testing."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from llm_core import (
    CallContext,
    ChatMessage,
    ChatRequest,
    CompletionResponse,
    DecisionAnswer,
    DocumentPart,
    EmbeddingCapable,
    Feature,
    ImagePart,
    InvalidDecisionResponse,
    InvalidInputError,
    InvalidRequestError,
    InvalidResponseError,
    ModelInfo,
    PluginLoadError,
    ProbabilityKind,
    Prompt,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamEventType,
    TokenType,
    ToolCall,
    ToolSpec,
    UnknownFeatureError,
    UnsupportedFeatureError,
    Usage,
    VisionCapable,
)
from llm_core.provider import BaseProvider
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from llm_core.testing.fake import ALL_FEATURES, PNG_1X1

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32
PDF = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"
QUESTIONS = [
    {"kind": "yes_no", "key": "relevant", "instructions": "Is it relevant?"},
    {"kind": "choice", "key": "colour", "instructions": "Which colour?", "options": ["red", "blue"]},
    {"kind": "score", "key": "quality", "instructions": "How good?", "levels": ["bad", "ok", "good"]},
]

# a catalogue where each model lacks something
NARROW = fake_spec("narrow", models=[
    ModelInfo("all", ALL_FEATURES, extra={"native_decisions": True}),
    ModelInfo("text-only", ["chat", "completion"]),
])


def events_of(stream: Any) -> list[Any]:
    return list(stream)


# -- supports_feature -----------------------------------------------------------------------------


def test_the_fake_supports_everything_its_spec_declares(fake: FakeProvider) -> None:
    for feature in Feature:
        assert fake.supports_feature(feature) is (feature in ALL_FEATURES)
        assert fake.supports_feature(feature.value.upper()) is (feature in ALL_FEATURES)
    assert fake.supports_vision() and fake.supports_streaming() and fake.supports_tools()
    assert fake.supports_documents()


def test_supports_feature_refuses_unknown_names(fake: FakeProvider) -> None:
    with pytest.raises(UnknownFeatureError):
        fake.supports_feature("visoin")


def test_supports_feature_per_model() -> None:
    provider = FakeProvider(spec=NARROW)
    assert provider.supports_feature("vision", model="all")
    assert not provider.supports_feature("vision", model="text-only")
    assert provider.supports_feature("chat", model="text-only")
    assert provider.supports_feature("vision", model="not-in-catalogue")  # unknown models: provider level
    custom = FakeProvider(spec=NARROW, unknown_model_features=["chat"])
    assert not custom.supports_feature("vision", model="not-in-catalogue")


class StreamOnly(BaseProvider):
    """A provider class implementing the chat and stream methods only."""

    spec = fake_spec("streamonly", features=["chat", "completion", "streaming"])

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return {"text": request.messages[-1].text}

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        return payload["text"]

    async def _asend_chat(self, payload: dict[str, Any]) -> Any:
        return payload["text"]

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        return CompletionResponse(content=raw, model=request.model, provider=self.identifier)

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        return iter([payload["text"]])

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[Any]:
        async def chunks() -> AsyncIterator[Any]:
            yield payload["text"]

        return chunks()

    def new_stream_parser(self, request: ChatRequest) -> Any:
        raise NotImplementedError  # never streamed here


def test_supports_feature_agrees_with_the_class_and_the_spec() -> None:
    provider = StreamOnly()
    assert provider.supports_feature("streaming")
    assert provider.supports_feature("chat")
    assert not provider.supports_feature("vision")
    assert not provider.supports_feature("tools")
    assert StreamOnly.implemented_features() >= {Feature.CHAT, Feature.COMPLETION, Feature.STREAMING}
    # images and tools travel in the chat request: the class implements them, its spec does not offer them
    assert {Feature.VISION, Feature.TOOLS} <= StreamOnly.implemented_features()
    assert not {Feature.EMBEDDINGS, Feature.IMAGE, Feature.TOKEN_COUNTING} & StreamOnly.implemented_features()
    fake = FakeProvider(spec=fake_spec("chatty", features=["chat", "completion"]))
    assert isinstance(fake, VisionCapable)
    assert not isinstance(StreamOnly(), EmbeddingCapable)
    assert not fake.supports_feature("vision")
    assert not fake.supports_vision()


@pytest.mark.parametrize("feature", ["embeddings", "image", "token_counting"])
def test_a_spec_declaring_an_unimplemented_feature_is_a_plugin_load_error(feature: str) -> None:
    with pytest.raises(PluginLoadError, match=f"declares {feature}") as info:
        StreamOnly(spec=fake_spec("liar", features=["chat", "streaming", feature]))
    assert "StreamOnly" in str(info.value)


def test_a_class_implementing_part_of_a_family_is_refused_where_it_is_defined() -> None:
    with pytest.raises(TypeError, match=r"implements part of EmbeddingWire: no _send_embeddings \(did you mean"):

        class Misspelt(StreamOnly):
            def map_embedding_request(self, request: Any) -> dict[str, Any]:
                return {}

            def _send_embedding(self, payload: dict[str, Any]) -> Any:  # one letter short
                return None

            async def _asend_embeddings(self, payload: dict[str, Any]) -> Any:
                return None

            def parse_embedding_response(self, raw: Any, request: Any) -> Any:
                return None


def test_a_provider_class_without_a_spec_is_refused() -> None:
    class Nameless(BaseProvider):
        pass

    with pytest.raises(PluginLoadError, match="no ProviderSpec"):
        Nameless()


def test_the_async_view_refuses_capabilities_the_class_lacks() -> None:
    provider = StreamOnly()

    async def run() -> None:
        await provider.aio.embeddings("x")

    import asyncio

    with pytest.raises(UnsupportedFeatureError, match="embeddings"):
        asyncio.run(run())


# -- unsupported features raise before any request -------------------------------------------------


def unsupported_calls(provider: FakeProvider) -> dict[str, Any]:
    return {
        "image part": lambda: provider.chat_completion([ChatMessage.user(["see", ImagePart(data=PNG_1X1)])]),
        "document part": lambda: provider.chat_completion([ChatMessage.user(["read", DocumentPart(data=PDF)])]),
        "analyze_image": lambda: provider.analyze_image(PNG_1X1),
        "stream": lambda: provider.stream_chat_completion("hi"),
        "tools": lambda: provider.chat_completion_with_tools("hi", [ToolSpec(name="f")]),
        "json": lambda: provider.generate_json("hi"),
        # these pick a model of their own kind unless told which one
        "embeddings": lambda: provider.embeddings("hi", model=provider.default_model()),
        "image": lambda: provider.generate_image_bytes("a cat", model=provider.default_model()),
        "decide": lambda: provider.decide("task", QUESTIONS, model=provider.default_model()),
        "thinking": lambda: provider.chat_completion("hi", thinking=True),
    }


@pytest.mark.parametrize("call", list(unsupported_calls(FakeProvider())))
def test_a_model_without_the_feature_raises_before_sending(call: str) -> None:
    provider = FakeProvider(spec=NARROW, model="text-only")
    with pytest.raises(UnsupportedFeatureError) as info:
        unsupported_calls(provider)[call]()
    assert "text-only" in str(info.value)
    assert provider.requests == []


@pytest.mark.parametrize("call", list(unsupported_calls(FakeProvider())))
def test_a_provider_without_the_feature_raises_before_sending(call: str) -> None:
    provider = FakeProvider(spec=fake_spec("plain", features=["chat", "completion"]))
    with pytest.raises(UnsupportedFeatureError):
        unsupported_calls(provider)[call]()
    assert provider.requests == []


def test_the_per_call_model_is_checked_too() -> None:
    provider = FakeProvider(spec=NARROW)
    with pytest.raises(UnsupportedFeatureError, match="models that do: all"):
        provider.embeddings("x", model="text-only")
    assert provider.requests == []
    assert provider.chat_completion("hi", model="text-only").model == "text-only"
    # embeddings, images and decisions default to a catalogue model that offers them
    chat_only = FakeProvider(spec=NARROW, model="text-only")
    assert chat_only.embeddings("x").model == "all"
    assert chat_only.decide("task", QUESTIONS).model == "all"


# -- image and document checks ----------------------------------------------------------------------


class TinyLimits(FakeProvider):
    max_image_size = 64
    max_document_size = 64
    supported_image_formats = ("png", "jpeg")


@pytest.mark.parametrize(
    ("image", "match"),
    [
        (ImagePart(data=PNG_1X1, mime_type="image/jpeg"), "not the declared"),
        (ImagePart(data=JPEG, mime_type="image/png"), "not the declared"),
        (ImagePart(data=b"\x00not an image at all", mime_type="image/png"), "not a valid png"),
        (ImagePart(data=b"GIF89a" + b"\x00" * 10), "'gif' is not supported"),
        (ImagePart(data=b"BM" + b"\x00" * 10, mime_type="image/bmp"), "'bmp' is not supported"),
        (ImagePart(data=b"\x00\x01\x02"), "cannot tell the type"),
        (ImagePart(data=PNG_1X1 + b"\x00" * 100, mime_type="image/png"), "at most 64 bytes"),
        (ImagePart(url="https://example.com/cat.bmp"), "cannot tell the type"),
        (ImagePart(url="https://example.com/cat.gif"), "'gif' is not supported"),
    ],
)
def test_bad_images_are_invalid_input_and_nothing_is_sent(image: ImagePart, match: str) -> None:
    provider = TinyLimits()
    with pytest.raises(InvalidInputError, match=match):
        provider.chat_completion([ChatMessage.user(["look", image])])
    with pytest.raises(InvalidInputError, match=match):
        provider.analyze_image(image)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("document", "match"),
    [
        (DocumentPart(data=PNG_1X1, mime_type="application/pdf"), "not the declared"),
        (DocumentPart(data=b"plain text", mime_type="application/pdf"), "not a valid pdf"),
        (DocumentPart(data=b"PK\x03\x04 docx", mime_type="application/vnd.openxmlformats-officedocument"
                      ".wordprocessingml.document"), "is not supported"),
        (DocumentPart(data=PDF + b" " * 100), "at most 64 bytes"),
    ],
)
def test_bad_documents_are_invalid_input_and_nothing_is_sent(document: DocumentPart, match: str) -> None:
    provider = TinyLimits()
    with pytest.raises(InvalidInputError, match=match):
        provider.chat_completion([ChatMessage.user(["read", document])])
    assert provider.requests == []


def test_good_media_is_sent(fake: FakeProvider) -> None:
    response = fake.chat_completion([ChatMessage.user([
        "both", ImagePart(data=PNG_1X1), ImagePart(data=JPEG, mime_type="image/jpg"), DocumentPart(data=PDF),
    ])])
    assert response.content == "echo: both"
    assert len(fake.requests) == 1
    image = fake.analyze_image(f"data:image/png;base64,{base64.b64encode(PNG_1X1).decode()}", "What is it?")
    assert image.content == "echo: What is it?"
    assert fake.analyze_image("https://example.com/cat.png").provider == "fake"


def test_analyze_image_input_errors(fake: FakeProvider) -> None:
    with pytest.raises(InvalidInputError, match="bytes, an ImagePart"):
        fake.analyze_image("not-a-url")
    with pytest.raises(InvalidInputError, match="at least one image"):
        fake.analyze_image([])
    assert fake.requests == []


# -- chat calls ------------------------------------------------------------------------------------


def test_chat_completion_returns_the_scripted_reply(fake: FakeProvider) -> None:
    usage = Usage(prompt_tokens=3, completion_tokens=2, thinking_tokens=4)
    fake.script(FakeReply(content="Hello!", thinking="Greet.", usage=usage, metadata={"trace": "t1"}))
    response = fake.chat_completion([{"role": "user", "content": "Hi"}], temperature=0.0, max_tokens=10)
    assert (response.content, response.thinking, response.provider, response.model) == (
        "Hello!", "Greet.", "fake", "fake-model")
    assert response.usage.total_tokens == 9
    assert response.metadata == {"trace": "t1"}
    [request] = fake.requests
    assert request["operation"] == "chat"
    assert request["temperature"] == 0.0  # 0.0 is a value, not "unset"
    assert request["max_tokens"] == 10


def test_prompt_objects_system_text_and_call_options(fake: FakeProvider) -> None:
    prompt = Prompt(text="Question?", system="Be brief.", model="fake-fallback", temperature=0.5, max_tokens=7)
    response = fake.complete(prompt)
    assert response.model == "fake-fallback"
    request = fake.requests[0]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert (request["temperature"], request["max_tokens"]) == (0.5, 7)
    fake.chat_completion("x", system="Sys", call_context="AGENT_THOUGHT", thinking={"budget": 10})
    assert fake.requests[1]["messages"][0] == {"role": "system", "content": "Sys"}
    assert fake.requests[1]["call_context"] == "AGENT_THOUGHT"
    assert fake.requests[1]["thinking"] is True


@pytest.mark.parametrize(
    "options",
    [{"temperature": 3.0}, {"temperature": -1}, {"max_tokens": 0}, {"top_p": 2}, {"thinking": {"budget": -5}},
     {"thinking": {"level": "extreme"}}, {"call_context": "NOPE"}, {"tool_choice": " "}],
)
def test_invalid_call_options_are_invalid_input_before_sending(fake: FakeProvider, options: dict[str, Any]) -> None:
    with pytest.raises((InvalidInputError, ValueError)):
        fake.chat_completion("hi", **options)
    assert fake.requests == []


def test_generate_text_answer_and_complete(fake: FakeProvider) -> None:
    fake.script(FakeReply(content="one"), FakeReply(content="two"))
    assert fake.generate_text("a") == "one"
    assert fake.answer("b") == "two"
    assert fake.complete("c").content == "echo: c"


def test_tools_round_trip(fake: FakeProvider) -> None:
    call = ToolCall(id="call_1", name="weather", arguments={"city": "Oslo"})
    fake.script(FakeReply(tool_calls=[call]))
    response = fake.chat_completion_with_tools(
        "Weather in Oslo?",
        [{"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    )
    assert response.has_tool_calls and response.tool_calls == [call]
    assert response.finish_reason == "tool_calls"
    assert fake.requests[0]["tools"] == ["weather"]
    with pytest.raises(InvalidInputError, match="tool 0"):
        fake.chat_completion_with_tools("x", [{"name": "bad name"}])
    with pytest.raises(InvalidInputError, match="unique"):
        fake.chat_completion_with_tools("x", [ToolSpec(name="f"), ToolSpec(name="f")])
    with pytest.raises(InvalidInputError, match="at least one tool"):
        fake.chat_completion_with_tools("x", [])
    assert len(fake.requests) == 1


def test_sdk_exceptions_are_mapped_and_chained(fake: FakeProvider) -> None:
    class Broken(FakeProvider):
        def _send_chat(self, payload: dict[str, Any]) -> Any:
            raise KeyError("sdk internals")

    with pytest.raises(ProviderError) as info:
        Broken().chat_completion("hi")
    assert info.value.provider == "fake"
    assert isinstance(info.value.__cause__, KeyError)


def test_available_models_and_test_connection(fake: FakeProvider) -> None:
    assert fake.available_models() == ["fake-model", "fake-fallback"]
    status = fake.test_connection()
    assert status.success and status.models == ["fake-model", "fake-fallback"] and status.provider == "fake"
    assert fake.is_available()

    class Offline(FakeProvider):
        def _send_list_models(self) -> list[str]:
            raise ServerError("down", provider="fake", status_code=503)

    with pytest.raises(ProviderConnectionError, match="connection test failed: down") as info:
        Offline(retry={"max_attempts": 1}).test_connection()
    assert isinstance(info.value.__cause__, ServerError)


# -- sync and async agree -------------------------------------------------------------------------


async def test_sync_and_async_calls_give_equal_results() -> None:
    def script() -> list[FakeReply]:
        return [
            FakeReply(content="Hi", thinking="T", usage=Usage(prompt_tokens=1, completion_tokens=1)),
            FakeReply(content='{"a": 1}'),
            FakeReply(content="seen"),
            FakeReply(tool_calls=[ToolCall(id="1", name="f")]),
            FakeReply(vectors=[[0.1, 0.2]]),
            FakeReply(image=(PNG_1X1, "image/png")),
            FakeReply(),
            FakeReply(content='{"relevant": "yes", "colour": "red", "quality": 2}'),
            FakeReply(content="streamed text", thinking="hmm"),
        ]

    sync, async_ = FakeProvider(replies=script()), FakeProvider(replies=script())
    results = [
        sync.chat_completion("hi").model_dump(),
        sync.generate_json("json"),
        sync.analyze_image(PNG_1X1).model_dump(),
        sync.chat_completion_with_tools("t", [ToolSpec(name="f")]).model_dump(),
        sync.embeddings("e").model_dump(),
        sync.generate_image_bytes("cat"),
        sync.decide("task", QUESTIONS).model_dump(),
        sync.decide("task", QUESTIONS, model="fake-fallback").model_dump(),
        [(e.type, e.text, e.token_type) for e in sync.stream_chat_completion("s")],
    ]
    aio = async_.aio
    async_results = [
        (await aio.chat_completion("hi")).model_dump(),
        await aio.generate_json("json"),
        (await aio.analyze_image(PNG_1X1)).model_dump(),
        (await aio.chat_completion_with_tools("t", [ToolSpec(name="f")])).model_dump(),
        (await aio.embeddings("e")).model_dump(),
        await aio.generate_image_bytes("cat"),
        (await aio.decide("task", QUESTIONS)).model_dump(),
        (await aio.decide("task", QUESTIONS, model="fake-fallback")).model_dump(),
        [(e.type, e.text, e.token_type) async for e in aio.stream_chat_completion("s")],
    ]
    assert results == async_results
    assert [r["operation"] for r in sync.requests] == [r["operation"] for r in async_.requests]
    assert await aio.generate_text("x") == sync.generate_text("x")
    assert await aio.available_models() == sync.available_models()
    assert (await aio.test_connection()).models == sync.test_connection().models


# -- streaming --------------------------------------------------------------------------------------


def test_stream_order_tokens_metadata_end(fake: FakeProvider) -> None:
    usage = Usage(prompt_tokens=2, completion_tokens=3, thinking_tokens=1)
    fake.script(FakeReply(content="one two three", thinking="think", usage=usage, finish_reason="length"))
    events = events_of(fake.stream_chat_completion("count"))
    types = [e.type for e in events]
    assert types == [StreamEventType.TOKEN] * 4 + [StreamEventType.METADATA, StreamEventType.END]
    assert [(e.text, e.token_type) for e in events[:4]] == [
        ("think", TokenType.LLM_THINKING), ("one ", TokenType.LLM_RESPONSE), ("two ", TokenType.LLM_RESPONSE),
        ("three", TokenType.LLM_RESPONSE),
    ]
    meta = events[4].metadata
    assert meta is not None
    assert (meta.input_tokens, meta.output_tokens, meta.thinking_tokens, meta.stop_reason) == (2, 3, 1, "length")
    assert (meta.provider, meta.model) == ("fake", "fake-model")
    assert meta.time_to_first_token_ms is not None and meta.total_time_ms is not None
    assert 0 <= meta.time_to_first_token_ms <= meta.total_time_ms


@pytest.mark.parametrize(
    ("context", "thinking", "response"),
    [
        (CallContext.AGENT_THOUGHT, TokenType.AGENT_THOUGHT_LLM_THINKING, TokenType.AGENT_THOUGHT_LLM_RESPONSE),
        ("FINAL_SYNTHESIS", TokenType.FINAL_SYNTHESIS_LLM_THINKING, TokenType.FINAL_SYNTHESIS_LLM_RESPONSE),
    ],
)
def test_stream_token_types_follow_the_call_context(fake: FakeProvider, context: Any, thinking: TokenType,
                                                    response: TokenType) -> None:
    fake.script(FakeReply(content="answer", thinking="reason"))
    events = events_of(fake.stream_chat_completion("x", call_context=context))
    assert [e.token_type for e in events if e.type is StreamEventType.TOKEN] == [thinking, response]


def test_streamed_text_is_not_trimmed(fake: FakeProvider) -> None:
    fake.script(FakeReply(chunks=[("  lead", False), ("\n", False), ("trail  ", False)]))
    assert list(fake.stream_text("x")) == ["  lead", "\n", "trail  "]


def test_a_failure_mid_stream_gives_tokens_error_end(fake: FakeProvider) -> None:
    error = ServerError("boom", provider="fake", status_code=500)
    fake.script(FakeReply(content="a b c d", stream_error=error, stream_error_after=2))
    events = events_of(fake.stream_chat_completion("x"))
    assert [e.type for e in events] == [StreamEventType.TOKEN] * 2 + [StreamEventType.ERROR, StreamEventType.END]
    assert events[2].error is error
    assert len(fake.requests) == 1  # a stream that already delivered tokens is not retried


def test_a_failure_before_any_chunk_is_retried(fake: FakeProvider, sleeps: Any) -> None:
    fake.script(FakeReply(error=RateLimitError("slow", provider="fake", retry_after=0.01)), FakeReply(content="ok"))
    events = events_of(fake.stream_chat_completion("x"))
    assert [e.type for e in events] == [StreamEventType.TOKEN, StreamEventType.METADATA, StreamEventType.END]
    assert len(fake.requests) == 2
    assert sleeps.waits == [0.01]


def test_a_stream_that_cannot_open_gives_error_end(fake: FakeProvider) -> None:
    fake.script(FakeReply(error=InvalidRequestError("bad", provider="fake", status_code=400)))
    events = events_of(fake.stream_chat_completion("x"))
    assert [e.type for e in events] == [StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[0].error, InvalidRequestError)


def test_a_stream_with_an_empty_answer_still_ends_with_metadata(fake: FakeProvider) -> None:
    fake.script(FakeReply(content=""))
    assert [e.type for e in fake.stream_chat_completion("x")] == [StreamEventType.METADATA, StreamEventType.END]


def test_stream_input_errors_raise_at_once(fake: FakeProvider) -> None:
    with pytest.raises(InvalidInputError):
        fake.stream_chat_completion([])
    assert fake.requests == []


def test_stream_text_yields_only_response_text_and_raises_errors(fake: FakeProvider) -> None:
    fake.script(FakeReply(chunks=[("thought", True), ("Hello", False), ("", False), (" world", False)]))
    assert list(fake.stream_text("x")) == ["Hello", " world"]
    fake.script(FakeReply(content="a b", stream_error=ServerError("cut", provider="fake"), stream_error_after=1))
    received: list[str] = []
    with pytest.raises(ServerError, match="cut"):
        received.extend(fake.stream_text("x"))
    assert received == ["a "]


async def test_async_stream_order_and_errors(fake: FakeProvider) -> None:
    fake.script(FakeReply(content="x y", stream_error=ServerError("cut", provider="fake"), stream_error_after=1))
    events = [e async for e in fake.aio.stream_chat_completion("x")]
    assert [e.type for e in events] == [StreamEventType.TOKEN, StreamEventType.ERROR, StreamEventType.END]
    fake.script(FakeReply(chunks=[("t", True), ("a", False)]))
    assert [t async for t in fake.aio.stream_text("x")] == ["a"]


# -- generate_json -----------------------------------------------------------------------------------


class Person(BaseModel):
    name: str
    age: int


def test_generate_json_with_a_pydantic_model(fake: FakeProvider) -> None:
    fake.script(FakeReply(content='{"name": "Ada", "age": 36}'))
    person = fake.generate_json("Who?", Person)
    assert person == Person(name="Ada", age=36)
    assert fake.requests[0]["json_mode"] is True


@pytest.mark.parametrize("schema", [None, {"type": "object", "properties": {"n": {"type": "integer"}}}])
def test_generate_json_with_a_dict_schema_or_none(fake: FakeProvider, schema: Any) -> None:
    fake.script(FakeReply(content='{"n": 1, "list": [1, 2]}'))
    assert fake.generate_json("x", schema) == {"n": 1, "list": [1, 2]}


@pytest.mark.parametrize(
    ("reply", "schema", "match"),
    [
        (FakeReply(content="not json"), None, "not valid JSON"),
        (FakeReply(content='{"name": "Ada"}'), Person, "not valid JSON for the schema"),
        (FakeReply(content='{"name": "Ada", "ag', finish_reason="length"), Person, "raise max_tokens"),
        (FakeReply(content="I cannot help", finish_reason="content_filter"), None, "refused or was filtered"),
    ],
)
def test_generate_json_failures_carry_the_raw_text(fake: FakeProvider, reply: FakeReply, schema: Any,
                                                   match: str) -> None:
    fake.script(reply)
    with pytest.raises(InvalidResponseError, match=match) as info:
        fake.generate_json("x", schema)
    assert info.value.raw == reply.content
    assert info.value.provider == "fake"


@pytest.mark.parametrize("schema", ["a string", 42, str, [1]])
def test_generate_json_refuses_a_bad_schema_before_sending(fake: FakeProvider, schema: Any) -> None:
    with pytest.raises(InvalidInputError, match="schema"):
        fake.generate_json("x", schema)
    assert fake.requests == []


# -- embeddings and images -----------------------------------------------------------------------------


def test_embeddings(fake: FakeProvider) -> None:
    fake.script(FakeReply(vectors=[[1.0, 0.0], [0.0, 1.0]]))
    response = fake.embeddings(["a", "b"])
    assert response.dimensions == 2 and response.similarity(0, 1) == 0.0
    assert fake.embeddings("one", dimensions=8).dimensions == 8
    for bad in ([], [""], ["ok", "  "], "   "):
        with pytest.raises(InvalidInputError, match="non-empty strings"):
            fake.embeddings(bad)
    with pytest.raises(InvalidInputError, match="dimensions"):
        fake.embeddings("x", dimensions=0)
    assert len(fake.requests) == 2


def test_generate_image_bytes_and_the_retry_hook(fake: FakeProvider) -> None:
    fake.script(FakeReply(image=(JPEG, "image/jpeg")))
    assert fake.generate_image_bytes("a cat") == (JPEG, "image/jpeg")
    with pytest.raises(InvalidInputError, match="empty"):
        fake.generate_image_bytes("  ")
    with pytest.raises(InvalidInputError, match="bytes and a MIME type"):
        fake.generate_image_bytes("x", input_images=[ImagePart(data=PNG_1X1)])

    class Retrying(FakeProvider):
        def retry_image_request(self, request: Any, error: InvalidRequestError) -> Any:
            return request.model_copy(update={"size": "2K"}) if request.size == "4K" else None

    provider = Retrying(replies=[FakeReply(error=InvalidRequestError("4K not allowed", provider="fake")),
                                 FakeReply(image=(PNG_1X1, "image/png"))])
    assert provider.generate_image_bytes("cat", size="4K", input_images=[(PNG_1X1, "image/png")]) == (
        PNG_1X1, "image/png")
    assert [r["size"] for r in provider.requests] == ["4K", "2K"]
    assert provider.requests[0]["input_images"] == 1
    once = Retrying(replies=[FakeReply(error=InvalidRequestError("no", provider="fake"))] * 2)
    with pytest.raises(InvalidRequestError):
        once.generate_image_bytes("cat", size="4K")
    assert len(once.requests) == 2  # retried exactly once


# -- decisions -----------------------------------------------------------------------------------------


def test_native_decisions_are_calibrated_and_validated(fake: FakeProvider) -> None:
    response = fake.decide({"task": "Triage", "evidence": ["crash"]}, QUESTIONS)
    assert response.probability_kind is ProbabilityKind.CALIBRATED
    assert list(response.answers) == ["relevant", "colour", "quality"]
    assert response["colour"].choice == "red"
    assert fake.requests[0]["operation"] == "decision"
    assert "Task: Triage" in fake.requests[0]["subject"]


def test_native_decision_answers_that_break_the_rules_are_refused(fake: FakeProvider) -> None:
    answers = {
        "relevant": DecisionAnswer(key="relevant", kind="yes_no", value=0.5),
        "colour": DecisionAnswer(key="colour", kind="choice", choice="green"),
        "quality": DecisionAnswer(key="quality", kind="score", value=1),
    }
    fake.script(FakeReply(answers=answers))
    with pytest.raises(InvalidDecisionResponse) as info:
        fake.decide("task", QUESTIONS)
    assert (info.value.provider, info.value.key) == ("fake", "colour")


def test_decisions_fall_back_to_structured_output(fake: FakeProvider) -> None:
    fake.script(FakeReply(content='{"relevant": "no", "colour": "blue", "quality": 0}'))
    response = fake.decide("task", QUESTIONS, model="fake-fallback")
    assert response.probability_kind is ProbabilityKind.NONE
    assert response.metadata == {"fallback": "structured_output"}
    assert (response["relevant"].value, response["colour"].choice, response["quality"].choice) == (0.0, "blue", "bad")
    [request] = fake.requests
    assert request["operation"] == "chat" and request["json_mode"] is True
    assert "relevant: Is it relevant?" in request["last_user"]


def test_decision_fallback_failures(fake: FakeProvider) -> None:
    fake.script(FakeReply(content="nope"), FakeReply(content='{"relevant": "yes", "colour": "green", "quality": 0}'))
    with pytest.raises(InvalidResponseError):
        fake.decide("task", QUESTIONS, model="fake-fallback")
    with pytest.raises(InvalidDecisionResponse, match="colour"):
        fake.decide("task", QUESTIONS, model="fake-fallback")


@pytest.mark.parametrize(
    ("subject", "questions", "match"),
    [
        ({}, QUESTIONS, "subject"),
        ("task", [], "at least one question"),
        ("task", [{"kind": "yes_no", "key": "a", "instructions": " "}], "question 0"),
    ],
)
def test_decision_input_errors_raise_before_sending(fake: FakeProvider, subject: Any, questions: Any,
                                                    match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        fake.decide(subject, questions)
    assert fake.requests == []


class NoJson(FakeProvider):
    """Declares decisions but no structured output: the fallback cannot run."""

    spec = fake_spec("nojson", features=ALL_FEATURES - {Feature.JSON_MODE})


def test_decision_fallback_needs_structured_output() -> None:
    provider = NoJson()
    with pytest.raises((InvalidInputError, UnsupportedFeatureError)):
        provider.decide("task", QUESTIONS, model="fake-fallback")
    assert provider.requests == []


def test_abandoning_a_stream_closes_the_sdk_iterator() -> None:
    closed: list[bool] = []

    class Tracked(FakeProvider):
        def _send_stream(self, payload: dict[str, Any]) -> Any:
            inner = super()._send_stream(payload)

            def wrapped() -> Any:
                try:
                    yield from inner
                finally:
                    closed.append(True)

            return wrapped()

    provider = Tracked(replies=[FakeReply(content="a b c d e")])
    stream = provider.stream_chat_completion("x")
    assert next(stream).text == "a "
    stream.close()  # type: ignore[attr-defined]
    assert closed == [True]
