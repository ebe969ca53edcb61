"""OTel tests: an OtelObserver on SDK in-memory exporters, in a fresh registry per test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core_otel_plugin.observer import OtelObserver
from llm_core.registry import Registry


@dataclass
class Telemetry:
    tracer_provider: TracerProvider
    spans_exporter: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.spans_exporter.get_finished_spans()

    def points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture(autouse=True)
def _isolated(fresh_registry: None) -> None:
    """Every test here starts from a fresh registry with no observers (tests/conftest.py)."""


@pytest.fixture
def telemetry() -> Telemetry:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return Telemetry(tracer_provider, exporter, reader)


@pytest.fixture
def registry(telemetry: Telemetry) -> Registry:
    """A registry with the fake providers only (no entry points) and the observer on the exporters."""
    registry = Registry()
    registry.add_observer(OtelObserver(telemetry.tracer_provider, MeterProvider(metric_readers=[telemetry.metrics])))
    return registry
