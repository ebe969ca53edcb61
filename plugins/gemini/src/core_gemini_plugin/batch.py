"""Gemini batch mode: ``client.batches.create`` (each request the ``generate_content`` arguments
of the single call, plus ``metadata`` naming its ``custom_id``) and
``client.batches.create_embeddings`` (every input of the job, one config); results parsed by
the single-call parsers.

A job of at most :data:`INLINE_MAX_ITEMS` requests and :data:`INLINE_MAX_BYTES` goes inlined in
the create call (one ``EmbedContentBatch`` for embeddings) and its responses come back inside the
job, in input order. A bigger job goes as an uploaded JSONL file and its results come back as
one (:mod:`core_gemini_plugin.batch_files`).

Shapes: ``google.genai.types`` ``InlinedRequest``, ``BatchJobSource`` (``inlined_requests`` or
``file_name``), ``EmbeddingsBatchJobSource``, ``EmbedContentBatch``, ``CreateBatchJobConfig``
(``display_name``: the job's tag), ``BatchJob`` (``state``: ``JobState``; ``dest.inlined_responses``:
``InlinedResponse``; ``dest.inlined_embed_content_responses``: ``InlinedEmbedContentResponse``;
``dest.file_name``: the output file), ``JobError``. The SDK is imported only inside the calls.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from core_gemini_plugin import batch_files
from llm_core.batch.capability import BatchAPI, Item, Result
from llm_core.batch.types import BatchState, BatchStatus, ItemKind
from llm_core.errors import InvalidResponseError, LLMError
from llm_core.features import Feature
from llm_core.provider import BaseProvider

if TYPE_CHECKING:
    from google import genai

PROVIDER = "gemini"
#: How many of the newest jobs a look-up by tag reads.
FIND_LIMIT = 1000
#: The metadata key of an inlined request that holds its ``custom_id``.
ID_KEY = "custom_id"
#: A job goes inlined up to this many requests: every status request of an inlined job returns all
#: its responses, so bigger jobs go as a file, whose results are downloaded once.
INLINE_MAX_ITEMS = 1_000
#: ... and up to this size (the docs: inlined requests suit "smaller batches that keep the total
#: request size under 20MB").
INLINE_MAX_BYTES = 20_000_000

_STATES = {
    "JOB_STATE_UNSPECIFIED": BatchState.QUEUED,
    "JOB_STATE_QUEUED": BatchState.QUEUED,
    "JOB_STATE_PENDING": BatchState.QUEUED,
    "JOB_STATE_PAUSED": BatchState.QUEUED,
    "JOB_STATE_RUNNING": BatchState.RUNNING,
    "JOB_STATE_UPDATING": BatchState.RUNNING,
    "JOB_STATE_CANCELLING": BatchState.RUNNING,
    "JOB_STATE_SUCCEEDED": BatchState.COMPLETED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": BatchState.COMPLETED,
    "JOB_STATE_FAILED": BatchState.FAILED,
    "JOB_STATE_CANCELLED": BatchState.CANCELLED,
    "JOB_STATE_EXPIRED": BatchState.EXPIRED,
}
# -- pure mapping and parsing -------------------------------------------------------------------


def map_batch(group: str, mapped: Sequence[tuple[str, dict[str, Any]]], tag: str) -> dict[str, Any]:
    """``batches.create`` (or ``create_embeddings``) arguments for the job: inlined requests, or
    the input file's lines (``file_lines``) for :func:`batch_files.upload` when the job is big."""
    model = mapped[0][1]["model"]
    config = {"display_name": tag}
    embeddings = group.startswith("embeddings:")
    if embeddings:
        lines = [line for cid, payload in mapped for line in batch_files.embedding_lines(cid, payload)]
    else:
        lines = [batch_files.generate_line(cid, payload) for cid, payload in mapped]
    size = batch_files.check_size(lines)
    if len(lines) > INLINE_MAX_ITEMS or size > INLINE_MAX_BYTES:
        return {"embeddings": embeddings, "model": model, "file_lines": lines, "config": config}
    if embeddings:
        settings = mapped[0][1].get("config") or {}
        contents = [text for _, payload in mapped for text in payload["contents"]]
        return {
            "embeddings": True,
            "model": model,
            "src": {"inlined_requests": {"contents": contents, "config": settings}},
            "config": config,
        }
    requests = [{**payload, "metadata": {ID_KEY: cid}} for cid, payload in mapped]
    return {"embeddings": False, "model": model, "src": {"inlined_requests": requests}, "config": config}


