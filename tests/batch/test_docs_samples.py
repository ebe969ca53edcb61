"""The Python samples of docs/batch.md run as written (against the loopback server: the SDK
reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment, as a user's would)."""

from __future__ import annotations

import copyreg
import json
import re
from pathlib import Path

import pytest

from llm_core.registry import reset_registry
from tests.batch.batchkit import OPENAI_KEY

DOC = Path(__file__).resolve().parents[2] / "docs" / "batch.md"


def test_python_samples_run(server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    saved = dict(copyreg.dispatch_table)  # the Dask recipe imports distributed: see test_cluster.py
    server.polls = 0
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    items = re.search(r"```json\n(.*?)```", text, re.S)
    assert items is not None
    (tmp_path / "items.jsonl").write_text(items.group(1))
    samples = re.findall(r"```python\n(.*?)```", text, re.S)
    assert samples
    reset_registry()
    try:
        for sample in samples:
            exec(compile(sample, str(DOC), "exec"), {})  # the documented code itself
    finally:
        reset_registry()
        copyreg.dispatch_table.clear()
        copyreg.dispatch_table.update(saved)
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted(line["custom_id"] for line in lines) == ["d1", "e1", "q1", "q2"]  # the Dask recipe's
    assert all(line["ok"] for line in lines), lines
