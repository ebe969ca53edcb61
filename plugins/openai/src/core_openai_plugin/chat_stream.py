"""Chat Completions stream chunks → llm-core stream events, one chunk at a time.

- ``delta.content`` → ``…_RESPONSE`` tokens; ``<think>…</think>`` inside it → ``…_THINKING``
  tokens (:class:`ThinkSplitter` holds back only what may be the start of a tag);
- ``delta.reasoning_content`` / ``delta.reasoning`` → ``…_THINKING`` tokens;
- ``delta.tool_calls`` pieces are assembled by ``index`` (several calls at once), reported in the
  metadata;
- the chunk with ``usage`` (``stream_options.include_usage``: the last one, ``choices: []``)
  gives the counts; a server that sends none leaves them unknown;
- a stream that ends without a ``finish_reason`` is an error (never silently cut).
SSE comments (``: OPENROUTER PROCESSING``) and ``[DONE]`` never reach here: the SDK drops them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from core_openai_plugin.chat_mapper import REASONING_REPLAY
from core_openai_plugin.chat_parser import finish, reasoning_text
from core_openai_plugin.errors import describe
from core_openai_plugin.response_parser import dump, tool_call
from core_openai_plugin.usage import field, fields, usage_from
from llm_core.errors import InvalidResponseError, ProviderConnectionError, answer_guard
from llm_core.requests import ChatRequest
from llm_core.responses import FINISH_LENGTH
from llm_core.streaming import StreamEvent, StreamMetadata, TokenType
from llm_core.tools import ToolCall

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Splits streamed text into ``(text, is_thought)`` pieces at ``<think>`` / ``</think>``
    tags that may arrive cut across chunks (the rule of :func:`llm_core.thinking.extract_think_tags`)."""

    def __init__(self) -> None:
        self.thinking = False
        self._held = ""

    def feed(self, text: str) -> list[tuple[str, bool]]:
        pieces: list[tuple[str, bool]] = []
        rest = self._held + text
        self._held = ""
        while rest:
            tag = CLOSE if self.thinking else OPEN
            found = rest.lower().find(tag)
            if found >= 0:
                pieces.append((rest[:found], self.thinking))
                rest = rest[found + len(tag) :]
                self.thinking = not self.thinking
                continue
            tail = rest[-(len(tag) - 1) :].lower()  # what may be the start of a tag cut off here
            keep = next((n for n in range(len(tail), 0, -1) if tag.startswith(tail[-n:])), 0) if "<" in tail else 0
            pieces.append((rest[: len(rest) - keep], self.thinking))
            self._held = rest[len(rest) - keep :]
            break
        return [(piece, thought) for piece, thought in pieces if piece]

    def flush(self) -> list[tuple[str, bool]]:
        held, self._held = self._held, ""
        return [(held, self.thinking)] if held else []


class _Call:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments = ""