def parse_job(raw: Any) -> BatchStatus:
    """``types.BatchJob`` → :class:`BatchStatus` (counts once the job has inlined responses)."""
    state = raw.state.name if raw.state is not None else "JOB_STATE_UNSPECIFIED"
    records = _records(raw)
    failed = sum(1 for r in records if r.error is not None) if records else None
    return BatchStatus(
        id=raw.name or "",
        state=_STATES.get(state, BatchState.RUNNING),
        provider=PROVIDER,
        total=len(records) if records else None,
        completed=len(records) - failed if records and failed is not None else None,
        failed=failed,
        provider_state=state,
        error=raw.error.message if raw.error is not None else None,
    )


def _records(raw: Any) -> list[Any]:
    dest = raw.dest
    if dest is None:
        return []
    return list(dest.inlined_responses or dest.inlined_embed_content_responses or [])


def item_error(error: Any) -> LLMError:
    """The typed error of one failed request (``JobError``: an RPC code and a message)."""
    return batch_files.rpc_error(error.code, error.message)


def parse_records(records: Iterable[Any], order: Sequence[str], items: Mapping[str, Item]) -> Iterator[Result]:
    """``(custom_id, SDK response | LLMError)``; responses follow the input order, and an
    embedding item takes as many responses as it has inputs."""
    from google.genai import types

    pending = iter(records)
    for custom_id in order:
        item = items[custom_id]
        if item.kind != "embedding":
            record = next(pending, None)
            if record is None:
                return  # the job ended before the rest ran: the core says why for each
            if record.metadata and record.metadata.get(ID_KEY) not in (None, custom_id):
                yield custom_id, InvalidResponseError("Gemini batch: responses out of order", provider=PROVIDER)
                continue
            yield custom_id, item_error(record.error) if record.error is not None else record.response
            continue
        count = 1 if isinstance(item.input, str) else len(item.input)
        group = [r for r in (next(pending, None) for _ in range(count)) if r is not None]
        if len(group) < count:
            return
        errors = [r.error for r in group if r.error is not None]
        if errors:
            yield custom_id, item_error(errors[0])
            continue
        embeddings = [r.response.embedding if r.response is not None else None for r in group]
        yield custom_id, types.EmbedContentResponse(embeddings=[e for e in embeddings if e is not None])


# -- the provider's batch calls ------------------------------------------------------------------


class _Clients(Protocol):
    """What the batch API uses of its provider: the SDK client and the backend it talks to."""

    @property
    def client(self) -> genai.Client: ...

    _vertexai: bool


