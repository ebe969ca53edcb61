"""A scriptable provider with every operation, for application tests.

>>> fake = FakeProvider(replies=[FakeReply(content="hi", thinking="hmm")])
>>> fake.chat_completion("hello").content
'hi'
>>> fake.requests[0]["operation"]
'chat'

Replies are consumed in order (thread-safe); with none left, ``default_reply`` answers, or chat
echoes the last user text. A tool loop is scripted as a list of replies, e.g.
``[FakeReply.calling(("get_weather", {"city": "Paris"})), FakeReply(content="Sunny.")]`` for
``fake.conversation(tools=[get_weather]).send(...)``; a reply's ``metadata`` plays the replay
data a real provider would attach (also in a stream's METADATA).
Every request the fake received is recorded in ``requests`` (the mapped payload).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_core.decisions import DecisionAnswer, DecisionResponse, ProbabilityKind
from llm_core.errors import LLMError
from llm_core.features import Feature
from llm_core.operations import DECLARED_ONLY
from llm_core.provider import BaseProvider
from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, TokenCount, Usage
from llm_core.specs import ModelInfo, ProviderSpec
from llm_core.streaming import StreamEvent, StreamMetadata, TokenType
from llm_core.tools import ToolCall

_CALL_IDS = itertools.count(1)
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@dataclass
class FakeReply:
    """One scripted answer. ``error`` is raised instead (on send), ``stream_error_after``
    cuts a stream after that many chunks with that error."""

    content: str = ""
    thinking: str | None = None
    tool_calls: list[ToolCall] | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    chunks: list[tuple[str, bool]] | None = None  # (text, is_thought); default: split content
    error: LLMError | None = None
    stream_error: LLMError | None = None
    stream_error_after: int = 0
    vectors: list[list[float]] | None = None
    image: tuple[bytes, str] | None = None
    answers: dict[str, DecisionAnswer] | None = None
    delay: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    response_id: str | None = None

    @classmethod
    def calling(cls, *calls: ToolCall | tuple[str, dict[str, Any]], **fields: Any) -> FakeReply:
        """A reply in which the model calls tools (a step of a scripted tool loop): each call a
        ``ToolCall`` or ``(name, arguments)``, whose id is then ``call_<n>`` (n counts from 1
        over every reply built so)."""
        built = [
            call
            if isinstance(call, ToolCall)
            else ToolCall(id=f"call_{next(_CALL_IDS)}", name=call[0], arguments=call[1])
            for call in calls
        ]
        return cls(tool_calls=built, **fields)


def fake_spec(
    identifier: str = "fake",
    *,
    features: Iterable[Feature | str] | None = None,
    models: Sequence[ModelInfo] | None = None,
    requires_credentials: bool = False,
    credential_env: Sequence[str] = (),
) -> ProviderSpec:
    """A spec for :class:`FakeProvider` (register it with ``registry.register``); by default it
    claims every feature the fake implements (:data:`ALL_FEATURES`)."""
    feats = ALL_FEATURES if features is None else frozenset(Feature.parse(f) for f in features)
    return ProviderSpec(
        identifier=identifier,
        name=f"Fake ({identifier})",
        features=feats,
        factory="llm_core.testing.fake:FakeProvider",
        models=models
        if models is not None
        else [
            ModelInfo("fake-model", feats, extra={"native_decisions": True}),
            ModelInfo("fake-fallback", feats),
        ],
        default_model=(models[0].id if models else "fake-model"),
        credential_env=credential_env,
        requires_credentials=requires_credentials,
    )


class FakeProvider(BaseProvider):
    """Scriptable provider: every operation, no network, records what it was asked."""

    def __init__(
        self, *, replies: Iterable[FakeReply] = (), default_reply: FakeReply | None = None, **config: Any
    ) -> None:
        super().__init__(**config)
        self._replies: deque[FakeReply] = deque(replies)
        self._default_reply = default_reply
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def script(self, *replies: FakeReply) -> FakeProvider:
        """Queue more replies."""
        with self._lock:
            self._replies.extend(replies)
        return self

    def _next(self, operation: str, payload: dict[str, Any]) -> FakeReply:
        with self._lock:
            self.requests.append({"operation": operation, **payload})
            reply = self._replies.popleft() if self._replies else None
        if reply is None:
            reply = self._default_reply or FakeReply(content=f"echo: {payload.get('last_user', '')}")
        if reply.error is not None:
            raise reply.error
        return reply

    # -- chat --------------------------------------------------------------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        users = [m.text for m in request.messages if m.role.value == "user"]
        return {
            "model": request.model,
            "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in request.messages],
            "tools": [t.name for t in request.tools or ()],
            "tool_choice": request.tool_choice,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "json_mode": request.json_mode,
            "thinking": request.thinking is not None,
            "call_context": request.call_context.value if request.call_context else None,
            "last_user": users[-1] if users else "",
        }

    def _send_chat(self, payload: dict[str, Any]) -> FakeReply:
        return self._sleep(self._next("chat", payload))

    async def _asend_chat(self, payload: dict[str, Any]) -> FakeReply:
        reply = self._next("chat", payload)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        return reply

    @staticmethod
    def _sleep(reply: FakeReply) -> FakeReply:
        if reply.delay:
            import time

            time.sleep(reply.delay)
        return reply

    def parse_chat_response(self, raw: FakeReply, request: ChatRequest) -> CompletionResponse:
        finish = raw.finish_reason or ("tool_calls" if raw.tool_calls else "stop")
        usage = raw.usage or Usage(prompt_tokens=len(request.messages), completion_tokens=len(raw.content.split()))
        return CompletionResponse(
            content=raw.content,
            model=request.model,
            provider=self.identifier,
            usage=usage,
            finish_reason=finish,
            tool_calls=raw.tool_calls,
            thinking=raw.thinking,
            metadata=dict(raw.metadata),
            response_id=raw.response_id,
        )

    def _send_list_models(self) -> list[str]:
        return [m.id for m in self.provider_spec.models]

    async def _asend_list_models(self) -> list[str]:
        return self._send_list_models()

    # -- streaming ---------------------------------------------------------------------

    def _chunks(self, reply: FakeReply) -> list[tuple[str, bool]]:
        if reply.chunks is not None:
            return reply.chunks
        thought = [(reply.thinking, True)] if reply.thinking else []
        words = [w + " " for w in reply.content.split(" ")]
        if words:
            words[-1] = words[-1][:-1]
        return thought + [(w, False) for w in words if w]

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        reply = self._sleep(self._next("stream", payload))
        return self._iterate(reply)

    def _iterate(self, reply: FakeReply) -> Iterator[Any]:
        for index, chunk in enumerate(self._chunks(reply)):
            if reply.stream_error is not None and index == reply.stream_error_after:
                raise reply.stream_error
            yield chunk
        if reply.stream_error is not None and reply.stream_error_after >= len(self._chunks(reply)):
            raise reply.stream_error
        yield reply

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[Any]:
        reply = self._next("stream", payload)

        async def generate() -> AsyncIterator[Any]:
            for item in self._iterate(reply):
                await asyncio.sleep(0)
                yield item

        return generate()

    def new_stream_parser(self, request: ChatRequest) -> _FakeStreamParser:
        return _FakeStreamParser(request)

    # -- other capabilities --------------------------------------------------------------

    def map_count_tokens_request(self, request: ChatRequest) -> dict[str, Any]:
        return self.map_chat_request(request)

    def _send_count_tokens(self, payload: dict[str, Any]) -> Any:
        return (self._next("count_tokens", payload), payload)

    async def _asend_count_tokens(self, payload: dict[str, Any]) -> Any:
        return self._send_count_tokens(payload)

    def parse_count_tokens(self, raw: Any, request: ChatRequest) -> TokenCount:
        """The reply's ``usage.prompt_tokens`` when scripted, else one token per word sent."""
        reply, _ = raw
        counted = reply.usage.prompt_tokens if reply.usage else sum(len(m.text.split()) for m in request.messages)
        return TokenCount(input_tokens=counted, model=request.model, provider=self.identifier)

    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]:
        return {"model": request.model, "inputs": request.inputs, "dimensions": request.dimensions}

    def _send_embeddings(self, payload: dict[str, Any]) -> Any:
        return (self._next("embeddings", payload), payload)

    async def _asend_embeddings(self, payload: dict[str, Any]) -> Any:
        return self._send_embeddings(payload)

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse:
        reply, _ = raw
        dims = request.dimensions or 4
        vectors = reply.vectors or [
            [((hash(text) >> (8 * i)) % 100) / 100.0 for i in range(dims)] for text in request.inputs
        ]
        return EmbeddingResponse(
            vectors=vectors,
            model=request.model,
            provider=self.identifier,
            usage=Usage(prompt_tokens=sum(len(t.split()) for t in request.inputs)),
        )

    def map_image_request(self, request: ImageRequest) -> dict[str, Any]:
        return {
            "model": request.model,
            "prompt": request.prompt,
            "size": request.size,
            "input_images": len(request.input_images),
        }

    def _send_image(self, payload: dict[str, Any]) -> Any:
        return self._next("image", payload)

    async def _asend_image(self, payload: dict[str, Any]) -> Any:
        return self._send_image(payload)

    def parse_image_response(self, raw: FakeReply, request: ImageRequest) -> ImageResponse:
        data, mime = raw.image or (PNG_1X1, "image/png")
        return ImageResponse(data=data, mime_type=mime, model=request.model, provider=self.identifier)

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]:
        return {
            "model": request.model,
            "subject": request.subject.render(),
            "questions": [q.model_dump() for q in request.questions],
        }

    def _send_decision(self, payload: dict[str, Any]) -> Any:
        return self._next("decision", payload)

    async def _asend_decision(self, payload: dict[str, Any]) -> Any:
        return self._send_decision(payload)

    def parse_decision_response(self, raw: FakeReply, request: DecisionRequest) -> DecisionResponse:
        answers = raw.answers if raw.answers is not None else {q.key: _default_answer(q) for q in request.questions}
        return DecisionResponse(
            answers=answers, probability_kind=ProbabilityKind.CALIBRATED, model=request.model, provider=self.identifier
        )


