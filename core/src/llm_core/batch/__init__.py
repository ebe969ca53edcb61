"""Batches: provider batch APIs (:class:`BatchAPI`, ``provider.batch``), the resumable job runner (:func:`run`) and
the local bounded-concurrency executor. See docs/batch.md.

Importing this package imports no SDK; ``run`` and the job record load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llm_core.batch.capability import BatchAPI, BatchCapable
from llm_core.batch.errors import BatchBusyError, BatchFileError
from llm_core.batch.job import AsyncBatchJob, BatchJob
from llm_core.batch.types import (
    BatchItem,
    BatchState,
    BatchStatus,
    ChatItem,
    DecisionItem,
    EmbeddingItem,
    JsonItem,
    JsonResponse,
    parse_item,
)

if TYPE_CHECKING:
    from llm_core.batch.runner import RunSummary


def run(input: Any, **options: Any) -> RunSummary:  # noqa: A002 - the documented name
    """:func:`llm_core.batch.runner.run`: every item once into a JSONL output, resumable."""
    from llm_core.batch.runner import run as run_

    return run_(input, **options)


__all__ = [
    "AsyncBatchJob",
    "BatchBusyError",
    "BatchAPI",
    "BatchCapable",
    "BatchFileError",
    "BatchItem",
    "BatchJob",
    "BatchState",
    "BatchStatus",
    "ChatItem",
    "DecisionItem",
    "EmbeddingItem",
    "JsonItem",
    "JsonResponse",
    "parse_item",
    "run",
]
