"""One item as the single call it stands for, on a provider or a router (local mode and workers),
and a result as one JSONL output line."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from llm_core.batch.types import ChatItem, DecisionItem, EmbeddingItem, JsonItem, JsonResponse
from llm_core.errors import LLMError, ProviderError

Item = ChatItem | JsonItem | EmbeddingItem | DecisionItem


def call_item(target: Any, item: Item) -> Any:
    """Run ``item`` through ``target``'s public call (a provider or a :class:`Router`); an
    :class:`LLMError` is the item's result, anything else is a bug and raises."""
    options = dict(item.options)
    try:
        if isinstance(item, ChatItem):
            return target.chat_completion(item.messages, **options)
        if isinstance(item, JsonItem):
            return JsonResponse(data=target.generate_json(item.prompt, item.json_schema, **options))
        if isinstance(item, EmbeddingItem):
            return target.embeddings(item.input, **options)
        return target.decide(item.subject, item.questions, **options)
    except LLMError as exc:
        return exc


async def acall_item(target: Any, item: Item) -> Any:
    """The async twin of :func:`call_item` (``target.aio``)."""
    aio = target.aio
    options = dict(item.options)
    try:
        if isinstance(item, ChatItem):
            return await aio.chat_completion(item.messages, **options)
        if isinstance(item, JsonItem):
            return JsonResponse(data=await aio.generate_json(item.prompt, item.json_schema, **options))
        if isinstance(item, EmbeddingItem):
            return await aio.embeddings(item.input, **options)
        return await aio.decide(item.subject, item.questions, **options)
    except LLMError as exc:
        return exc


def result_line(custom_id: str, kind: str, result: Any) -> dict[str, Any]:
    """The output line of one result: ``ok`` with the response (as JSON), or the typed error."""
    if isinstance(result, LLMError):
        return {"custom_id": custom_id, "kind": kind, "ok": False, "error": error_fields(result)}
    response = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    return {"custom_id": custom_id, "kind": kind, "ok": True, "response": response}


def error_fields(error: LLMError) -> dict[str, Any]:
    """An error as data: its class (the taxonomy name), message, provider, HTTP status, retryable."""
    return {
        "type": type(error).__name__,
        "message": error.message,
        "provider": error.provider,
        "status_code": error.status_code if isinstance(error, ProviderError) else None,
        "retryable": error.retryable,
    }


def usage_tokens(result: Any) -> int:
    """Total tokens a result reports (0 for errors and results without usage)."""
    usage = getattr(result, "usage", None)
    return int(getattr(usage, "total_tokens", 0) or 0)
