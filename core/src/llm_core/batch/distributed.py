"""Items on a distributed engine's workers (Dask; docs/batch.md has the recipe).

A provider, router or registry pickles by its settings and never with a key: each worker
builds its own SDK client on first use and resolves the key from its own environment or config
file. :func:`run_item` is the task a worker runs; it imports nothing from Dask, so any engine
that pickles its arguments can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llm_core.batch.calls import call_item, result_line
from llm_core.batch.types import BatchItem, item_from_json, parse_item


def run_item(item: str | Mapping[str, Any] | BatchItem, target: Any) -> dict[str, Any]:
    """One item (a JSONL line, a mapping or an item) through ``target`` (a provider or router):
    its output line, as :func:`llm_core.batch.run` writes it (a failure is the item's typed error)."""
    parsed = item_from_json(item, where="item") if isinstance(item, str) else parse_item(item)
    return result_line(parsed.custom_id, parsed.kind, call_item(target, parsed))