class ChatCompletionsStreamParser:
    """Feeds on ``ChatCompletionChunk`` objects; see the module docstring."""

    def __init__(self, request: ChatRequest, *, endpoint: str, service: str) -> None:
        self._endpoint = endpoint
        self._service = service
        context = request.call_context
        self._response_tokens = TokenType.for_chunk(thinking=False, context=context)
        self._thinking_tokens = TokenType.for_chunk(thinking=True, context=context)
        self._model = request.model
        self._splitter = ThinkSplitter()
        self._calls: dict[int, _Call] = {}
        self._replay: dict[str, Any] = {}
        self._refusal: list[str] = []
        self._text = False
        self._finish: str | None = None
        self._usage: Any = None
        self._id: str | None = None
        self._chunks = 0
        guard = answer_guard(service, endpoint)
        #: One chunk → its events; what fails in reading it is the answer's fault (the guard).
        self.feed: Callable[[Any], Sequence[StreamEvent]] = guard(self._feed)
        #: The METADATA of the finished stream (or the error that it is not an answer).
        self.finish: Callable[[], StreamMetadata] = guard(self._finished)

    def _feed(self, chunk: Any) -> Sequence[StreamEvent]:
        self._chunks += 1
        if not isinstance(chunk, BaseModel):
            raise InvalidResponseError(
                f"{self._service} sent a stream chunk that is {describe(chunk)}", provider=self._endpoint
            )
        read = fields(chunk)
        self._id = self._id or read.get("id")
        self._model = read.get("model") or self._model
        if read.get("usage") is not None:
            self._usage = read["usage"]
        events: list[StreamEvent] = []
        for choice in read.get("choices") or ():
            choice_fields = fields(choice)
            if choice_fields.get("index") not in (0, None):
                continue
            delta = choice_fields.get("delta")
            if delta is not None:
                events.extend(self._delta(fields(delta)))
            reason = choice_fields.get("finish_reason")
            if reason:
                self._finish = str(reason)
                events.extend(self._tokens(self._splitter.flush()))  # text held back as a possible tag
        return events

    def _delta(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        events = []
        thought = reasoning_text(delta)
        if thought:
            events.append(StreamEvent.token(thought, self._thinking_tokens))
        for name in ("reasoning_content", "reasoning_details"):
            piece = delta.get(name)
            if isinstance(piece, str) and piece:
                self._replay[name] = self._replay.get(name, "") + piece
            elif isinstance(piece, list) and piece:
                self._replay.setdefault(name, []).extend(dump(item) for item in piece)
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.extend(self._tokens(self._splitter.feed(content)))
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self._refusal.append(refusal)
        for piece in delta.get("tool_calls") or ():
            index = field(piece, "index")
            call = self._calls.setdefault(index if isinstance(index, int) else len(self._calls), _Call())
            call.id = field(piece, "id") or call.id
            function = field(piece, "function")
            call.name = field(function, "name") or call.name
            call.arguments += field(function, "arguments") or ""
        return events

    def _tokens(self, pieces: list[tuple[str, bool]]) -> list[StreamEvent]:
        events = []
        for text, thought in pieces:
            self._text = self._text or not thought
            events.append(StreamEvent.token(text, self._thinking_tokens if thought else self._response_tokens))
        return events

    def tool_calls(self) -> list[ToolCall]:
        """The calls assembled so far, in index order, arguments decoded."""
        calls = [self._calls[index] for index in sorted(self._calls)]
        for call in calls:
            if not call.name:
                raise InvalidResponseError(
                    f"{self._service} streamed a tool call without a function name", provider=self._endpoint
                )
        return [tool_call(call.id or f"call_{n}", call.name, call.arguments) for n, call in enumerate(calls)]

    def _finished(self) -> StreamMetadata:
        if not self._chunks:
            raise InvalidResponseError(
                f"the {self._service} stream carried no chunks (not an event stream)", provider=self._endpoint
            )
        if self._finish is None:
            raise ProviderConnectionError(
                f"the {self._service} stream ended before a finish_reason", provider=self._endpoint
            )
        calls = self.tool_calls()
        if not (self._text or calls or self._refusal):
            cut = " (cut at max_tokens: raise max_tokens)" if self._finish == "length" else ""
            raise InvalidResponseError(
                f"{self._service}'s streamed answer carries no text or tool call{cut}", provider=self._endpoint
            )
        usage = (
            usage_from(self._usage, service=self._service, provider=self._endpoint) if self._usage is not None else None
        )
        extra: dict[str, Any] = {}
        if self._replay:
            extra[REASONING_REPLAY] = self._replay
        if self._refusal:
            extra["refusal"] = "".join(self._refusal)
        return StreamMetadata(
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            thinking_tokens=usage.thinking_tokens if usage else None,
            cached_tokens=usage.cached_tokens if usage else None,
            stop_reason=finish(self._finish, has_calls=bool(calls)) if self._finish != "length" else FINISH_LENGTH,
            model=self._model,
            provider=self._endpoint,
            response_id=self._id,
            raw_usage=dump(self._usage) if self._usage is not None else None,
            tool_calls=calls or None,
            extra=extra,
        )
