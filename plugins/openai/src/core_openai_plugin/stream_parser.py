"""Responses stream events → llm-core stream events, one event at a time (no buffering).

- ``response.output_text.delta`` → ``…_RESPONSE`` tokens (empty deltas dropped);
- ``response.reasoning_summary_text.delta`` (and raw ``response.reasoning_text.delta`` from
  compatible servers) → ``…_THINKING`` tokens; a new summary part is separated by a blank line,
  as in the non-streamed ``thinking``;
- function-call items and ``response.function_call_arguments.delta`` are accumulated into tool
  calls, reported in the metadata;
- ``response.completed`` / ``response.incomplete`` give usage and the stop reason;
- ``response.failed`` and ``error`` raise the mapped error, so the core emits ERROR then END.
A stream that ends without a terminal event is an error too (never silently cut).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from core_openai_plugin.builtin import (
    ANNOTATIONS,
    builtin_call,
    citations,
    generated_image,
    other_annotations,
    tool_uses,
)
from core_openai_plugin.errors import describe, error_from_code, reads_answer
from core_openai_plugin.request_mapper import OUTPUT_ITEMS, OUTPUT_ORDER, REASONING_ITEMS
from core_openai_plugin.response_parser import (
    IMAGES,
    check_status,
    custom_call,
    dump,
    finish_reason,
    reasoning_item,
    tool_call,
)
from core_openai_plugin.usage import usage_from
from llm_core.builtin_tools import BuiltinToolCall, Citation
from llm_core.errors import InvalidResponseError, LLMError, ProviderConnectionError
from llm_core.requests import ChatRequest
from llm_core.responses import ImageResponse
from llm_core.streaming import CallContext, StreamEvent, StreamMetadata, TokenType
from llm_core.tools import ToolCall

PROVIDER = "openai"


class _PendingCall:
    """A function call whose arguments are still arriving, or a finished custom tool call."""

    __slots__ = ("arguments", "call_id", "custom", "name")

    def __init__(self, call_id: str, name: str, arguments: str, custom: ToolCall | None = None) -> None:
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.custom = custom


class ResponsesStreamParser:
    """Feeds on SDK stream events (``ResponseStreamEvent``); see the module docstring."""

    def __init__(self, request: ChatRequest) -> None:
        self._request = request
        self._context: CallContext | None = request.call_context
        self._model = request.model
        self._response_tokens = TokenType.for_chunk(thinking=False, context=self._context)
        self._thinking_tokens: TokenType | None = None  # looked up at the first thinking delta
        self._calls: dict[str, _PendingCall] = {}
        self._call_order: list[str] = []
        self._reasoning: list[dict[str, Any]] = []
        self._summary_part: tuple[str, int] | None = None
        self._thought = False
        self._refusal: list[str] = []
        self._text = False
        self._images: list[ImageResponse] = []
        self._other: list[dict[str, Any]] = []
        self._builtin: list[BuiltinToolCall] = []
        self._citations: list[Citation] = []
        self._annotations: list[dict[str, Any]] = []
        self._order: list[str] = []
        self._message_text = 0  # characters of the finished messages' text, where citations count from
        self._final: Any = None
        self._events = 0

    # -- feeding --------------------------------------------------------------------------

    @reads_answer
    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        self._events += 1
        kind = getattr(chunk, "type", None)
        if not isinstance(kind, str):  # the SDK passes on any JSON an event's data held
            shown = describe(chunk) if not isinstance(chunk, BaseModel) else "an object without a type"
            raise InvalidResponseError(f"OpenAI sent a stream event that is {shown}", provider=PROVIDER)
        handler = _HANDLERS.get(kind)
        if handler is None:  # created, in_progress, content parts, text done, …: nothing to do
            return ()
        return handler(self, chunk)

    def _text_delta(self, chunk: Any) -> Sequence[StreamEvent]:
        delta = chunk.delta
        if not delta:
            return ()
        self._text = True
        return (StreamEvent.token(delta, self._response_tokens),)

    def _thinking(self, chunk: Any) -> Sequence[StreamEvent]:
        if not chunk.delta:
            return ()
        part = (chunk.item_id, getattr(chunk, "summary_index", getattr(chunk, "content_index", 0)))
        text = chunk.delta
        if self._summary_part is not None and part != self._summary_part and self._thought:
            text = "\n\n" + text
        self._summary_part = part
        self._thought = True
        if self._thinking_tokens is None:
            self._thinking_tokens = TokenType.for_chunk(thinking=True, context=self._context)
        return (StreamEvent.token(text, self._thinking_tokens),)

    def _on_refusal(self, chunk: Any) -> Sequence[StreamEvent]:
        self._refusal.append(chunk.delta)
        return ()

    def _on_item_added(self, chunk: Any) -> Sequence[StreamEvent]:
        self._item_added(chunk.item)
        return ()

    def _on_arguments_delta(self, chunk: Any) -> Sequence[StreamEvent]:
        pending = self._calls.get(chunk.item_id)
        if pending is not None:
            pending.arguments += chunk.delta
        return ()

    def _on_arguments_done(self, chunk: Any) -> Sequence[StreamEvent]:
        pending = self._calls.get(chunk.item_id)
        if pending is not None:
            pending.arguments = chunk.arguments
        return ()

    def _on_item_done(self, chunk: Any) -> Sequence[StreamEvent]:
        self._item_done(chunk.item)
        return ()

    def _on_final(self, chunk: Any) -> Sequence[StreamEvent]:
        self._final = chunk.response
        return ()

    def _on_failed(self, chunk: Any) -> Sequence[StreamEvent]:
        raise self._failure(chunk.response)

    def _on_error(self, chunk: Any) -> Sequence[StreamEvent]:
        raise error_from_code(getattr(chunk, "code", None), chunk.message, provider=PROVIDER)

    def _item_added(self, item: Any) -> None:
        if getattr(item, "type", None) == "function_call":
            key = item.id or item.call_id
            if key not in self._calls:
                self._call_order.append(key)
            self._calls[key] = _PendingCall(item.call_id, item.name, item.arguments or "")

    def _item_done(self, item: Any) -> None:
        kind = getattr(item, "type", None)
        if kind == "function_call":
            key = item.id or item.call_id
            if key not in self._calls:
                self._call_order.append(key)
            self._calls[key] = _PendingCall(item.call_id, item.name, item.arguments or "")
        elif kind == "custom_tool_call":
            custom = custom_call(item)
            if custom.id not in self._calls:
                self._call_order.append(custom.id)
            self._calls[custom.id] = _PendingCall(custom.id, custom.name, "", custom=custom)
        elif kind == "reasoning":
            # the done item carries the complete encrypted content (the added one may not)
            self._reasoning.append(reasoning_item(item))
            self._order.append(str(getattr(item, "id", "")))
        elif kind == "image_generation_call":
            self._images.append(generated_image(dump(item), getattr(item, "model", None) or self._model))
            self._builtin.append(
                BuiltinToolCall(
                    tool="image_generation", id=getattr(item, "id", None), status=getattr(item, "status", None)
                )
            )
        elif kind == "message":
            self._message_done(item)
        elif item is not None:  # kept as sent, never dropped (as in a call)
            data = dump(item)
            ran = builtin_call(data)
            if ran is not None:
                self._builtin.append(ran)
            self._other.append(data)
            self._order.append(str(data.get("id", "")))

    def _message_done(self, item: Any) -> None:
        """Citations of a finished message (its parts carry every annotation), counted from
        where its text starts in the answer."""
        for part in dump(item).get("content") or ():
            if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                self._citations.extend(citations(part, self._message_text))
                self._annotations.extend(other_annotations(part))
                self._message_text += len(part["text"])

    @staticmethod
    def _failure(response: Any) -> LLMError:
        error = getattr(response, "error", None)
        if error is None:
            return error_from_code("server_error", "the response failed without an error", provider=PROVIDER)
        return error_from_code(error.code, error.message, provider=PROVIDER)

    # -- the end --------------------------------------------------------------------------

    def tool_calls(self) -> list[ToolCall]:
        """The tool calls seen so far, in output order, arguments decoded."""
        pending = (self._calls[key] for key in self._call_order)
        return [p.custom or tool_call(p.call_id, p.name, p.arguments) for p in pending]

    @reads_answer
    def finish(self) -> StreamMetadata:
        final = self._final
        if final is None and not self._events:  # e.g. an HTML page: the SDK's SSE decoder finds no event
            raise InvalidResponseError("the OpenAI stream carried no events (not an event stream)", provider=PROVIDER)
        if final is None:
            raise ProviderConnectionError("the OpenAI stream ended before response.completed", provider=PROVIDER)
        calls = self.tool_calls()
        answered = bool(self._text or self._refusal or calls or self._images or self._other)
        status = check_status(final, answered=answered)
        usage = usage_from(getattr(final, "usage", None))
        incomplete = getattr(final, "incomplete_details", None)
        refused = bool(self._refusal) and not self._text
        extra: dict[str, Any] = {}
        if self._reasoning:
            extra[REASONING_ITEMS] = self._reasoning
        if self._refusal:
            extra["refusal"] = "".join(self._refusal)
        if self._images:
            extra[IMAGES] = self._images
        if self._other:
            extra[OUTPUT_ITEMS] = self._other
            extra[OUTPUT_ORDER] = self._order
        if self._annotations:
            extra[ANNOTATIONS] = self._annotations
        raw_usage = dump(final.usage) if getattr(final, "usage", None) is not None else None
        return StreamMetadata(
            input_tokens=usage.prompt_tokens if raw_usage else None,
            output_tokens=usage.completion_tokens if raw_usage else None,
            thinking_tokens=usage.thinking_tokens,
            cached_tokens=usage.cached_tokens,
            stop_reason=finish_reason(
                status,
                getattr(incomplete, "reason", None),
                has_calls=bool(calls),
                refused=refused,
            ),
            model=getattr(final, "model", None) or self._model,
            response_id=getattr(final, "id", None),
            raw_usage=raw_usage,
            tool_calls=calls or None,
            citations=self._citations or None,
            builtin_tool_calls=self._builtin or None,
            tool_uses=tool_uses(self._request, self._builtin, self._other),
            extra=extra,
        )


#: What :meth:`ResponsesStreamParser.feed` does with each event type other than a text delta;
#: types not listed carry nothing we report.
_HANDLERS: dict[str, Callable[[ResponsesStreamParser, Any], Sequence[StreamEvent]]] = {
    "response.output_text.delta": ResponsesStreamParser._text_delta,
    "response.reasoning_summary_text.delta": ResponsesStreamParser._thinking,
    "response.reasoning_text.delta": ResponsesStreamParser._thinking,
    "response.refusal.delta": ResponsesStreamParser._on_refusal,
    "response.output_item.added": ResponsesStreamParser._on_item_added,
    "response.function_call_arguments.delta": ResponsesStreamParser._on_arguments_delta,
    "response.function_call_arguments.done": ResponsesStreamParser._on_arguments_done,
    "response.output_item.done": ResponsesStreamParser._on_item_done,
    "response.completed": ResponsesStreamParser._on_final,
    "response.incomplete": ResponsesStreamParser._on_final,
    "response.failed": ResponsesStreamParser._on_failed,
    "error": ResponsesStreamParser._on_error,
}
