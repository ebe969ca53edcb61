"""A slow exporter does not stall the event loop: the observer only records in memory (spans,
histogram points) and the SDK's BatchSpanProcessor exports from its own thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from core_otel_plugin.observer import OtelObserver
from llm_core.registry import Registry
from llm_core.testing import FakeProvider, FakeReply

EXPORT_SECONDS = 0.5


class SlowExporter(SpanExporter):
    """Takes half a second per export, like a collector far away."""

    def __init__(self) -> None:
        self.exported: list[ReadableSpan] = []
        self.threads: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.threads.add(threading.current_thread().name)
        time.sleep(EXPORT_SECONDS)
        self.exported.extend(spans)
        return SpanExportResult.SUCCESS


def test_slow_exporter_does_not_delay_concurrent_tasks(loop_gaps: Any) -> None:
    exporter = SlowExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1))
    Registry().add_observer(OtelObserver(tracer_provider))
    provider = FakeProvider(default_reply=FakeReply(content="ok"))

    async def calls() -> None:
        for _ in range(20):
            await provider.aio.chat_completion("hi")
            await asyncio.sleep(0.01)  # the exporter thread exports meanwhile

    gaps = loop_gaps(calls())
    during = set(exporter.threads)  # who exported while the loop ran
    tracer_provider.shutdown()  # flushes the rest
    assert len(exporter.exported) == 20
    assert during and threading.main_thread().name not in during  # exported off the loop's thread
    # an export on the loop would leave a gap of at least EXPORT_SECONDS; a loaded machine far less
    assert max(gaps) < EXPORT_SECONDS / 2, max(gaps)