#: Every feature the fake plays: what its class implements (no batch API: a batch provider is a
#: plugin's), derived from the methods below.
ALL_FEATURES = FakeProvider.implemented_features() - DECLARED_ONLY
FakeProvider.spec = fake_spec()


def _default_answer(question: Any) -> DecisionAnswer:
    if question.kind == "yes_no":
        return DecisionAnswer(
            key=question.key,
            kind="yes_no",
            value=0.5,
            choice="yes",
            probabilities={"yes": 0.5, "no": 0.5},
            confidence=0.5,
        )
    if question.kind == "choice":
        share = 1.0 / len(question.options)
        return DecisionAnswer(
            key=question.key,
            kind="choice",
            choice=question.options[0],
            probabilities=dict.fromkeys(question.options, share),
            confidence=share,
        )
    share = 1.0 / len(question.levels)
    return DecisionAnswer(
        key=question.key,
        kind="score",
        value=0.0,
        choice=question.levels[0],
        probabilities={str(i): share for i in range(len(question.levels))},
        confidence=share,
    )


class _FakeStreamParser:
    def __init__(self, request: ChatRequest) -> None:
        self._context = request.call_context
        self._reply: FakeReply | None = None

    def feed(self, chunk: Any) -> Sequence[StreamEvent]:
        if isinstance(chunk, FakeReply):
            self._reply = chunk
            return ()
        text, thought = chunk
        return (StreamEvent.token(text, TokenType.for_chunk(thinking=thought, context=self._context)),)

    def finish(self) -> StreamMetadata:
        reply = self._reply
        usage = reply.usage if reply and reply.usage else Usage()
        return StreamMetadata(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            thinking_tokens=usage.thinking_tokens,
            cached_tokens=usage.cached_tokens,
            response_id=reply.response_id if reply else None,
            stop_reason=(reply.finish_reason if reply and reply.finish_reason else "stop"),
            raw_usage=usage.model_dump(),
            tool_calls=reply.tool_calls if reply else None,
            extra=dict(reply.metadata) if reply else {},
        )
