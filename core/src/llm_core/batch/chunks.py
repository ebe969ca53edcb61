"""Batch mode's items into provider jobs ("chunks" in the job record): one group (endpoint and
model) per job, at most ``size`` items each. Used at ingest, and for items that belong to no job
any more (see :func:`adopt_orphans`)."""

from __future__ import annotations

from typing import Any

from llm_core.batch.capability import new_tag
from llm_core.batch.record import JobRecord
from llm_core.batch.types import Item


class Chunker:
    """Gives each item the job it goes in, adding jobs to ``record`` as groups fill up."""

    def __init__(self, record: JobRecord, provider: Any, size: int) -> None:
        self.record = record
        self.provider = provider
        self.size = size
        self._last = record.last_chunk()
        self._open: dict[str, tuple[int, int]] = {}  # group -> (chunk, items so far)

    def assign(self, item: Item) -> int:
        """The chunk of ``item``, validated as its single call would be (raises before any send)."""
        _custom_id, kind, request = self.provider.batch.build_entry(item)
        group = self.provider.batch.group(kind, request[1] if kind == "decision" else request)
        current = self._open.get(group)
        if current is None or current[1] >= self.size:
            self._last += 1
            self.record.add_chunk(self._last, group, new_tag())
            current = (self._last, 0)
        self._open[group] = (current[0], current[1] + 1)
        return current[0]


def adopt_orphans(record: JobRecord, provider: Any) -> None:
    """New jobs for the items not done that belong to none: the output held them when their
    job was sent (so they were left out of it), and has lost them since."""
    orphans = record.orphan_ids()
    if not orphans:
        return
    chunker = Chunker(record, provider, provider.batch.max_items)
    record.begin()
    try:
        for custom_id in orphans:
            item = record.item(custom_id)
            assert item is not None  # listed from the record just now
            record.set_item_chunk(custom_id, chunker.assign(item))
        record.commit()
    except BaseException:
        record.rollback()
        raise


__all__ = ["Chunker", "adopt_orphans"]
