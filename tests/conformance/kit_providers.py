"""Providers for testing the conformance kit: FakeProvider scripted per scenario, and providers
that each break one claim. ``BROKEN`` maps each broken provider to the checks it must fail.

This module is loaded by the conftest and copied into pytester runs (it imports nothing from the
test tree).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from llm_core.decisions import DecisionResponse
from llm_core.errors import InvalidInputError, LLMError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.requests import ChatRequest, EmbeddingRequest, ImageRequest
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, TokenCount, Usage
from llm_core.specs import ModelInfo
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from llm_core.testing.fake import ALL_FEATURES, PNG_1X1
from llm_core.tools import ToolCall

KEY = "test-key-123"
CALL = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})


def replies(scenario: str) -> list[FakeReply]:
    """Enough replies for any check of ``scenario`` (each check gets a fresh provider)."""
    usage = Usage(prompt_tokens=7, completion_tokens=5)
    reset = ConnectionResetError("connection reset by peer")  # a raw "SDK" error, mapped by the provider
    per_scenario: dict[str, list[FakeReply]] = {
        "chat": [FakeReply(content="Hello, reader, nice to meet you!", usage=usage)],
        "error": [FakeReply(error=reset)],  # type: ignore[arg-type]
        "stream": [FakeReply(content="one, two, three, four, five", thinking="Counting.", usage=usage)],
        "stream_error": [FakeReply(content="six, seven", stream_error=reset, stream_error_after=1)],  # type: ignore[arg-type]
        "tools": [FakeReply(tool_calls=[CALL]), FakeReply(content="It is sunny and 18 degrees in Paris.")],
        "tool_loop": [FakeReply(tool_calls=[CALL]), FakeReply(content="It is sunny and 18 degrees in Paris.")],
        "json": [FakeReply(content='{"name": "Paris", "country": "France", "population": 2100000}')],
        "vision": [FakeReply(content="Red.")],
        "documents": [FakeReply(content="42 EUR.")],
        "thinking": [FakeReply(content="No: 391 = 17 x 23.", thinking="Try small primes: 17 x 23 = 391.")],
        "stream_thinking": [FakeReply(content="Three.", thinking="s-t-r-a-w-b-e-r-r-y: three r's.", usage=usage)],
        "thinking_tools": [
            FakeReply(tool_calls=[CALL], thinking="The user asks about Paris."),
            FakeReply(content="Yes: 18 degrees and sunny in Paris."),
        ],
    }
    return per_scenario.get(scenario, []) * 4


def scripted_fake(scenario: str, cls: type[FakeProvider] = FakeProvider, **config: Any) -> FakeProvider:
    """``cls`` with the replies of ``scenario`` queued and a test key."""
    return cls(replies=replies(scenario), api_key=KEY, **config)


# -- providers that each break one claim ----------------------------------------------------


class _MetadataTwiceParser:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        events = list(self._inner.feed(chunk))
        if isinstance(chunk, FakeReply):  # the parser wrongly reports metadata itself
            events.append(StreamEvent.meta(self._inner.finish()))
        return events

    def finish(self) -> Any:
        return self._inner.finish()


class MetadataTwice(FakeProvider):
    """Its stream parser emits METADATA, and the core adds the real one: two METADATA events."""

    def new_stream_parser(self, request: ChatRequest) -> Any:
        return _MetadataTwiceParser(super().new_stream_parser(request))


class _ThinkingDroppedParser:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        return [event for event in self._inner.feed(chunk) if not event.is_thinking]

    def finish(self) -> Any:
        return self._inner.finish()


class StreamDropsThinking(FakeProvider):
    """Claims thinking, but its stream parser drops the thinking tokens."""

    def new_stream_parser(self, request: ChatRequest) -> Any:
        return _ThinkingDroppedParser(super().new_stream_parser(request))


class StreamRaises(FakeProvider):
    """A failing stream raises the raw exception instead of yielding ERROR then END."""

    def stream_chat_completion(self, messages: Any, **options: Any) -> Iterator[StreamEvent]:
        events = super().stream_chat_completion(messages, **options)

        def raising() -> Iterator[StreamEvent]:
            for event in events:
                if event.type is StreamEventType.ERROR and event.error is not None:
                    raise event.error.__cause__ or event.error
                yield event

        return raising()


class StreamTextWithThinking(FakeProvider):
    """``stream_text`` also yields the thinking tokens."""

    def stream_text(self, prompt: Any, **options: Any) -> Iterator[str]:
        for event in self.stream_chat_completion(prompt, **options):
            if event.type is StreamEventType.TOKEN and event.text:
                yield event.text


class DropsToolCalls(FakeProvider):
    """Claims tools, but its parser never returns the calls."""

    def parse_chat_response(self, raw: FakeReply, request: ChatRequest) -> CompletionResponse:
        return super().parse_chat_response(raw, request).model_copy(update={"tool_calls": None})


class RejectsToolResults(FakeProvider):
    """Its request mapper cannot send a tool result back (and lets a raw error escape)."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        if any(m.role.value == "tool" for m in request.messages):
            raise ValueError("tool messages are not supported")
        return super().map_chat_request(request)


