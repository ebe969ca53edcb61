"""The Chat Completions dialect of the OpenAI plugin: an OpenAI-compatible server through
``client.chat.completions.create`` of the same SDK and the same guarded clients.

It is the OpenAI provider (clients, keys, keyless servers, error mapping, embeddings, model list)
with the chat and stream hooks of the Chat Completions API: one mapper
(:mod:`~core_openai_plugin.chat_mapper`), the SDK call, one parser
(:mod:`~core_openai_plugin.chat_parser`, :mod:`~core_openai_plugin.chat_stream`), shared by sync
and async. A named endpoint with ``api = "chat_completions"`` is built from this class.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, ClassVar

from core_openai_plugin import chat_mapper, chat_parser
from core_openai_plugin.chat_mapper import Quirks
from core_openai_plugin.chat_stream import ChatCompletionsStreamParser
from core_openai_plugin.endpoints import preset_of
from core_openai_plugin.provider import OpenAIProvider
from llm_core.requests import SAMPLING_OPTIONS, ChatRequest
from llm_core.responses import CompletionResponse


class ChatCompletionsProvider(OpenAIProvider):
    """A server speaking the Chat Completions API (see docs/openai.md, OpenAI-compatible
    servers). Settings: those of :class:`OpenAIProvider` and the endpoint's
    (:class:`llm_core.endpoints.EndpointSettings`), and the request quirks of
    :class:`~core_openai_plugin.chat_mapper.Quirks` over its preset's."""

    settings: ClassVar[tuple[Any, ...]] = (Quirks,)
    call_defaults: ClassVar[frozenset[str]] = SAMPLING_OPTIONS | chat_mapper.CHAT_OPTIONS
    dialect: ClassVar[tuple[str, str, str]] = ("the Chat Completions API", "POST /chat/completions", "responses")

    def _apply_settings(self) -> None:
        super()._apply_settings()
        preset = preset_of(self.identifier, self.options.get("preset"))
        given = {name: self.options[name] for name in Quirks.model_fields if self.options.get(name) is not None}
        #: What this server needs beyond the common request: its preset's quirks, then its settings'.
        self.quirks = Quirks.model_validate({**(preset.quirks if preset else {}), **given})

    # -- chat (also tools, vision, documents, JSON, the decision fallback) ---------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        return chat_mapper.map_chat_completion(request, self.quirks, endpoint=self.identifier)

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        return self.client.chat.completions.create(**payload)

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Any]:
        response: Awaitable[Any] = self.async_client.chat.completions.create(**payload)
        return response  # the SDK's coroutine: the core awaits it

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        return chat_parser.parse_chat_completion(raw, request, endpoint=self.identifier, service=self.wording.service)

    # -- streaming ---------------------------------------------------------------------------

    def _stream_arguments(self) -> dict[str, Any]:
        usage = {"stream_options": {"include_usage": True}} if self.quirks.stream_usage else {}
        return {"stream": True, **usage}

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        stream: Iterator[Any] = self.client.chat.completions.create(**payload, **self._stream_arguments())
        return stream

    def _asend_stream(self, payload: dict[str, Any]) -> Awaitable[AsyncIterator[Any]]:
        stream: Awaitable[AsyncIterator[Any]] = self.async_client.chat.completions.create(
            **payload, **self._stream_arguments()
        )
        return stream

    def new_stream_parser(self, request: ChatRequest) -> ChatCompletionsStreamParser:  # type: ignore[override]
        return ChatCompletionsStreamParser(request, endpoint=self.identifier, service=self.wording.service)
