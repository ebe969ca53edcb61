"""The OpenAI Batch API: items → one JSONL file (``files.create(purpose="batch")``) →
``batches.create`` on ``/v1/responses`` or ``/v1/embeddings``; results from the output and
error files, each line parsed by the single-call parsers.

Shapes: the request and result lines are the Batch API's ``BatchRequestInput`` (``custom_id``,
``method``, ``url``, ``body``) and ``BatchRequestOutput`` (``id``, ``custom_id``, ``response``
with ``status_code``, ``request_id`` and ``body``, ``error`` with ``code`` and ``message``);
the job is ``openai.types.Batch``. The SDK is imported only inside the calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from core_openai_plugin.errors import error_from_code
from llm_core.batch.capability import BatchAPI, Item, Result
from llm_core.batch.types import BatchState, BatchStatus
from llm_core.errors import InvalidInputError, InvalidResponseError, LLMError, ProviderTimeoutError
from llm_core.provider import BaseProvider

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

PROVIDER = "openai"
ENDPOINTS = {"generate": "/v1/responses", "embeddings": "/v1/embeddings"}
#: The job's metadata key that holds its tag (how a job is found again after a crash).
TAG_KEY = "llm_core_tag"
#: How many of the newest jobs a look-up by tag reads.
FIND_LIMIT = 1000
#: Per-request options that cannot travel in a batch file (they are HTTP headers or query).
_NOT_IN_FILE = ("extra_headers", "extra_query")

_STATES = {
    "validating": BatchState.QUEUED,
    "in_progress": BatchState.RUNNING,
    "finalizing": BatchState.RUNNING,
    "cancelling": BatchState.RUNNING,
    "completed": BatchState.COMPLETED,
    "failed": BatchState.FAILED,
    "expired": BatchState.EXPIRED,
    "cancelled": BatchState.CANCELLED,
}


# -- pure mapping and parsing -------------------------------------------------------------------


def request_body(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A single call's SDK keywords as the JSON body the endpoint takes."""
    refused = [name for name in _NOT_IN_FILE if payload.get(name)]
    if refused:
        raise InvalidInputError(f"{', '.join(refused)} cannot be sent in a batch file", provider=PROVIDER)
    body = {k: v for k, v in payload.items() if k not in (*_NOT_IN_FILE, "extra_body")}
    body.update(payload.get("extra_body") or {})
    return body


def map_batch_file(group: str, bodies: Sequence[tuple[str, dict[str, Any]]], tag: str) -> dict[str, Any]:
    """The upload and the job: ``{"endpoint", "file": (name, bytes), "metadata"}``."""
    endpoint = ENDPOINTS[group.split(":", 1)[0]]
    lines = [
        json.dumps({"custom_id": cid, "method": "POST", "url": endpoint, "body": body}, ensure_ascii=False)
        for cid, body in bodies
    ]
    data = ("\n".join(lines) + "\n").encode()
    return {"endpoint": endpoint, "file": (f"{tag}.jsonl", data, "application/jsonl"), "metadata": {TAG_KEY: tag}}


def parse_batch(raw: Any) -> BatchStatus:
    """``openai.types.Batch`` → :class:`BatchStatus`."""
    counts = raw.request_counts
    errors = raw.errors.data if raw.errors is not None and raw.errors.data else []
    return BatchStatus(
        id=raw.id,
        state=_STATES.get(raw.status, BatchState.RUNNING),
        provider=PROVIDER,
        total=counts.total if counts is not None else None,
        completed=counts.completed if counts is not None else None,
        failed=counts.failed if counts is not None else None,
        provider_state=raw.status,
        error="; ".join(e.message or e.code or "error" for e in errors) or None,
    )


def item_error(error: Mapping[str, Any] | None, status: int | None = None) -> LLMError:
    """The typed error of one failed line (``error`` object, or a non-200 response's body error)."""
    code = str(error.get("code") or error.get("type") or "") if error else ""
    message = str(error.get("message") or "no message") if error else "no message"
    if code == "batch_expired":
        return ProviderTimeoutError(f"OpenAI batch: {message}", provider=PROVIDER)
    return error_from_code(code or None, message, provider=PROVIDER, status=status)


