"""Incremental parsing of ``generate_content_stream`` chunks into stream events (SPEC §3).

Each chunk's text parts become TOKEN events at once (thought parts as ``…_THINKING``, the rest
as ``…_RESPONSE``, by the call context); nothing is buffered except the small replay record.
Usage and stop reason come from the last chunk that carries them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core_gemini_plugin.response_parser import (
    PROVIDER,
    PartLog,
    enum_name,
    finish_reason,
    raise_if_prompt_blocked,
)
from llm_core.errors import InvalidResponseError
from llm_core.requests import ChatRequest
from llm_core.streaming import StreamEvent, StreamMetadata, TokenType

if TYPE_CHECKING:
    from google.genai import types


_token = StreamEvent.token


class GeminiStreamParser:
    """Feeds on ``GenerateContentResponse`` chunks; :meth:`finish` gives the metadata.

    A plain text part (no thought, no signature, no function call: almost every delta) is
    logged directly: the pieces of the replay part being merged are kept in a list and joined
    once (before any other part is logged and at the end), instead of growing one string per
    delta. The replay record is the one :meth:`PartLog.add` builds with ``merge_text=True``.
    """

    def __init__(self, request: ChatRequest) -> None:
        self._context = request.call_context
        self._response_kind = TokenType.for_chunk(thinking=False, context=self._context)
        self._log = PartLog()
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._finish: Any = None
        self._model: str | None = None
        self._response_id: str | None = None
        self._open: dict[str, Any] | None = None  # the last replay part, while plain text is merged into it
        self._pieces: list[str] = []  # its text, not yet joined

    def feed(self, chunk: types.GenerateContentResponse) -> Sequence[StreamEvent]:
        if chunk.prompt_feedback is not None:
            raise_if_prompt_blocked(chunk)
        response_id = chunk.response_id
        if response_id and self._response_id is None:
            self._response_id = self._log.response_id = response_id
        model = chunk.model_version
        if model:
            self._model = model
        usage = chunk.usage_metadata
        if usage is not None:
            self._usage = usage
        candidates = chunk.candidates
        if not candidates:
            return ()
        candidate = candidates[0]
        if candidate.finish_reason is not None:
            self._finish = candidate.finish_reason
        content = candidate.content
        parts = content.parts if content is not None and content.parts else []
        events: list[StreamEvent] = []
        for part in parts:
            text = part.text
            if (
                type(text) is str
                and part.thought is not True
                and part.function_call is None
                and not part.thought_signature
            ):
                if self._open is not None:
                    self._pieces.append(text)
                else:
                    self._open_text(text)
                if text:
                    events.append(_token(text, self._response_kind))
                continue
            self._flush()
            self._log.add(part, merge_text=True)
            if isinstance(text, str) and text:
                events.append(_token(text, TokenType.for_chunk(thinking=part.thought is True, context=self._context)))
        return events

    def _open_text(self, text: str) -> None:
        """A plain text piece when no part is open: merged into the last replay part when
        :meth:`PartLog.add` would merge it (visible text without a signature), else a new part."""
        logged = self._log.parts
        last = logged[-1] if logged else None
        if (
            last is not None
            and "text" in last
            and last.get("thought", False) is False
            and "thought_signature" not in last
        ):
            self._open, self._pieces = last, [last["text"], text]
        else:
            self._open, self._pieces = {"text": text}, [text]
            logged.append(self._open)

    def _flush(self) -> None:
        if self._open is not None:
            self._open["text"] = "".join(self._pieces)
            self._open, self._pieces = None, []

    def finish(self) -> StreamMetadata:
        self._flush()
        if self._finish is None:
            raise InvalidResponseError("the Gemini stream ended without a finish reason (cut off)", provider=PROVIDER)
        usage = self._usage
        calls = self._log.tool_calls
        return StreamMetadata(
            input_tokens=usage.prompt_token_count if usage else None,
            output_tokens=usage.candidates_token_count if usage else None,
            thinking_tokens=usage.thoughts_token_count if usage else None,
            stop_reason=finish_reason(self._finish, has_tool_calls=bool(calls)),
            model=self._model,
            trace_id=self._response_id,
            raw_usage=usage.model_dump(mode="json", exclude_none=True) if usage else None,
            tool_calls=calls or None,
            extra={"finish_reason": enum_name(self._finish), **self._log.replay_metadata()},
        )
