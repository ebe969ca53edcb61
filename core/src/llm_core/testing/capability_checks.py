"""The conformance kit's checks of the optional capabilities: tools, structured output, vision,
documents, thinking, embeddings, image generation, decisions and token counting."""

from __future__ import annotations

from typing import Any

from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.responses import VisionResponse
from llm_core.testing import scenarios as sc
from llm_core.testing.checks import (
    agree,
    check_completion,
    check_decision,
    check_embeddings,
    check_image,
    check_json,
    check_stream,
    check_stream_thinking,
    check_token_count,
    check_tool_answer,
    check_tool_call,
    check_tool_loop,
    completion_key,
    decision_key,
    expect,
    short,
    stream_key,
)
from llm_core.testing.conformance_calls import astream_events, call_both, call_ok, stream_events


class CapabilityChecks:
    """Checks of one optional capability each; :class:`~llm_core.testing.conformance.ProviderConformance`
    inherits them and skips those whose feature the provider does not claim."""

    def model(self, provider: BaseProvider, feature: Feature) -> str | None:
        """The model a check uses for ``feature`` (defined by ``ProviderConformance``)."""
        raise NotImplementedError

    # -- tools ---------------------------------------------------------------------------

    def test_tool_call_round_trip(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.TOOLS)
        first = call_ok(provider, "the tool call", sc.call, "tools", provider, model)
        check_tool_call(provider, first)
        second = call_ok(provider, "sending the tool result back", sc.tool_result_call, provider, first, model)
        check_tool_answer(provider, second)

    def test_tools_sync_and_async_agree(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.TOOLS)
        first = call_ok(provider, "the tool call", sc.call, "tools", provider, model)
        check_tool_call(provider, first)
        second = call_ok(provider, "sending the tool result back", sc.tool_result_call, provider, first, model)
        afirst = call_ok(provider, "the async tool call", sc.call, "tools", provider.aio, model)
        check_tool_call(provider, afirst)
        asecond = call_ok(
            provider, "sending the tool result back (aio)", sc.tool_result_call, provider.aio, afirst, model
        )
        check_tool_answer(provider, asecond)
        agree(provider, "tool calls", completion_key(first), completion_key(afirst))
        agree(provider, "answers to the tool result", completion_key(second), completion_key(asecond))

    def test_tool_loop(self, provider: BaseProvider) -> None:
        """``provider.conversation(tools=[a function])`` runs the loop, sync and async alike."""
        model = self.model(provider, Feature.TOOLS)
        response = call_ok(provider, "a conversation's tool loop", sc.tool_loop, provider, model)
        check_tool_loop(provider, response)
        aresponse = call_ok(provider, "a conversation's tool loop (aio)", sc.tool_loop, provider.aio, model)
        check_tool_loop(provider, aresponse)
        agree(provider, "tool loops", completion_key(response), completion_key(aresponse))

    # -- structured output ---------------------------------------------------------------

    def test_json_validates_into_model(self, provider: BaseProvider) -> None:
        result = call_ok(provider, "generate_json", sc.call, "json", provider, self.model(provider, Feature.JSON_MODE))
        check_json(provider, result)

    def test_json_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync, async_ = call_both(provider, "json", self.model(provider, Feature.JSON_MODE))
        check_json(provider, async_)
        agree(provider, "generate_json results", sync.model_dump(), async_.model_dump())

    # -- vision, documents, thinking -----------------------------------------------------

    def test_vision_response(self, provider: BaseProvider) -> None:
        response = call_ok(provider, "analyze_image", sc.call, "vision", provider, self.model(provider, Feature.VISION))
        expect(
            isinstance(response, VisionResponse),
            f"{provider.identifier}: analyze_image returned {type(response).__name__}, not VisionResponse",
        )
        check_completion(provider, response, "analyze_image")

    def test_vision_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync, async_ = call_both(provider, "vision", self.model(provider, Feature.VISION))
        expect(isinstance(async_, VisionResponse), f"{provider.identifier}: aio.analyze_image returned {short(async_)}")
        agree(provider, "analyze_image", completion_key(sync), completion_key(async_))

    def test_documents_response(self, provider: BaseProvider) -> None:
        response = call_ok(
            provider, "the documents chat", sc.call, "documents", provider, self.model(provider, Feature.DOCUMENTS)
        )
        check_completion(provider, response, "chat_completion with a PDF")

    def test_thinking_response(self, provider: BaseProvider) -> None:
        response = call_ok(
            provider, "the thinking chat", sc.call, "thinking", provider, self.model(provider, Feature.THINKING)
        )
        check_completion(provider, response, "chat_completion(thinking=True)")
        expect(
            response.has_thinking,
            f"{provider.identifier} claims thinking, but chat_completion(thinking=True) returned no thinking",
        )

    def test_stream_thinking(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.THINKING)
        events = stream_events(provider, "stream_thinking", model)
        check_stream(provider, events)
        check_stream_thinking(provider, events)
        aevents = astream_events(provider, "stream_thinking", model)
        check_stream(provider, aevents)
        agree(provider, "streams with thinking", stream_key(events), stream_key(aevents))

    def test_thinking_with_tools(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.THINKING)
        first = call_ok(provider, "the tool call with thinking", sc.call, "thinking_tools", provider, model)
        check_tool_call(provider, first)
        second = call_ok(
            provider,
            "sending the tool result back after the answer's assistant turn (to_message(): tool calls and metadata "
            "such as thought signatures; with cassettes, a request that differs from the recorded one fails here)",
            sc.thinking_tool_result_call,
            provider,
            first,
            model,
        )
        check_tool_answer(provider, second)

    # -- embeddings ----------------------------------------------------------------------

    def test_embeddings_response(self, provider: BaseProvider) -> None:
        response = call_ok(
            provider, "embeddings", sc.call, "embeddings", provider, self.model(provider, Feature.EMBEDDINGS)
        )
        check_embeddings(provider, response, len(sc.EMBEDDING_INPUTS))

    def test_embeddings_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync, async_ = call_both(provider, "embeddings", self.model(provider, Feature.EMBEDDINGS))
        check_embeddings(provider, async_, len(sc.EMBEDDING_INPUTS))
        agree(provider, "embedding vectors", sync.vectors, async_.vectors)

    # -- image generation ----------------------------------------------------------------

    def test_image_response(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.IMAGE)
        image = call_ok(provider, "generate_image", sc.call, "image", provider, model)
        check_image(provider, image)
        generator: Any = provider
        data, mime = call_ok(
            provider, "generate_image_bytes", generator.generate_image_bytes, sc.IMAGE_PROMPT, model=model
        )
        agree(provider, "generated images", (image.data, image.mime_type), (data, mime), ("image", "bytes"))

    def test_image_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync, async_ = call_both(provider, "image", self.model(provider, Feature.IMAGE))
        check_image(provider, async_)
        agree(provider, "generated images", (sync.data, sync.mime_type), (async_.data, async_.mime_type))

    # -- decisions -----------------------------------------------------------------------

    def test_decision_response(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.DECISION)
        check_decision(provider, call_ok(provider, "decide", sc.call, "decision", provider, model), model)

    def test_decision_sync_and_async_agree(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.DECISION)
        sync, async_ = call_both(provider, "decision", model)
        check_decision(provider, async_, model)
        agree(provider, "decisions", decision_key(sync), decision_key(async_))

    # -- token counting ------------------------------------------------------------------

    def test_count_tokens_response(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.TOKEN_COUNTING)
        check_token_count(provider, call_ok(provider, "count_tokens", sc.call, "count_tokens", provider, model), model)

    def test_count_tokens_sync_and_async_agree(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.TOKEN_COUNTING)
        sync, async_ = call_both(provider, "count_tokens", model)
        check_token_count(provider, async_, model)
        agree(provider, "token counts", sync.model_dump(), async_.model_dump())
