"""The OTel plugin's wheel installs beside llm-core and the Gemini plugin in a fresh venv (no
network), and a replayed call (the repository's cassettes) shows its span on a console exporter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
trace.set_tracer_provider(provider)

from llm_core.cli.demo import CHAT_PROMPT
from llm_core.cli.replay import replaying
from llm_core.registry import get_registry

with replaying(Path(sys.argv[1])):
    get_registry().get("gemini").chat_completion(CHAT_PROMPT)
"""


def test_otel_wheel_beside_the_others_traces_a_replayed_call(
    plugin_wheelhouse: Path, fresh_venv: Any, tmp_path: Path, build_distribution: Any
) -> None:
    venv = fresh_venv
    wheels = [build_distribution(ROOT / name, tmp_path / name) for name in ("core", "plugins/gemini", "plugins/otel")]
    venv.pip_install(f"{wheels[0]}[replay]", str(wheels[1]), str(wheels[2]), "opentelemetry-sdk")
    script = tmp_path / "traced.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = venv.run(str(venv.python), str(script), str(ROOT / "cassettes"))
    assert done.returncode == 0, done.stderr[-3000:]
    # ConsoleSpanExporter prints each span as a JSON object
    span = json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])
    assert span["name"] == "chat gemini-2.5-flash"
    assert span["kind"] == "SpanKind.CLIENT"
    attributes = span["attributes"]
    assert attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["server.address"] == "generativelanguage.googleapis.com"
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert "llm_core.usage.cost_usd" in attributes