class GeminiBatch(BatchAPI):
    """Batch mode of :class:`~core_gemini_plugin.provider.GeminiProvider` (``provider.batch``)."""

    # a job above the inlined limits goes as a file (at most 2 GB); the runner's jobs stay this small
    max_items = 50_000

    def __init__(self, provider: BaseProvider) -> None:
        super().__init__(provider)
        #: The provider, as the holder of the SDK client (built on its first use).
        self.clients = cast(_Clients, provider)

    def require(self) -> None:
        p = self.provider
        if self.clients._vertexai:  # the reason, not "has no batch API"
            p._require(Feature.BATCH, p.default_model())
        super().require()

    def group(self, kind: ItemKind, request: Any) -> str:
        if kind != "embedding":
            return super().group(kind, request)
        # one EmbedContentBatch has one config: items share a job only when their settings agree
        options = ",".join(f"{k}={request.options[k]!r}" for k in sorted(request.options))
        return f"embeddings:{request.model}:{request.task_type}:{request.dimensions}:{options}"

    def map_batch_request(self, group: str, mapped: Sequence[tuple[str, dict[str, Any]]], tag: str) -> dict[str, Any]:
        return map_batch(group, mapped, tag)

    def _send_batch_create(self, payload: dict[str, Any]) -> Any:
        batches = self.clients.client.batches
        src: Any = payload.get("src")
        if "file_lines" in payload:
            src = batch_files.upload(self.clients.client, payload["file_lines"], payload["config"]["display_name"])
        if not payload["embeddings"]:
            return batches.create(model=payload["model"], src=src, config=payload["config"])
        src = {"file_name": src} if isinstance(src, str) else src
        with _experimental_ok():
            return batches.create_embeddings(model=payload["model"], src=src, config=payload["config"])

    async def _asend_batch_create(self, payload: dict[str, Any]) -> Any:
        batches = self.clients.client.aio.batches
        src: Any = payload.get("src")
        if "file_lines" in payload:
            src = await batch_files.aupload(
                self.clients.client, payload["file_lines"], payload["config"]["display_name"]
            )
        if not payload["embeddings"]:
            return await batches.create(model=payload["model"], src=src, config=payload["config"])
        src = {"file_name": src} if isinstance(src, str) else src
        with _experimental_ok():
            return await batches.create_embeddings(model=payload["model"], src=src, config=payload["config"])

    def _send_batch_get(self, job_id: str) -> Any:
        return self.clients.client.batches.get(name=job_id)

    async def _asend_batch_get(self, job_id: str) -> Any:
        return await self.clients.client.aio.batches.get(name=job_id)

    def _send_batch_cancel(self, job_id: str) -> Any:
        return self.clients.client.batches.cancel(name=job_id)

    async def _asend_batch_cancel(self, job_id: str) -> Any:
        return await self.clients.client.aio.batches.cancel(name=job_id)

    def _send_batch_find(self, tag: str) -> Any | None:
        for seen, job in enumerate(self.clients.client.batches.list(config={"page_size": 100})):
            if seen >= FIND_LIMIT:
                break
            if job.display_name == tag:
                return job
        return None

    async def _asend_batch_find(self, tag: str) -> Any | None:
        seen = 0
        async for job in await self.clients.client.aio.batches.list(config={"page_size": 100}):
            if job.display_name == tag:
                return job
            seen += 1
            if seen >= FIND_LIMIT:
                break
        return None

    parse_batch_status = staticmethod(parse_job)

    def _send_batch_output(self, raw: Any) -> Iterable[Any]:
        name = raw.dest.file_name if raw.dest is not None else None
        if name:
            return self.provider.executor.execute(
                "batch_download", None, batch_files.download, self.clients.client, name
            )
        return _records(raw)  # inlined: the responses came with the job

    async def _asend_batch_output(self, raw: Any) -> Iterable[Any]:
        name = raw.dest.file_name if raw.dest is not None else None
        if name:
            return await self.provider.executor.aexecute(
                "batch_download", None, batch_files.adownload, self.clients.client, name
            )
        return _records(raw)

    def parse_batch_output(
        self, records: Iterable[Any], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]:
        pending = iter(records)
        first = next(pending, None)
        if first is None:
            return iter(())
        records = itertools.chain([first], pending)
        if isinstance(first, dict):  # the lines of an output file
            return batch_files.file_results(records, items)
        return parse_records(records, order, items)


class _experimental_ok(warnings.catch_warnings):
    """``batches.create_embeddings`` warns that it is experimental on every call; the plugin
    chose it knowingly (docs/batch.md), so the warning is not passed on."""

    def __enter__(self) -> None:
        super().__enter__()
        from google.genai.errors import ExperimentalWarning

        warnings.simplefilter("ignore", ExperimentalWarning)


__all__ = ["GeminiBatch", "map_batch", "parse_job", "parse_records"]
