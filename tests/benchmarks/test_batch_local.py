"""The batch benchmark (``benchmarks/batch_local.py``) end to end at a tiny size: both sides run
in their own processes against the loopback server, every id comes back once on each, the report
and the targets are built. No timing is asserted: a tiny run's numbers are noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.report import batch_targets
from benchmarks.server import LoopbackServer

from benchmarks import batch_local
from llm_core.batch.types import item_from_json


@pytest.fixture(scope="module")
def tiny_run() -> dict[str, Any]:
    with LoopbackServer(max_seconds=300) as server:
        result = batch_local.run(server.url, requests=40, concurrency=8, rounds=2)
        stats = server.get("/_bench/stats")
    result["server"] = stats
    return result


def test_both_sides_sent_every_request_and_got_every_id_back_once(tiny_run: dict[str, Any]) -> None:
    assert tiny_run["all_ok"]
    for side in batch_local.SIDES:
        runs = tiny_run["runs"][side]
        assert len(runs) == 2
        for found in runs:
            assert found["requests"] == found["results"] == found["ok"] == 40
            assert found["each_id_once"]
            assert found["throughput"] > 0 and found["peak_rss_mib"] > 0
            marks = [mark["done"] for mark in found["checkpoints"]]
            if side == "bare":
                assert marks == [5, 15, 25, 35]
            else:  # the runner reports progress as it syncs (every 200 results, and at the end)
                assert len(marks) == 4 and all(m >= want for m, want in zip(marks, [5, 15, 25, 35], strict=True))
    # 2 rounds x 2 sides x 40 requests, plus one warm-up request per run, all to /v1/responses
    assert tiny_run["server"]["by_kind"] == {"openai": 2 * 2 * 41}
    assert tiny_run["throughput"]["ratio"]["median"] > 0


def test_the_report_and_the_targets(tiny_run: dict[str, Any]) -> None:
    text = "\n".join(batch_local.markdown_lines(tiny_run))
    assert "### Batch runner, local mode: 40 requests at 8 in flight (openai, 2 rounds" in text
    assert "| throughput (req/s), median [min, max] |" in text
    for side in ("runner", "bare SDK"):
        assert f"| {side} | 1 | " in text and f"| {side} | 2 | " in text
    targets = {t["name"].split(": ", 1)[1]: t for t in batch_targets(tiny_run)}
    assert set(targets) == {
        "throughput over the bare SDK",
        "live-object growth, first to last quarter",
        "RSS growth, first to last quarter",
        "every id exactly once, every result ok",
    }
    assert targets["throughput over the bare SDK"]["at_least"] is True
    assert targets["every id exactly once, every result ok"]["met"] is True


def test_the_input_is_jsonl_chat_items_the_runner_reads(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    batch_local.write_input(source, 3)
    lines = source.read_text().splitlines()
    items = [item_from_json(line, where="test") for line in lines]
    assert [item.custom_id for item in items] == ["q000001", "q000002", "q000003"]
    assert items[1].kind == "chat" and items[1].messages == batch_local.question(2)
    assert "kind" not in json.loads(lines[0])
