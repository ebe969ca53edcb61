"""The installed plugin: discovered through its entry point, OpenTelemetry imported only once a
call is observed, spans on the application's global tracer provider."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_discovery_registers_the_plugin_without_importing_opentelemetry() -> None:
    out = run(
        """
        import sys
        from llm_core.registry import Registry
        registry = Registry.discover()
        print(sorted(p.distribution for p in registry.plugins))
        print(any(name.startswith("opentelemetry") for name in sys.modules))
        """
    )
    distributions, imported = out.splitlines()
    assert "core-otel-plugin" in distributions
    assert imported == "False"


def test_an_observed_call_is_a_span_on_the_global_provider() -> None:
    out = run(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        from llm_core.registry import Registry
        from llm_core.testing import FakeProvider, FakeReply
        Registry.discover().install_observers()
        FakeProvider(replies=[FakeReply(content="hi")]).chat_completion("hello")
        print([(s.name, s.attributes["gen_ai.operation.name"]) for s in exporter.get_finished_spans()])
        """
    )
    assert out.strip() == "[('chat fake-model', 'chat')]"
