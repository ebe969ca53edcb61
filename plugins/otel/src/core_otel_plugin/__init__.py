"""OpenTelemetry GenAI spans and metrics for every llm-core call (see docs/observability.md).

The observer is :class:`core_otel_plugin.observer.OtelObserver`; this package imports nothing
of OpenTelemetry until a call is observed.
"""
