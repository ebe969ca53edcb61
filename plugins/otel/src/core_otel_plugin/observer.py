"""llm-core observer events as OpenTelemetry GenAI spans and metrics.

Names follow the OpenTelemetry GenAI semantic conventions (semconv v1.41, ``docs/gen-ai/``:
``gen-ai-spans.md`` and ``gen-ai-metrics.md``), as opentelemetry-instrumentation-openai-v2 and
the google-genai instrumentation emit them. One span per call, from its first attempt to its
answer (a stream's from opening to its last chunk); a retried attempt is a span event. A call
ends for observers exactly once (an answer, or an error not retried: a cancelled call's is a
``CancelledCallError``), so every span started here is ended and forgotten.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from core_otel_plugin import content
from core_otel_plugin.names import COST_ATTRIBUTE, PROVIDER_NAMES
from core_otel_plugin.turns import ScopeSpans
from llm_core import hookimpl
from llm_core.requests import OBSERVED_OPTIONS

#: Default hosts (``server.address``) when no base_url is configured.
DEFAULT_HOSTS = {"gemini": "generativelanguage.googleapis.com", "openai": "api.openai.com"}
#: ``gen_ai.operation.name`` by llm-core operation (well-known values where one fits).
OPERATION_NAMES = {
    "chat": "chat",
    "stream": "chat",
    "chat_with_tools": "chat",
    "analyze_image": "chat",
    "generate_json": "chat",
    "complete": "text_completion",
    "embeddings": "embeddings",
    "generate_image": "generate_content",
    "decide": "generate_content",
}
#: ``gen_ai.tool.type`` of built-in tools (semconv: ``extension`` runs on the agent's side and
#: calls external APIs, ``datastore`` queries data for retrieval); any other is an extension.
BUILTIN_TOOL_TYPES = {"file_search": "datastore"}
#: Bucket advice of the conventions for the two client histograms.
TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1, 4, 16, ... 67108864
DURATION_BUCKETS = [0.01 * 2.0**i for i in range(14)]  # 0.01, 0.02, ... 81.92 s


class OtelObserver(ScopeSpans):
    """Turns observer events into spans (``tracer_provider``) and histograms (``meter_provider``);
    the global providers by default, so the application's SDK setup is all it takes. Message
    content is recorded only with ``capture_content=True`` (default: the conventions' switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, read here; see content.py)."""

    def __init__(
        self, tracer_provider: Any = None, meter_provider: Any = None, capture_content: bool | None = None
    ) -> None:
        self.capture_content = content.capture_from_environment() if capture_content is None else capture_content
        self._init_scopes()
        self._tracer = trace.get_tracer("core_otel_plugin", tracer_provider=tracer_provider)
        meter = metrics.get_meter("core_otel_plugin", meter_provider=meter_provider)
        self._tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Measures number of input and output tokens used",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self._duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        #: Open spans by call id. Threads share it: dict set/get/pop are atomic in CPython, and a
        #: call's events come one after another.
        self._open: dict[int, tuple[Span, float, dict[str, Any]]] = {}

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        call_id = event.get("call_id") or 0
        if not call_id or event.get("attempt", 1) > 1:
            return  # later attempts belong to the call's span (see on_error)
        operation = OPERATION_NAMES.get(event["operation"], event["operation"])
        model = event.get("model")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": PROVIDER_NAMES.get(event["provider"], event["provider"]),
            "llm_core.operation": event["operation"],
        }
        if model:
            attributes["gen_ai.request.model"] = model
        host = urlsplit(event["base_url"]).hostname if event.get("base_url") else DEFAULT_HOSTS.get(event["provider"])
        if host:
            attributes["server.address"] = host
        for name, attribute in OBSERVED_OPTIONS.items():
            if event.get(name) is not None:
                attributes[attribute] = event[name]
        # started in the caller's context: the application's current span is the parent
        span = self._tracer.start_span(
            f"{operation} {model}" if model else operation,
            context=self._parent_context(event),  # the turn / tool / batch scope, if any
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        self._capture_request(span, event)
        self._open[call_id] = (span, time.perf_counter(), _metric_attributes(attributes))

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        call_id = event.get("call_id") or 0
        if not call_id:
            if event.get("fallback_from"):  # a router moved past failed providers
                trace.get_current_span().add_event(
                    "llm_core.fallback",
                    {"llm_core.fallback_from": list(event["fallback_from"]), "llm_core.answered_by": event["provider"]},
                )
            return
        opened = self._open.pop(call_id, None)
        if opened is None:
            return
        span, started, metric_attributes = opened
        self._capture_response(span, event)
        attributes: dict[str, Any] = {}  # set at once: the SDK takes its span lock per call
        if event.get("response_model"):
            attributes["gen_ai.response.model"] = event["response_model"]
            metric_attributes["gen_ai.response.model"] = event["response_model"]
        if event.get("finish_reason"):
            attributes["gen_ai.response.finish_reasons"] = [event["finish_reason"]]
        if event.get("response_id"):
            attributes["gen_ai.response.id"] = event["response_id"]
        usage = event.get("usage") or {}
        # the conventions' output count is the billable output: answer plus reasoning tokens
        output = (usage.get("completion_tokens") or 0) + (usage.get("thinking_tokens") or 0)
        for count, attribute, kind in (
            (usage.get("prompt_tokens") or 0, "gen_ai.usage.input_tokens", "input"),
            (output, "gen_ai.usage.output_tokens", "output"),
        ):
            if count:
                attributes[attribute] = count
                self._tokens.record(count, {**metric_attributes, "gen_ai.token.type": kind})
        if usage.get("thinking_tokens") is not None:
            attributes["gen_ai.usage.reasoning.output_tokens"] = usage["thinking_tokens"]
        if usage.get("cached_tokens") is not None:  # part of input_tokens, as the conventions say
            attributes["gen_ai.usage.cache_read.input_tokens"] = usage["cached_tokens"]
        if usage.get("cost") is not None:
            attributes[COST_ATTRIBUTE] = str(usage["cost"])
        if event.get("abandoned"):
            attributes["llm_core.stream.abandoned"] = True
        if event.get("attempts", 1) > 1:
            attributes["llm_core.attempts"] = event["attempts"]
        span.set_attributes(attributes)
        self._builtin_tool_spans(span, event)
        self._duration.record(time.perf_counter() - started, metric_attributes)
        span.end()

    def _builtin_tool_spans(self, parent: Span, event: dict[str, Any]) -> None:
        """One ``execute_tool`` span per run of a built-in tool the provider reported (web
        search, code execution, ...), a child of the call's span: the provider ran it during the
        call, so it is recorded when the answer tells of it."""
        runs = getattr(event.get("response"), "builtin_tool_calls", None) or ()
        context = trace.set_span_in_context(parent)
        for run in runs:
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.provider.name": PROVIDER_NAMES.get(event["provider"], event["provider"]),
                "gen_ai.tool.name": run.tool,
                "gen_ai.tool.type": BUILTIN_TOOL_TYPES.get(run.tool, "extension"),
                "llm_core.tool.builtin": True,
            }
            if run.id:
                attributes["gen_ai.tool.call.id"] = run.id
            tool_span = self._tracer.start_span(
                f"execute_tool {run.tool}", context=context, kind=SpanKind.INTERNAL, attributes=attributes
            )
            if run.error or run.status in ("failed", "incomplete"):
                tool_span.set_attribute("error.type", "BuiltinToolError")
                tool_span.set_status(Status(StatusCode.ERROR, run.error or run.status))
            tool_span.end()

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        call_id = event.get("call_id") or 0
        error = event.get("error")
        error_type = type(error).__name__
        if event.get("will_retry"):
            opened = self._open.get(call_id)
            if opened is not None:
                opened[0].add_event(
                    "llm_core.retry", {"error.type": error_type, "llm_core.attempt": event.get("attempt", 1)}
                )
            return
        opened = self._open.pop(call_id, None)
        self._call_turns.pop(call_id, None)
        if opened is None:
            return
        span, started, metric_attributes = opened
        span.set_attribute("error.type", error_type)
        span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        self._duration.record(time.perf_counter() - started, {**metric_attributes, "error.type": error_type})
        span.end()


def _metric_attributes(span_attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes the conventions give the client metrics."""
    names = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "server.address")
    return {name: span_attributes[name] for name in names if name in span_attributes}