def parse_lines(lines: Iterable[str | bytes], items: Mapping[str, Item]) -> Iterator[Result]:
    """``(custom_id, SDK response | LLMError)`` per output or error file line."""
    from openai.types import CreateEmbeddingResponse
    from openai.types.responses import Response

    for text in lines:
        if not text.strip():
            continue
        line = json.loads(text)
        custom_id = str(line.get("custom_id"))
        item = items.get(custom_id)
        if item is None:
            continue
        response = line.get("response") or {}
        status = response.get("status_code")
        if line.get("error") or status != 200:
            body = response.get("body")
            yield custom_id, item_error(line.get("error") or (body or {}).get("error"), status)
            continue
        model = CreateEmbeddingResponse if item.kind == "embedding" else Response
        body = response.get("body")
        if not isinstance(body, Mapping):
            yield custom_id, InvalidResponseError("OpenAI batch: a result line without a body", provider=PROVIDER)
            continue
        # built as the SDK builds a single call's answer (its construct() builds nested types too)
        yield custom_id, model.construct(**body)


# -- the provider's batch calls ------------------------------------------------------------------


class _Clients(Protocol):
    """What the batch API uses of its provider: the SDK clients."""

    @property
    def client(self) -> OpenAI: ...

    @property
    def async_client(self) -> AsyncOpenAI: ...


class OpenAIBatch(BatchAPI):
    """The Batch API of :class:`~core_openai_plugin.provider.OpenAIProvider` (``provider.batch``)."""

    max_items = 50_000  # the most requests one input file may hold

    def __init__(self, provider: BaseProvider) -> None:
        super().__init__(provider)
        #: The provider, as the holder of the SDK clients (built on their first use).
        self.clients = cast(_Clients, provider)

    def map_batch_request(self, group: str, mapped: Sequence[tuple[str, dict[str, Any]]], tag: str) -> dict[str, Any]:
        return map_batch_file(group, [(cid, request_body(payload)) for cid, payload in mapped], tag)

    def _send_batch_create(self, payload: dict[str, Any]) -> Any:
        uploaded = self.clients.client.files.create(file=payload["file"], purpose="batch")
        return self.clients.client.batches.create(
            input_file_id=uploaded.id,
            endpoint=payload["endpoint"],
            completion_window="24h",
            metadata=payload["metadata"],
        )

    async def _asend_batch_create(self, payload: dict[str, Any]) -> Any:
        uploaded = await self.clients.async_client.files.create(file=payload["file"], purpose="batch")
        return await self.clients.async_client.batches.create(
            input_file_id=uploaded.id,
            endpoint=payload["endpoint"],
            completion_window="24h",
            metadata=payload["metadata"],
        )

    def _send_batch_get(self, job_id: str) -> Any:
        return self.clients.client.batches.retrieve(job_id)

    async def _asend_batch_get(self, job_id: str) -> Any:
        return await self.clients.async_client.batches.retrieve(job_id)

    def _send_batch_cancel(self, job_id: str) -> Any:
        return self.clients.client.batches.cancel(job_id)

    async def _asend_batch_cancel(self, job_id: str) -> Any:
        return await self.clients.async_client.batches.cancel(job_id)

    def _send_batch_find(self, tag: str) -> Any | None:
        for seen, job in enumerate(self.clients.client.batches.list(limit=100)):
            if seen >= FIND_LIMIT:
                break
            if (job.metadata or {}).get(TAG_KEY) == tag:
                return job
        return None

    async def _asend_batch_find(self, tag: str) -> Any | None:
        seen = 0
        async for job in self.clients.async_client.batches.list(limit=100):
            if (job.metadata or {}).get(TAG_KEY) == tag:
                return job
            seen += 1
            if seen >= FIND_LIMIT:
                break
        return None

    parse_batch_status = staticmethod(parse_batch)

    def _send_batch_output(self, raw: Any) -> Iterator[str]:
        # streamed line by line: a 200 MB output file is never held whole
        for file_id in (raw.output_file_id, raw.error_file_id):
            if file_id:
                with self.clients.client.files.with_streaming_response.content(file_id) as response:
                    yield from response.iter_lines()

    async def _asend_batch_output(self, raw: Any) -> list[str]:
        lines: list[str] = []
        for file_id in (raw.output_file_id, raw.error_file_id):
            if file_id:
                async with self.clients.async_client.files.with_streaming_response.content(file_id) as response:
                    lines.extend([line async for line in response.iter_lines()])
        return lines

    def parse_batch_output(
        self, records: Iterable[Any], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]:
        return parse_lines(records, items)
