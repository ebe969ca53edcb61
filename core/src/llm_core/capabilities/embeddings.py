"""Embeddings: ``embeddings(input)`` for one string or many."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.operation import Hooks, Plan
from llm_core.provider.base import BaseProvider
from llm_core.requests import EmbeddingRequest, build, refuse_surrogates
from llm_core.responses import EmbeddingResponse, Usage


class EmbeddingCapable(BaseProvider):
    """``embeddings(input)`` for one string or many."""

    #: Most inputs the provider embeds in one request; more are sent as several requests whose
    #: vectors (and usage) are merged in order. ``None``: no limit.
    max_embedding_inputs: ClassVar[int | None] = None

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_embeddings(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_embeddings(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        raise NotImplementedError

    def default_embedding_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.EMBEDDINGS in info.features:
                return info.id
        return self.default_model()

    def build_embedding_request(
        self,
        input: str | Sequence[str],  # noqa: A002
        *,
        model: str | None = None,
        dimensions: int | None = None,
        task_type: str | None = None,
        **options: Any,
    ) -> EmbeddingRequest:
        if not isinstance(input, str | list | tuple):
            raise InvalidInputError(
                f"input must be a string or a list of strings, not {type(input).__name__}", provider=self.identifier
            )
        inputs = [input] if isinstance(input, str) else list(input)
        bad = [index for index, text in enumerate(inputs) if not isinstance(text, str) or not text.strip()]
        if not inputs or bad:
            which = f" (input[{bad[0]}] is {inputs[bad[0]]!r})" if bad else ""
            raise InvalidInputError(f"embeddings need one or more non-empty strings{which}", provider=self.identifier)
        refuse_surrogates(inputs, "input", self.identifier)
        chosen = self._model_or(model, self.default_embedding_model)
        self._require(Feature.EMBEDDINGS, chosen)
        return build(
            EmbeddingRequest,
            self.identifier,
            inputs=inputs,
            model=chosen,
            dimensions=dimensions,
            task_type=task_type,
            options=options,
        )

    def embedding_plan(self, request: EmbeddingRequest, hooks: Hooks) -> Plan:
        """Inputs beyond :attr:`max_embedding_inputs` go as several requests, merged in order."""
        return Plan(hooks, self.embedding_batches(request), combine=self.merge_embeddings)

    def embedding_batches(self, request: EmbeddingRequest) -> list[EmbeddingRequest]:
        """``request`` split into requests of at most :attr:`max_embedding_inputs` inputs, in order."""
        size = self.max_embedding_inputs
        if size is None or len(request.inputs) <= size:
            return [request]
        chunks = [request.inputs[start : start + size] for start in range(0, len(request.inputs), size)]
        return [request.model_copy(update={"inputs": chunk}) for chunk in chunks]

    def merge_embeddings(self, parts: Sequence[EmbeddingResponse]) -> EmbeddingResponse:
        """One response from the responses of :meth:`embedding_batches`: vectors in input order,
        token counts added up."""
        if len(parts) == 1:
            return parts[0]
        usage = Usage(
            prompt_tokens=sum(p.usage.prompt_tokens for p in parts),
            completion_tokens=sum(p.usage.completion_tokens for p in parts),
            total_tokens=sum(p.usage.total_tokens for p in parts),
        )
        return parts[0].model_copy(
            update={
                "vectors": [vector for part in parts for vector in part.vectors],
                "usage": usage,
                "metadata": {**parts[0].metadata, "requests": len(parts)},
            }
        )
