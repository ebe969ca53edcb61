"""Spans of llm-core's scopes: conversation turns, tool executions and batch result fetches.

Named after the GenAI semantic conventions (v1.41, ``gen-ai-agent-spans.md`` and
``gen-ai-spans.md``): a turn is an ``invoke_agent`` span (kind INTERNAL: an agent running in the
application's process, with its model calls and tool runs as children), a tool run an
``execute_tool {gen_ai.tool.name}`` span (for a tool of an MCP server with ``mcp.method.name``
``tools/call`` and ``llm_core.mcp.server``; a call deferred, approved or denied is an event
``llm_core.tool.deferred|approved|denied`` on the turn's or the current span). The conventions
have nothing for batches: a fetch of a job's results is an ``llm_core.batch.results`` span with
one inference-shaped child span per item, a whole ``llm_core.batch.run()`` an
``llm_core.batch.run`` span (see docs/observability.md).

Spans are parented by the event's ``parent_id`` (the scope llm-core says a call or scope runs
in), not by the current context, so that a turn streamed through a generator never leaks into
the caller's context. A tool's span is also made current while the tool runs, so that spans the
tool's own code starts nest under it.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from core_otel_plugin import content
from core_otel_plugin.names import COST_ATTRIBUTE, PROVIDER_NAMES
from llm_core import hookimpl

#: Not part of the conventions (see docs/observability.md): a batch run, a reading of results.
BATCH_SPANS = {"run": "llm_core.batch.run", "results": "llm_core.batch.results"}
#: ``gen_ai.operation.name`` of a batch item, by item kind.
BATCH_OPERATIONS = {"chat": "chat", "json": "chat", "decision": "chat", "embedding": "embeddings"}


class ScopeSpans:
    """The scope hooks of :class:`~core_otel_plugin.observer.OtelObserver` (a mixin: it shares
    the observer's tracer and content switch)."""

    _tracer: Any
    capture_content: bool

    def _init_scopes(self) -> None:
        #: Open scope spans by scope id (dict get/set/pop are atomic: threads share it).
        self._scopes: dict[int, Span] = {}
        #: The span that was current where each scope opened (see _parent_context).
        self._outer: dict[int, Span] = {}
        #: Open turns: whether their span has the input messages yet (content capture).
        self._turns: dict[int, bool] = {}
        #: A tool's span made current while it runs: the token that undoes it.
        self._attached: dict[int, object] = {}
        #: With content capture: the turn span each open call belongs to.
        self._call_turns: dict[int, Span] = {}

    # -- for the call spans ------------------------------------------------------------------

    def _parent_context(self, event: dict[str, Any]) -> Any:
        """The context to start a call's span in: its scope's span, unless the current context
        has something closer (a span the application started inside a tool); ``None`` is the
        current context."""
        parent = event.get("parent_id") or 0
        span = self._scopes.get(parent)
        if span is None or trace.get_current_span() is not self._outer.get(parent):
            return None
        return trace.set_span_in_context(span)

    def _capture_request(self, span: Span, event: dict[str, Any]) -> None:
        """With content capture on: the request's messages on the call span (and on its turn's
        span, from the turn's first call)."""
        if not self.capture_content:
            return
        attributes = content.request_attributes(event.get("request"))
        span.set_attributes(attributes)
        parent = event.get("parent_id") or 0
        turn = self._scopes.get(parent) if parent in self._turns else None
        if turn is not None:
            self._call_turns[event["call_id"]] = turn
            if attributes and not self._turns.get(parent):
                self._turns[parent] = True
                turn.set_attributes(attributes)

    def _capture_response(self, span: Span, event: dict[str, Any]) -> None:
        turn = self._call_turns.pop(event.get("call_id") or 0, None)
        if not self.capture_content:
            return
        attributes = content.response_attributes(event.get("response"))
        span.set_attributes(attributes)
        if turn is not None:
            turn.set_attributes(attributes)  # the last call's answer is the turn's

    # -- conversation turns ------------------------------------------------------------------

    @hookimpl
    def llm_core_turn_start(self, event: dict[str, Any]) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "llm_core.operation": f"conversation.{event.get('operation')}",
        }
        if event.get("provider") and event["provider"] != "router":
            attributes["gen_ai.provider.name"] = _provider_name(event["provider"])
        if event.get("model"):
            attributes["gen_ai.request.model"] = event["model"]
        self._open_scope(event, "invoke_agent", SpanKind.INTERNAL, attributes)
        self._turns[event["scope_id"]] = False

    @hookimpl
    def llm_core_turn_end(self, event: dict[str, Any]) -> None:
        self._turns.pop(event.get("scope_id") or 0, None)
        span = self._close_scope(event)
        if span is None:
            return
        if event.get("provider"):  # who answered the last call (a router's turn learns it here)
            span.set_attribute("gen_ai.provider.name", _provider_name(event["provider"]))
        span.set_attributes(_response_attributes(event))
        span.set_attribute("llm_core.turn.steps", event.get("steps") or 0)
        if event.get("abandoned"):
            span.set_attribute("llm_core.stream.abandoned", True)
        _end(span, event.get("error"))

    # -- tool executions ---------------------------------------------------------------------

    @hookimpl
    def llm_core_tool_start(self, event: dict[str, Any]) -> None:
        name = event.get("tool_name") or ""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": event.get("tool_type") or "function",
        }
        if event.get("tool_call_id"):
            attributes["gen_ai.tool.call.id"] = event["tool_call_id"]
        if event.get("description"):
            attributes["gen_ai.tool.description"] = event["description"]
        if event.get("server"):  # a tool of an MCP server: the call it makes (GenAI MCP conventions)
            attributes["mcp.method.name"] = "tools/call"
            attributes["llm_core.mcp.server"] = event["server"]
        if self.capture_content and event.get("call") is not None:
            attributes["gen_ai.tool.call.arguments"] = content.tool_arguments(event["call"])
        span = self._open_scope(event, f"execute_tool {name}", SpanKind.INTERNAL, attributes)
        # llm-core starts and ends a tool run in the same context, around the tool's function
        self._attached[event["scope_id"]] = context.attach(trace.set_span_in_context(span))

    @hookimpl
    def llm_core_tool_end(self, event: dict[str, Any]) -> None:
        scope_id = event.get("scope_id") or 0
        token = self._attached.pop(scope_id, None)
        if token is not None:
            context.detach(token)  # type: ignore[arg-type]
        span = self._close_scope(event)
        if span is None:
            return
        if event.get("error") is None and self.capture_content and isinstance(event.get("result"), str):
            span.set_attribute("gen_ai.tool.call.result", content.tool_result(event["result"]))
        _end(span, event.get("error"))

    @hookimpl
    def llm_core_tool_approval(self, event: dict[str, Any]) -> None:
        """A decision about a call that waits for approval: an event on the turn's span (a
        deferral), or on the application's current span (``chat.approve`` / ``chat.deny``)."""
        span = self._scopes.get(event.get("parent_id") or 0) or trace.get_current_span()
        attributes = {
            "gen_ai.tool.name": event.get("tool_name") or "",
            "gen_ai.tool.call.id": event.get("tool_call_id") or "",
        }
        if event.get("reason"):
            attributes["llm_core.tool.reason"] = event["reason"]
        span.add_event(f"llm_core.tool.{event.get('decision')}", attributes)

    # -- batch results -----------------------------------------------------------------------

    @hookimpl
    def llm_core_batch_start(self, event: dict[str, Any]) -> None:
        operation = event.get("operation") or "results"
        attributes: dict[str, Any] = {"llm_core.operation": f"batch.{operation}"}
        if event.get("provider"):
            attributes["gen_ai.provider.name"] = _provider_name(event["provider"])
        if event.get("job_id"):
            attributes["llm_core.batch.id"] = event["job_id"]
        if event.get("items") is not None:
            attributes["llm_core.batch.items"] = event["items"]
        if event.get("mode"):
            attributes["llm_core.batch.mode"] = event["mode"]
        self._open_scope(event, BATCH_SPANS.get(operation, BATCH_SPANS["results"]), SpanKind.INTERNAL, attributes)

    @hookimpl
    def llm_core_batch_item(self, event: dict[str, Any]) -> None:
        """One span per item, a child of the fetch: started and ended when its result is read
        (the provider ran it earlier; the span carries what it did, not when)."""
        parent = self._scopes.get(event.get("scope_id") or 0)
        if parent is None:
            return
        operation = BATCH_OPERATIONS.get(event.get("kind") or "", "chat")
        model = event.get("model")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": _provider_name(event.get("provider") or ""),
            "llm_core.batch.id": event.get("job_id") or "",
            "llm_core.batch.custom_id": event.get("custom_id") or "",
        }
        if model:
            attributes["gen_ai.request.model"] = model
        attributes.update(_response_attributes(event))
        if self.capture_content:
            attributes.update(content.response_attributes(event.get("response")))
        span = self._tracer.start_span(
            f"{operation} {model}" if model else operation,
            context=trace.set_span_in_context(parent),
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        _end(span, event.get("error"))

    @hookimpl
    def llm_core_batch_end(self, event: dict[str, Any]) -> None:
        span = self._close_scope(event)
        if span is None:
            return
        if event.get("provider"):  # a run names what it ran on at its end (a provider or a router)
            span.set_attribute("llm_core.batch.provider", event["provider"])
        span.set_attribute("llm_core.batch.read", event.get("read") or 0)
        span.set_attribute("llm_core.batch.failed", event.get("failed") or 0)
        _end(span, event.get("error"))

    def _open_scope(self, event: dict[str, Any], name: str, kind: SpanKind, attributes: dict[str, Any]) -> Span:
        self._outer[event["scope_id"]] = trace.get_current_span()
        span: Span = self._tracer.start_span(
            name, context=self._parent_context(event), kind=kind, attributes=attributes
        )
        self._scopes[event["scope_id"]] = span
        return span

    def _close_scope(self, event: dict[str, Any]) -> Span | None:
        self._outer.pop(event.get("scope_id") or 0, None)
        return self._scopes.pop(event.get("scope_id") or 0, None)


def _provider_name(identifier: str) -> str:
    return PROVIDER_NAMES.get(identifier, identifier)


def _response_attributes(event: dict[str, Any]) -> dict[str, Any]:
    """Model, finish reason and token counts of an event (a turn's sums, a batch item's own)."""
    found: dict[str, Any] = {}
    if event.get("response_model"):
        found["gen_ai.response.model"] = event["response_model"]
    if event.get("finish_reason"):
        found["gen_ai.response.finish_reasons"] = [event["finish_reason"]]
    usage = event.get("usage") or {}
    output = (usage.get("completion_tokens") or 0) + (usage.get("thinking_tokens") or 0)
    if usage.get("prompt_tokens"):
        found["gen_ai.usage.input_tokens"] = usage["prompt_tokens"]
    if output:
        found["gen_ai.usage.output_tokens"] = output
    if usage.get("thinking_tokens") is not None:
        found["gen_ai.usage.reasoning.output_tokens"] = usage["thinking_tokens"]
    if usage.get("cached_tokens") is not None:  # part of input_tokens, as the conventions say
        found["gen_ai.usage.cache_read.input_tokens"] = usage["cached_tokens"]
    if event.get("response_id"):
        found["gen_ai.response.id"] = event["response_id"]
    if usage.get("cost") is not None:
        found[COST_ATTRIBUTE] = str(usage["cost"])
    return found


def _end(span: Span, error: BaseException | None) -> None:
    if error is not None:
        span.set_attribute("error.type", type(error).__name__)
        span.set_status(Status(StatusCode.ERROR, type(error).__name__))
    span.end()
