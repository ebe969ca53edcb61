"""Providers for testing applications that use llm-core, like pydantic-ai's ``TestModel`` and
``FunctionModel``.

:class:`TestProvider` answers every capability with valid output derived from the request:
JSON that the requested schema accepts, calls of every offered tool with arguments that match its
schema (then a text answer once tool results are in), valid decision answers, and embeddings of
the requested dimension. :class:`FunctionProvider` answers chat calls from a function of yours.
Both build on :class:`~llm_core.testing.fake.FakeProvider`: every request is recorded in
``requests``, nothing touches the network, sync and async behave alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from llm_core.messages import ChatMessage, Role
from llm_core.requests import ChatRequest, EmbeddingRequest
from llm_core.responses import EmbeddingResponse, Usage
from llm_core.testing.fake import FakeProvider, FakeReply, fake_spec
from llm_core.testing.schema_values import value_for
from llm_core.tools import ToolCall, ToolSpec


@dataclass(frozen=True)
class CallInfo:
    """What a :class:`FunctionProvider` function sees besides the messages."""

    model: str
    tools: list[ToolSpec] = field(default_factory=list)
    response_schema: dict[str, Any] | None = None
    thinking: bool = False
    options: dict[str, Any] = field(default_factory=dict)


def _json_schema(schema: Any) -> dict[str, Any] | None:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return schema if isinstance(schema, dict) else None


def _vector(text: str, dimensions: int) -> list[float]:
    """A deterministic unit-free vector in [0, 1) for ``text`` (the same in every process)."""
    out: list[float] = []
    counter = 0
    while len(out) < dimensions:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        out.extend(b / 256 for b in digest)
        counter += 1
    return out[:dimensions]


class _DerivedProvider(FakeProvider):
    """A fake whose chat replies are computed from each request (scripted replies still win)."""

    def reply_for(self, request: ChatRequest) -> FakeReply:
        raise NotImplementedError

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        payload = super().map_chat_request(request)
        payload["derived"] = self.reply_for(request)
        return payload

    def _next(self, operation: str, payload: dict[str, Any]) -> FakeReply:
        derived = payload.pop("derived", None)
        if derived is None or self._replies:
            return super()._next(operation, payload)
        with self._lock:
            self.requests.append({"operation": operation, **payload})
        return derived  # type: ignore[no-any-return]


class TestProvider(_DerivedProvider):
    """Valid answers for every capability, derived from the request; see the module docstring.

    ``text`` is the plain answer, ``call_tools`` chooses which offered tools it calls (``"all"``,
    a list of names, or ``[]`` for none), ``embedding_dimensions`` the vector size when a call
    does not ask for one.
    """

    __test__ = False  # not a pytest test class
    spec = fake_spec("test")

    def __init__(
        self,
        *,
        text: str = "success (no tool calls)",
        call_tools: Sequence[str] | str = "all",
        embedding_dimensions: int = 8,
        **config: Any,
    ) -> None:
        super().__init__(**config)
        self.text = text
        self.call_tools = call_tools
        self.embedding_dimensions = embedding_dimensions

    def reply_for(self, request: ChatRequest) -> FakeReply:
        schema = _json_schema(request.response_schema) if request.json_mode else None
        if request.json_mode:
            return FakeReply(content=json.dumps(value_for(schema) if schema else {"response": self.text}))
        tools = [t for t in request.tools or () if self.call_tools == "all" or t.name in self.call_tools]
        answered = any(m.role is Role.TOOL for m in request.messages)
        if tools and request.tool_choice != "none" and not answered:
            calls = [
                ToolCall(id=f"call_{i}", name=t.name, arguments=value_for(t.parameters) or {})
                for i, t in enumerate(tools)
            ]
            return FakeReply(tool_calls=calls)
        if answered:
            results = {m.name or m.tool_call_id or "tool": m.text for m in request.messages if m.role is Role.TOOL}
            return FakeReply(content=json.dumps(results))
        thinking = "thinking about it" if request.thinking is not None else None
        return FakeReply(content=self.text, thinking=thinking)

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        dimensions = request.dimensions or self.embedding_dimensions
        return EmbeddingResponse(
            vectors=[_vector(text, dimensions) for text in request.inputs],
            model=request.model,
            provider=self.identifier,
            usage=Usage(prompt_tokens=sum(len(t.split()) for t in request.inputs)),
        )


Answer = str | FakeReply | list[ToolCall]


class FunctionProvider(_DerivedProvider):
    """Chat answers from ``function(messages, info)``: it gets the request's messages and a
    :class:`CallInfo` (model, tools, schema, options) and returns the text, a list of
    :class:`~llm_core.tools.ToolCall`, or a :class:`~llm_core.testing.FakeReply` (streams split
    the text into words). Other capabilities keep :class:`FakeProvider`'s answers."""

    __test__ = False
    spec = fake_spec("function")

    def __init__(self, function: Callable[[list[ChatMessage], CallInfo], Answer], **config: Any) -> None:
        super().__init__(**config)
        self.function = function

    def reply_for(self, request: ChatRequest) -> FakeReply:
        info = CallInfo(
            model=request.model,
            tools=list(request.tools or ()),
            response_schema=_json_schema(request.response_schema),
            thinking=request.thinking is not None,
            options=dict(request.options),
        )
        answer = self.function(list(request.messages), info)
        if isinstance(answer, FakeReply):
            return answer
        if isinstance(answer, list):
            return FakeReply(tool_calls=answer)
        return FakeReply(content=answer)
