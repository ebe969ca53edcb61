"""Incremental parsing of ``generate_content_stream`` chunks into stream events.

Each chunk's text parts become TOKEN events at once (thought parts as ``…_THINKING``, the rest
as ``…_RESPONSE``, by the call context); nothing is buffered except the small replay record.
Usage and stop reason come from the last chunk that carries them. A stream that ends without a
finish reason, or without a single part, is an error (never an empty success).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core_gemini_plugin.errors import reads_answer
from core_gemini_plugin.grounding import builtin_results
from core_gemini_plugin.parts import PartLog
from core_gemini_plugin.response_parser import (
    PROVIDER,
    check_has_output,
    enum_name,
    finish_reason,
    raise_if_prompt_blocked,
)
from core_gemini_plugin.usage import usage_from
from llm_core.errors import InvalidResponseError
from llm_core.requests import ChatRequest
from llm_core.streaming import StreamEvent, StreamMetadata, TokenType

if TYPE_CHECKING:
    from google.genai import types


class GeminiStreamParser:
    """Feeds on ``GenerateContentResponse`` chunks; :meth:`finish` gives the metadata."""

    def __init__(self, request: ChatRequest) -> None:
        self._context = request.call_context
        self._model_asked = request.model
        self._candidate: Any = None  # the last candidate: its grounding metadata is the answer's
        self._log = PartLog()
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._finish: Any = None
        self._model: str | None = None
        self._response_id: str | None = None
        self._parts_seen = False

    @reads_answer
    def feed(self, chunk: types.GenerateContentResponse) -> Sequence[StreamEvent]:
        raise_if_prompt_blocked(chunk)
        if chunk.response_id and self._response_id is None:
            self._response_id = self._log.response_id = chunk.response_id
        if chunk.model_version:
            self._model = chunk.model_version
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        if not chunk.candidates:  # e.g. a chunk of usage only
            return ()
        candidate = chunk.candidates[0]
        if _grounded(candidate):
            self._candidate = candidate
        if candidate.finish_reason is not None:
            self._finish = candidate.finish_reason
        content = candidate.content
        parts = content.parts if content is not None and content.parts else []
        events: list[StreamEvent] = []
        for part in parts:
            self._parts_seen = True
            self._log.add(part, merge_text=True)
            if isinstance(part.text, str) and part.text:
                kind = TokenType.for_chunk(thinking=part.thought is True, context=self._context)
                events.append(StreamEvent.token(part.text, kind))
        return events

    @reads_answer
    def finish(self) -> StreamMetadata:
        if self._finish is None:
            raise InvalidResponseError("the Gemini stream ended without a finish reason (cut off)", provider=PROVIDER)
        check_has_output(self._parts_seen, enum_name(self._finish))
        usage = self._usage
        calls = self._log.tool_calls
        parts = self._log.parts
        text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
        citations, builtin, grounded, uses = builtin_results(self._candidate, parts, text, self._model_asked)
        return StreamMetadata(
            input_tokens=usage_from(usage).prompt_tokens if usage else None,
            output_tokens=usage.candidates_token_count if usage else None,
            thinking_tokens=usage.thoughts_token_count if usage else None,
            cached_tokens=usage.cached_content_token_count if usage else None,
            stop_reason=finish_reason(self._finish, has_tool_calls=bool(calls)),
            model=self._model,
            response_id=self._response_id,
            raw_usage=usage.model_dump(mode="json", exclude_none=True) if usage else None,
            tool_calls=calls or None,
            citations=citations or None,
            builtin_tool_calls=builtin or None,
            tool_uses=uses or None,
            extra={"finish_reason": enum_name(self._finish), **self._log.replay_metadata(), **grounded},
        )


def _grounded(candidate: types.Candidate) -> bool:
    """Whether a chunk's candidate carries grounding (streamed chunks carry empty metadata until
    the one that holds it all)."""
    meta = candidate.grounding_metadata
    found = meta is not None and bool(meta.grounding_chunks or meta.web_search_queries or meta.grounding_supports)
    return found or candidate.url_context_metadata is not None