class JsonAsText(FakeProvider):
    """Ignores json_mode: answers prose, so generate_json cannot validate."""

    def parse_chat_response(self, raw: FakeReply, request: ChatRequest) -> CompletionResponse:
        response = super().parse_chat_response(raw, request)
        if request.json_mode:
            return response.model_copy(update={"content": "The capital of France is Paris."})
        return response


class RawErrors(FakeProvider):
    """Its error mapper re-raises the SDK exception: errors leave the taxonomy."""

    def map_error(self, error: BaseException) -> LLMError:
        raise error


class UntypedErrors(FakeProvider):
    """Maps every failure to the bare LLMError base class instead of a ProviderError."""

    def map_error(self, error: BaseException) -> LLMError:
        return LLMError(str(error), provider=self.identifier)


class AsyncDiffers(FakeProvider):
    """Its async chat path answers differently from the sync one."""

    async def _asend_chat(self, payload: dict[str, Any]) -> FakeReply:
        reply = await super()._asend_chat(payload)
        return FakeReply(content=reply.content.upper(), tool_calls=reply.tool_calls, thinking=reply.thinking)


class SendsBeforeValidating(FakeProvider):
    """Sends the embedding input before the core validated it."""

    def embeddings(self, input: Any, **options: Any) -> EmbeddingResponse:
        self._send_embeddings({"inputs": input})
        return super().embeddings(input, **options)


PER_MODEL_SPEC = fake_spec(
    "per-model",
    models=[
        ModelInfo("fake-model", ALL_FEATURES, extra={"native_decisions": True}),
        ModelInfo("fake-embed", [Feature.EMBEDDINGS]),
    ],
)


class PerModelFake(FakeProvider):
    """Correct: a catalogue where one model only embeds (the kit probes its missing features)."""

    spec = PER_MODEL_SPEC


class IgnoresModelFeatures(PerModelFake):
    """Checks features per provider only: a model without chat is still sent chat requests."""

    def _require(self, feature: Feature, model: str) -> None:
        if feature not in self.provider_spec.features:
            raise UnsupportedFeatureError(f"{self.name} does not support {feature.value}", provider=self.identifier)


class LeakyRepr(FakeProvider):
    """Shows its API key in repr."""

    def __repr__(self) -> str:
        key = self.api_key.reveal() if self.api_key else None
        return f"<LeakyRepr key={key}>"


class OverconfidentDecisions(FakeProvider):
    """Bypasses answer validation and reports P(yes) = 1.5."""

    def decide(self, subject: Any, questions: Any, **options: Any) -> DecisionResponse:
        response = super().decide(subject, questions, **options)
        answers = dict(response.answers)
        answers["needs_human"] = answers["needs_human"].model_copy(update={"value": 1.5})
        return response.model_copy(update={"answers": answers})


class MislabelledImages(FakeProvider):
    """Returns PNG bytes labelled image/jpeg."""

    def parse_image_response(self, raw: FakeReply, request: ImageRequest) -> ImageResponse:
        return ImageResponse(data=PNG_1X1, mime_type="image/jpeg", model=request.model, provider=self.identifier)


class OneVectorOnly(FakeProvider):
    """Returns one vector for any number of inputs."""

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        response = super().parse_embedding_response(raw, request)
        return response.model_copy(update={"vectors": response.vectors[:1]})


class LosesThinking(FakeProvider):
    """Claims thinking, but its parser drops the thoughts."""

    def parse_chat_response(self, raw: FakeReply, request: ChatRequest) -> CompletionResponse:
        return super().parse_chat_response(raw, request).model_copy(update={"thinking": None})


class CountsNothing(FakeProvider):
    """Claims token counting, but reports 0 tokens whatever it is asked (a missing count read as 0)."""

    def parse_count_tokens(self, raw: Any, request: ChatRequest) -> TokenCount:
        return TokenCount(input_tokens=0, model=request.model, provider=self.identifier)


class DropsSamplingParameters(FakeProvider):
    """Its request mapper never sends temperature or max_tokens."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return {**super().map_chat_request(request), "temperature": None, "max_tokens": None}


class IgnoresToolChoice(FakeProvider):
    """Its request mapper never sends tool_choice."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return {**super().map_chat_request(request), "tool_choice": None}


class ChatOnlyFake(FakeProvider):
    """Correct, and claims only chat and completion: every other check is skipped."""

    spec = fake_spec("chat-only", features=[Feature.CHAT, Feature.COMPLETION])


