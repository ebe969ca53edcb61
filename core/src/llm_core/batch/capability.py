"""A provider's batch API (about half price, results within hours): :class:`BatchAPI`.

A provider with a batch API holds one (``provider.batch``, built from its class's
``batch_api``). ``provider.batch.submit(items)`` validates every item as the matching single call
would, maps each through the plugin's single-call mapper, and creates one provider job; the
:class:`~llm_core.batch.job.BatchJob` it returns polls, cancels and yields ``(custom_id,
response | LLMError)`` pairs parsed by the plugin's single-call parsers.

A plugin subclasses :class:`BatchAPI` and implements the pure ``map_batch_request`` /
``parse_batch_status`` / ``parse_batch_output`` and the SDK calls ``_send_batch_*`` (sync) and
``_asend_batch_*`` (async), reading its clients from ``self.provider``; validation, retries and
per-item parsing live here once.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from llm_core.batch.job import BatchJob, missing_result
from llm_core.batch.types import (
    BatchStatus,
    ChatItem,
    EmbeddingItem,
    Item,
    ItemKind,
    JsonItem,
    JsonResponse,
    Result,
    parse_item,
)
from llm_core.capabilities import Capability
from llm_core.errors import InvalidInputError, LLMError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.operation import Cost
from llm_core.provider import BaseProvider
from llm_core.provider.execution import CallExecutor
from llm_core.responses import decode_json
from llm_core.wire import CHAT, EMBEDDINGS, Route

#: One prepared item: its id, kind and the validated single-call request.
Entry = tuple[str, ItemKind, Any]


class BatchCapable(Capability):
    """A provider whose class has a batch API (``provider.batch``; checked by ``isinstance``)."""

    feature = Feature.BATCH


class BatchAPI(ABC):
    """The batch API of one provider. Items of one job share an endpoint and a model
    (:meth:`group`); :func:`llm_core.batch.run` splits mixed input into jobs."""

    #: Item kinds this provider's batch API takes.
    kinds: ClassVar[frozenset[str]] = frozenset({"chat", "json", "embedding", "decision"})
    #: The most items one job may hold (the runner cuts its input into jobs of at most this).
    max_items: ClassVar[int] = 10_000

    def __init__(self, provider: BaseProvider) -> None:
        self.provider = provider
        self.identifier = provider.identifier

    @property
    def executor(self) -> CallExecutor:
        """The provider's call executor (retries, error mapping, observers)."""
        return self.provider.executor

    def require(self) -> None:
        """Raise :class:`UnsupportedFeatureError` unless the batch API is offered (a provider that
        lacks it for a reason, such as a backend without it, says why)."""
        p = self.provider
        if not p.supports_batch():
            raise UnsupportedFeatureError(f"{p.name} has no batch API; use mode='local'", provider=self.identifier)

    # -- hooks a plugin implements ------------------------------------------------------------

    @abstractmethod
    def map_batch_request(self, group: str, mapped: Sequence[tuple[str, dict[str, Any]]], tag: str) -> dict[str, Any]:
        """The job payload from ``(custom_id, single-call payload)`` pairs; ``tag`` names the job
        so that :meth:`_send_batch_find` can find it again after a crash."""
        raise NotImplementedError

    @abstractmethod
    def _send_batch_create(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    @abstractmethod
    async def _asend_batch_create(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    @abstractmethod
    def _send_batch_get(self, job_id: str) -> Any:
        raise NotImplementedError

    @abstractmethod
    async def _asend_batch_get(self, job_id: str) -> Any:
        raise NotImplementedError

    @abstractmethod
    def _send_batch_cancel(self, job_id: str) -> Any:
        raise NotImplementedError

    @abstractmethod
    async def _asend_batch_cancel(self, job_id: str) -> Any:
        raise NotImplementedError

    @abstractmethod
    def _send_batch_find(self, tag: str) -> Any | None:
        """The provider's job created with ``tag``, or ``None``."""
        raise NotImplementedError

    @abstractmethod
    async def _asend_batch_find(self, tag: str) -> Any | None:
        raise NotImplementedError

    @abstractmethod
    def parse_batch_status(self, raw: Any) -> BatchStatus:
        raise NotImplementedError

    @abstractmethod
    def _send_batch_output(self, raw: Any) -> Iterable[Any]:
        """The result records of a finished job (downloaded lazily where the SDK allows)."""
        raise NotImplementedError

    @abstractmethod
    async def _asend_batch_output(self, raw: Any) -> Iterable[Any]:
        raise NotImplementedError

    @abstractmethod
    def parse_batch_output(
        self, records: Iterable[Any], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]:
        """``(custom_id, raw single-call SDK response | LLMError)`` per record; ``order`` is the
        ids in submission order (for providers whose output follows the input order)."""
        raise NotImplementedError

    def group(self, kind: ItemKind, request: Any) -> str:
        """Items with the same group may share one job: one endpoint and one model."""
        endpoint = "embeddings" if kind == "embedding" else "generate"
        return f"{endpoint}:{request.model}"

    # -- items -> validated requests (the same builders as the single calls) ------------------

    def build_entry(self, item: Item | Mapping[str, Any]) -> Entry:
        """Validate one item exactly as its single call would; raises before anything is sent."""
        p = self.provider
        item = parse_item(item, where=f"item {_id_of(item)!r}")
        if item.kind not in self.kinds:
            raise UnsupportedFeatureError(
                f"the batch API of {p.name} does not take {item.kind} items", provider=self.identifier
            )
        options = dict(item.options)
        request: Any
        if isinstance(item, ChatItem):
            request = p.builder.chat(item.messages, **options)
        elif isinstance(item, JsonItem):
            _implements(p, Feature.JSON_MODE, "json")
            request = p.builder.json(item.prompt, item.json_schema, **options)
        elif isinstance(item, EmbeddingItem):
            _implements(p, Feature.EMBEDDINGS, "embedding")
            request = p.builder.embeddings(item.input, **options)
        else:
            _implements(p, Feature.DECISION, "decision")
            decision = p.builder.decision(item.subject, item.questions, **options)
            if p.native_decisions(decision.model):
                raise UnsupportedFeatureError(
                    f"model {decision.model!r} answers through the native decision API, which batch jobs do not "
                    "take; set options.model to a structured-output model",
                    provider=self.identifier,
                )
            # batch APIs have no decision endpoint: the structured-output form of decide() goes
            request = (decision, p.builder.decision_fallback(decision))
        p._require(Feature.BATCH, _chat_of((item.custom_id, item.kind, request)).model)
        return item.custom_id, item.kind, request

    def prepare(self, items: Iterable[Item | Mapping[str, Any]]) -> tuple[str, list[Item], list[Entry]]:
        """Check a whole job before anything is uploaded: every item valid, ids unique, one
        group, at most :attr:`max_items`. Returns the group, the items and the entries."""
        self.require()
        parsed: list[Item] = []
        entries: list[Entry] = []
        seen: set[str] = set()
        group: str | None = None
        for raw in items:
            item = parse_item(raw, where=f"item {len(parsed) + 1}")
            if item.custom_id in seen:
                raise InvalidInputError(f"duplicate custom_id {item.custom_id!r}", provider=self.identifier)
            seen.add(item.custom_id)
            entry = self.build_entry(item)
            own = self.group(entry[1], _chat_of(entry))
            if group is not None and own != group:
                raise InvalidInputError(
                    f"item {item.custom_id!r} needs a separate job ({own}, not {group}): one job takes one "
                    "endpoint and one model; llm_core.batch.run() splits the input for you",
                    provider=self.identifier,
                )
            group = own
            parsed.append(item)
            entries.append(entry)
        if group is None:
            raise InvalidInputError("a batch needs at least one item", provider=self.identifier)
        if len(entries) > self.max_items:
            raise InvalidInputError(
                f"{len(entries)} items exceed the {self.max_items} one {self.provider.name} job takes",
                provider=self.identifier,
            )
        return group, parsed, entries

    def map_entries(self, group: str, entries: Sequence[Entry], tag: str) -> dict[str, Any]:
        """The job payload: each entry through the single-call mapper, then the plugin's batch mapper."""
        mapped: list[tuple[str, dict[str, Any]]] = []
        for custom_id, kind, request in entries:
            hooks = _route_of(kind).hooks(self.provider)
            mapped.append((custom_id, hooks.map(_chat_of((custom_id, kind, request)))))
        return self.map_batch_request(group, mapped, tag)

    # -- jobs ---------------------------------------------------------------------------------

    def submit(self, items: Iterable[Item | Mapping[str, Any]], *, tag: str | None = None) -> BatchJob:
        """Validate ``items`` (typed errors before any upload), create one job, return it."""
        group, parsed, entries = self.prepare(items)
        tag = tag or new_tag()
        payload = self.map_entries(group, entries, tag)
        raw = self.executor.execute("batch_create", None, self._create_once(tag), payload)
        status = self.parse_batch_status(raw)
        return BatchJob(self, status.id, order=[i.custom_id for i in parsed], items={i.custom_id: i for i in parsed})

    async def asubmit(self, items: Iterable[Item | Mapping[str, Any]], *, tag: str | None = None) -> BatchJob:
        """The async twin of :meth:`submit`; the job's async methods are on ``job.aio``."""
        group, parsed, entries = self.prepare(items)
        tag = tag or new_tag()
        payload = self.map_entries(group, entries, tag)
        raw = await self.executor.aexecute("batch_create", None, self._acreate_once(tag), payload)
        status = self.parse_batch_status(raw)
        return BatchJob(self, status.id, order=[i.custom_id for i in parsed], items={i.custom_id: i for i in parsed})

    def job(self, job_id: str, *, order: Sequence[str], items: Mapping[str, Item]) -> BatchJob:
        """A handle on an existing job (e.g. after a restart): its ids in submission order and
        a mapping that gives each id's item (the runner passes its job record)."""
        return BatchJob(self, job_id, order=order, items=items)

    def find(self, tag: str) -> str | None:
        """The id of the job created with ``tag``, or ``None`` (see :meth:`submit`)."""
        raw = self.executor.execute("batch_find", None, self._send_batch_find, tag)
        return None if raw is None else self.parse_batch_status(raw).id

    def _create_once(self, tag: str) -> Callable[[dict[str, Any]], Any]:
        """The create call for the retry policy: a retry first looks for the job the failed
        attempt may have created after all (a timeout after the server accepted it), so that
        one submission never makes two jobs."""
        attempts = [0]

        def create(payload: dict[str, Any]) -> Any:
            attempts[0] += 1
            if attempts[0] > 1:
                found = self._send_batch_find(tag)
                if found is not None:
                    return found
            return self._send_batch_create(payload)

        return create

    def _acreate_once(self, tag: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        attempts = [0]

        async def create(payload: dict[str, Any]) -> Any:
            attempts[0] += 1
            if attempts[0] > 1:
                found = await self._asend_batch_find(tag)
                if found is not None:
                    return found
            return await self._asend_batch_create(payload)

        return create

    # -- per-item results ---------------------------------------------------------------------

    def finish_item(self, item: Item, raw: Any) -> Any:
        """The item's response, parsed by the single-call parser, or its typed error."""
        executor = self.executor
        if isinstance(raw, BaseException):
            return executor.mapped(raw)
        try:
            custom_id, kind, request = self.build_entry(item)
            sent = _chat_of((custom_id, kind, request))
            cost = Cost.PROMPT if kind == "embedding" else Cost.TOKENS
            response = executor.costed(_route_of(kind).hooks(self.provider).parse(raw, sent), sent, cost, batch=True)
            if isinstance(item, JsonItem):
                return JsonResponse.of(decode_json(response, item.json_schema, self.identifier), response)
            if kind == "decision":
                decision, _ = request
                return self.provider.builder.decision_from_json(response, decision)
            return response
        except Exception as exc:  # noqa: BLE001 - one item's failure is that item's typed error
            return executor.mapped(exc)

    def results_of(self, raw: Any, order: Sequence[str], items: Mapping[str, Item]) -> Iterator[Result]:
        """Every id of ``order`` once: parsed records, then the ids without a record (each an
        error saying why: the job failed, expired or was cancelled before it ran)."""
        status = self.parse_batch_status(raw)
        records = self._send_batch_output(raw)
        return self._pair(status, self.parse_batch_output(records, order, items), order, items)

    def _pair(
        self, status: BatchStatus, parsed: Iterable[Result], order: Sequence[str], items: Mapping[str, Item]
    ) -> Iterator[Result]:
        wanted = set(order)
        for custom_id, raw in parsed:
            if custom_id not in wanted:  # an id this job never had, or one already given
                continue
            wanted.discard(custom_id)
            yield custom_id, self.finish_item(items[custom_id], raw)
        for custom_id in order:
            if custom_id in wanted:
                yield custom_id, missing_result(self, status)


def _implements(provider: BaseProvider, feature: Feature, kind: str) -> None:
    if feature not in provider.implemented_features():
        raise UnsupportedFeatureError(f"{provider.name} cannot run {kind} items", provider=provider.identifier)


def _route_of(kind: ItemKind) -> Route[Any]:
    """The route whose mapper and parser an item of ``kind`` goes through (a decision goes as
    its structured-output chat)."""
    return EMBEDDINGS if kind == "embedding" else CHAT


def _chat_of(entry: Entry) -> Any:
    """The request a job sends for an entry (a decision sends its structured-output chat)."""
    _, kind, request = entry
    return request[1] if kind == "decision" else request


def _id_of(item: Any) -> str:
    value = item.get("custom_id") if isinstance(item, Mapping) else getattr(item, "custom_id", None)
    return str(value) if value else "?"


def new_tag() -> str:
    """A fresh job tag (the name a job is found by after a crash)."""
    return f"llm-core-{uuid.uuid4().hex}"


__all__ = ["BatchAPI", "BatchCapable", "Entry", "Item", "LLMError", "Result", "new_tag"]
