"""Per-call overhead of core-otel-plugin: ``python -m benchmarks.otel_overhead [--check]``.

A FakeProvider chat call (no network, so what is timed is llm-core and the observer) with the
OTel observer on an SDK tracer provider, against the same call with no observer at all. Sides
alternate in rounds that swap which goes first; the overhead is the difference of the medians
with its 95 % confidence interval. Target: within +60 µs per call. ``--check`` exits 1 when the
interval lies above the target.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from benchmarks.measure import Series, compare
from core_otel_plugin.observer import OtelObserver
from llm_core.observe import observers
from llm_core.registry.discovery import new_plugin_manager
from llm_core.testing import FakeProvider, FakeReply

TARGET_US = 60.0


def relay(exporter: InMemorySpanExporter | None) -> Any:
    """A hook relay with only the OTel observer: no exporter (the SDK records, nothing exports)
    or an in-memory one."""
    tracer_provider = TracerProvider()
    if exporter is not None:
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    manager = new_plugin_manager()
    manager.register(OtelObserver(tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()])))
    return manager.hook


def timed(call: Any, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - started) / 1000)
    return samples


def run(rounds: int, per_round: int) -> dict[str, Any]:
    provider = FakeProvider(default_reply=FakeReply(content="ok"))

    def call() -> None:
        provider.chat_completion("hello")

    results: dict[str, Any] = {}
    for name, exporter in (("sdk, no exporter", None), ("sdk, in-memory exporter", InMemorySpanExporter())):
        hooks = relay(exporter)
        with_otel, without = Series(), Series()
        for round_no in range(rounds):
            order = [(hooks, with_otel), (None, without)]
            for installed, series in order if round_no % 2 == 0 else order[::-1]:
                observers.install(installed)
                timed(call, per_round // 10)  # warm up this side
                gc.collect()
                series.add_round(timed(call, per_round))
            if exporter is not None:
                exporter.clear()
        observers.install(None)
        results[name] = compare(with_otel, without)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=2000)
    parser.add_argument("--check", action="store_true", help="exit 1 when the overhead is above the target")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.rounds, args.per_round)
    failed = False
    for name, result in results.items():
        overhead = result["overhead"]
        above = overhead["ci95_low"] > TARGET_US
        failed = failed or above
        if not args.json:
            print(
                f"{name}: {result['core']['median']:.1f} us vs {result['bare']['median']:.1f} us without observers; "
                f"overhead {overhead['median']:+.1f} us (95% CI {overhead['ci95_low']:+.1f} to "
                f"{overhead['ci95_high']:+.1f}; rounds {overhead['min']:+.1f} to {overhead['max']:+.1f}) "
                f"target +{TARGET_US:.0f} us: {'MISSED' if above else 'met'}"
            )
    if args.json:
        print(json.dumps(results, indent=2))
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
