"""``python -m benchmarks.layers``: every part is measured for both providers, from SDK objects
taken from a real exchange with the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import layers


def test_every_part_is_timed_for_both_providers_and_the_parts_fit_in_the_call(tmp_path: Path) -> None:
    out = tmp_path / "layers.json"
    assert layers.main(["--number", "20", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert len(report["load"]) == 3
    for provider in ("gemini", "openai"):
        parts = report["results"][provider]
        assert set(parts) >= {"whole call (llm-core only)", "retry policy (tenacity loop around one attempt)"}
        assert all(value > 0 for value in parts.values())
        # the request's parts are each a piece of the whole call
        assert parts["plan: build and check the request"] < parts["whole call (llm-core only)"]
        assert parts["parse the answer"] < parts["whole call (llm-core only)"]