class _EchoChat(BaseProvider):
    """A minimal hand-written provider: chat only, echoing the prompt."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return {"model": request.model, "text": request.messages[-1].text}

    def _send_chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    async def _asend_chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    def parse_chat_response(self, raw: dict[str, Any], request: ChatRequest) -> CompletionResponse:
        return CompletionResponse(content=json.dumps(raw), model=request.model, provider=self.identifier)

    def _send_list_models(self) -> list[str]:
        return ["echo"]

    async def _asend_list_models(self) -> list[str]:
        return ["echo"]


class DeclaresStreaming(_EchoChat):
    """Its spec declares streaming, but the class is not StreamingCapable: it cannot be built."""

    spec = fake_spec("declares-streaming", features=[Feature.CHAT, Feature.STREAMING])


#: Broken provider → the checks (test names) it must fail; every other check must pass or skip.
BROKEN: dict[type[BaseProvider], set[str]] = {
    MetadataTwice: {"test_stream_event_order", "test_stream_sync_and_async_agree", "test_stream_thinking"},
    StreamRaises: {"test_stream_error_ends_with_error_then_end", "test_stream_error_sync_and_async_agree"},
    # its stream_text also swallows the stream's error
    StreamTextWithThinking: {"test_stream_text_is_only_text", "test_stream_error_ends_with_error_then_end"},
    DropsToolCalls: {
        "test_tool_call_round_trip",
        "test_tools_sync_and_async_agree",
        "test_tool_loop",
        "test_thinking_with_tools",
    },
    RejectsToolResults: {
        "test_tool_call_round_trip",
        "test_tools_sync_and_async_agree",
        "test_tool_loop",
        "test_thinking_with_tools",
    },
    JsonAsText: {"test_json_validates_into_model", "test_json_sync_and_async_agree"},
    RawErrors: {
        "test_error_maps_to_taxonomy",
        "test_error_sync_and_async_agree",
        "test_stream_error_ends_with_error_then_end",
        "test_stream_error_sync_and_async_agree",
    },
    UntypedErrors: {
        "test_error_maps_to_taxonomy",
        "test_error_sync_and_async_agree",
        "test_stream_error_ends_with_error_then_end",
        "test_stream_error_sync_and_async_agree",
    },
    AsyncDiffers: {
        "test_chat_sync_and_async_agree",
        "test_tools_sync_and_async_agree",
        "test_tool_loop",
        "test_json_sync_and_async_agree",
        "test_vision_sync_and_async_agree",
    },
    SendsBeforeValidating: {"test_invalid_input_sends_nothing"},
    IgnoresModelFeatures: {"test_unsupported_features_send_nothing"},
    LeakyRepr: {"test_secrets_stay_hidden"},
    OverconfidentDecisions: {"test_decision_response", "test_decision_sync_and_async_agree"},
    MislabelledImages: {"test_image_response", "test_image_sync_and_async_agree"},
    OneVectorOnly: {"test_embeddings_response", "test_embeddings_sync_and_async_agree"},
    LosesThinking: {"test_thinking_response"},
    CountsNothing: {"test_count_tokens_response", "test_count_tokens_sync_and_async_agree"},
    StreamDropsThinking: {"test_stream_thinking"},
    DropsSamplingParameters: {"test_sampling_parameters_are_sent"},
    IgnoresToolChoice: {"test_tool_choice_is_sent"},
}

#: Broken provider → a phrase its first failing check's message must contain.
MESSAGES: dict[type[BaseProvider], str] = {
    MetadataTwice: "exactly one METADATA must come right before END",
    StreamRaises: "instead of yielding ERROR then END",
    StreamTextWithThinking: "stream_text() and the stream's response tokens differ",
    DropsToolCalls: "returned no tool call",
    RejectsToolResults: "sending the tool result back failed: ValueError",
    JsonAsText: "generate_json failed: InvalidResponseError",
    RawErrors: "let builtins.ConnectionResetError escape",
    UntypedErrors: "raised LLMError ([fake] connection reset by peer), expected ProviderError",
    AsyncDiffers: "chat_completion differ",
    SendsBeforeValidating: "sent a request (_send_embeddings) for a blank embedding input",
    IgnoresModelFeatures: "sent a request for chat with model fake-embed",
    LeakyRepr: "the API key shows in the provider's repr",
    OverconfidentDecisions: "P(yes) 1.5 is not a probability",
    MislabelledImages: "the image bytes are image/png but the response says image/jpeg",
    OneVectorOnly: "2 inputs gave 1 vectors",
    LosesThinking: "returned no thinking",
    CountsNothing: "count_tokens counted 0 tokens for a prompt",
    StreamDropsThinking: "a stream with thinking=True carried no thinking token",
    DropsSamplingParameters: "temperature=0.37 is nowhere in the payload handed to _send_chat",
    IgnoresToolChoice: "tool_choice is not mapped",
}

__all__ = ["BROKEN", "CALL", "KEY", "ChatOnlyFake", "DeclaresStreaming", "InvalidInputError", "PerModelFake"]
