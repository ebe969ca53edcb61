"""What a plugin implements for each family of operations, and the route each operation takes.

A *wire protocol* (:class:`ChatWire`, :class:`StreamWire`, ...) is the part of the plugin
contract for one family of operations: the pure request mapper, the SDK call in sync and async
form and the pure response parser, as methods of the plugin's provider class.

A *route* is how one operation goes through a provider, written as direct calls a reader (and
mypy) can follow: :meth:`Route.build` validates the call's arguments into a request (the
provider's :class:`~llm_core.provider.requests.RequestBuilder`), :meth:`Route.plan` says what to
send, and :meth:`Route.hooks` hands the provider's own mapper, senders and parser of that family
to the executor. Each operation of :mod:`llm_core.operations` names its route.

A provider class implements an operation when it has every method of the route's protocol
(:meth:`Route.missing`); a class that implements some methods of a family but not all is
refused when it is defined (see ``BaseProvider.__init_subclass__``), with the missing names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

from llm_core.features import Feature

if TYPE_CHECKING:
    from llm_core.decisions import DecisionResponse
    from llm_core.requests import ChatRequest, DecisionRequest, EmbeddingRequest, ImageRequest
    from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, TokenCount
    from llm_core.streaming import StreamEvent, StreamMetadata

Q = TypeVar("Q")

# -- the plugin contract, per family ----------------------------------------------------------


class StreamParser(Protocol):
    """Turns SDK stream chunks into TOKEN events, incrementally.

    ``feed`` may raise an :class:`~llm_core.errors.LLMError` (e.g. an error event in the
    stream); ``finish`` gives the metadata (usage, stop reason, tool calls) once the stream is
    exhausted.
    """

    def feed(self, chunk: Any) -> Sequence[StreamEvent]: ...

    def finish(self) -> StreamMetadata: ...


class ChatWire(Protocol):
    """Chat-shaped calls: chat, completion, tools, vision, documents, JSON."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]: ...

    def _send_chat(self, payload: dict[str, Any]) -> Any: ...

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Any]:
        """An awaitable of the SDK's answer: an ``async def``, or a plain ``def`` that returns
        the SDK's own coroutine."""
        ...

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse: ...


class StreamWire(Protocol):
    """Streamed chat. The core closes the SDK stream (``close()`` / ``aclose()``, and its
    iterator's) however the stream ends, so the SDK's stream object can be returned as it is."""

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]: ...

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]: ...

    def _asend_stream(self, payload: dict[str, Any]) -> Awaitable[AsyncIterator[Any]]: ...

    def new_stream_parser(self, request: ChatRequest) -> StreamParser: ...


class TokenCountWire(Protocol):
    """Token counting: the chat request, counted by the provider."""

    def map_count_tokens_request(self, request: ChatRequest) -> dict[str, Any]: ...

    def _send_count_tokens(self, payload: dict[str, Any]) -> Any: ...

    def _asend_count_tokens(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_count_tokens(self, raw: Any, request: ChatRequest) -> TokenCount: ...


class EmbeddingWire(Protocol):
    def map_embedding_request(self, request: EmbeddingRequest) -> dict[str, Any]: ...

    def _send_embeddings(self, payload: dict[str, Any]) -> Any: ...

    def _asend_embeddings(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_embedding_response(self, raw: Any, request: EmbeddingRequest) -> EmbeddingResponse: ...


class ImageWire(Protocol):
    def map_image_request(self, request: ImageRequest) -> dict[str, Any]: ...

    def _send_image(self, payload: dict[str, Any]) -> Any: ...

    def _asend_image(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_image_response(self, raw: Any, request: ImageRequest) -> ImageResponse: ...


class DecisionWire(Protocol):
    """A native decision API (models without one are answered through structured output)."""

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]: ...

    def _send_decision(self, payload: dict[str, Any]) -> Any: ...

    def _asend_decision(self, payload: dict[str, Any]) -> Awaitable[Any]: ...

    def parse_decision_response(self, raw: Any, request: DecisionRequest) -> DecisionResponse: ...


class ModelsWire(Protocol):
    """The live model list (``available_models``, ``test_connection``)."""

    def _send_list_models(self) -> list[str]: ...

    def _asend_list_models(self) -> Awaitable[list[str]]: ...


@cache
def members(protocol: type) -> tuple[str, ...]:
    """The method names of a wire protocol, in declaration order."""
    return tuple(name for name, value in vars(protocol).items() if callable(value) and not name.startswith("__"))


def lacking(cls: type, protocol: type) -> list[str]:
    """The methods of ``protocol`` that ``cls`` lacks (none: it implements the protocol)."""
    return [name for name in members(protocol) if not callable(getattr(cls, name, None))]


#: Every family's protocol.
WIRES: tuple[type, ...] = (ChatWire, StreamWire, TokenCountWire, EmbeddingWire, ImageWire, DecisionWire, ModelsWire)


# -- what one call sends ------------------------------------------------------------------------


class Hooks(NamedTuple):
    """One provider's mapper, senders and parser of a family, bound to it. For a stream,
    ``send`` / ``asend`` open the SDK stream and ``parse`` makes its :class:`StreamParser`."""

    map: Callable[[Any], dict[str, Any]]
    send: Callable[[dict[str, Any]], Any]
    asend: Callable[[dict[str, Any]], Awaitable[Any]]
    parse: Callable[..., Any]


@dataclass(frozen=True)
class Plan:
    """What one call sends: each request through ``hooks`` (in order), their answers combined
    into the operation's response (``None``: the one answer is the response). ``revise`` may
    change a request the provider refused, once."""

    hooks: Hooks
    requests: Sequence[Any]
    combine: Callable[[list[Any]], Any] | None = None
    revise: Callable[[Any, Any], Any] | None = None


# -- routes -------------------------------------------------------------------------------------


class Route(Generic[Q]):
    """How an operation goes through a provider ``p``: ``build`` → ``plan`` → the ``hooks`` of
    its family. ``fixed`` are keywords the builder is always given (the feature a chat-shaped
    call needs)."""

    #: The protocol a provider class implements to serve the route.
    wire: ClassVar[type]

    def __init__(self, **fixed: Any) -> None:
        self.fixed: Mapping[str, Any] = fixed

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> Q:
        raise NotImplementedError

    def hooks(self, p: Any) -> Hooks:
        raise NotImplementedError

    def plan(self, p: Any, request: Q) -> Plan:
        """One request through the family's hooks (routes that split or revise say otherwise)."""
        return Plan(self.hooks(p), (request,))

    def missing(self, cls: type) -> list[str]:
        """The methods of :attr:`wire` that ``cls`` lacks (none: it implements the route)."""
        return lacking(cls, self.wire)


class ChatRoute(Route["ChatRequest"]):
    """``builder.chat`` → ``map_chat_request`` → ``_send_chat`` / ``_asend_chat`` → ``parse_chat_response``."""

    wire: ClassVar[type] = ChatWire

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ChatRequest:
        request: ChatRequest = p.builder.chat(*args, **self.fixed, **options)
        return request

    def hooks(self, p: ChatWire) -> Hooks:
        return Hooks(p.map_chat_request, p._send_chat, p._asend_chat, p.parse_chat_response)


class ToolRoute(ChatRoute):
    """A chat with tools: ``builder.tools`` checks the tools, then as :class:`ChatRoute`."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ChatRequest:
        request: ChatRequest = p.builder.tools(*args, **options)
        return request


class VisionRoute(ChatRoute):
    """Images and a question: ``builder.vision`` makes the chat, then as :class:`ChatRoute`."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ChatRequest:
        request: ChatRequest = p.builder.vision(*args, **options)
        return request


class JsonRoute(ChatRoute):
    """Structured output: ``builder.json`` checks the schema, then as :class:`ChatRoute`."""

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ChatRequest:
        request: ChatRequest = p.builder.json(*args, **options)
        return request


class StreamRoute(ChatRoute):
    """``builder.chat`` → ``map_chat_request`` → ``_send_stream`` / ``_asend_stream``, read by
    ``new_stream_parser``."""

    wire = StreamWire

    def hooks(self, p: StreamWire) -> Hooks:  # type: ignore[override]
        return Hooks(p.map_chat_request, p._send_stream, p._asend_stream, p.new_stream_parser)


class TokenCountRoute(ChatRoute):
    """The chat request, counted: ``map_count_tokens_request`` → ``_send_count_tokens`` → ``parse_count_tokens``."""

    wire = TokenCountWire

    def hooks(self, p: TokenCountWire) -> Hooks:  # type: ignore[override]
        return Hooks(p.map_count_tokens_request, p._send_count_tokens, p._asend_count_tokens, p.parse_count_tokens)


class EmbeddingRoute(Route["EmbeddingRequest"]):
    """``builder.embeddings``, split into requests of at most ``max_embedding_inputs`` inputs
    whose answers are merged in order."""

    wire = EmbeddingWire

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> EmbeddingRequest:
        request: EmbeddingRequest = p.builder.embeddings(*args, **options)
        return request

    def hooks(self, p: EmbeddingWire) -> Hooks:
        return Hooks(p.map_embedding_request, p._send_embeddings, p._asend_embeddings, p.parse_embedding_response)

    def plan(self, p: Any, request: EmbeddingRequest) -> Plan:
        batches = p.builder.embedding_batches(request)
        return Plan(self.hooks(p), batches, combine=p.builder.merge_embeddings)


class ImageRoute(Route["ImageRequest"]):
    """``builder.image``; a request the provider refuses is changed once by the provider's
    ``retry_image_request`` (when it says how)."""

    wire = ImageWire

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> ImageRequest:
        request: ImageRequest = p.builder.image(*args, **options)
        return request

    def hooks(self, p: ImageWire) -> Hooks:
        return Hooks(p.map_image_request, p._send_image, p._asend_image, p.parse_image_response)

    def plan(self, p: Any, request: ImageRequest) -> Plan:
        return Plan(self.hooks(p), (request,), revise=p.retry_image_request)


class DecisionRoute(Route["DecisionRequest"]):
    """``builder.decision``, then the native decision API where the model has one (answers
    checked against the questions), else one structured-output chat whose JSON becomes the
    answers. A provider with structured output and no native API implements it too."""

    wire = DecisionWire

    def build(self, p: Any, args: tuple[Any, ...], options: Mapping[str, Any]) -> DecisionRequest:
        request: DecisionRequest = p.builder.decision(*args, **options)
        return request

    def hooks(self, p: DecisionWire) -> Hooks:
        return Hooks(p.map_decision_request, p._send_decision, p._asend_decision, p.parse_decision_response)

    def plan(self, p: Any, request: DecisionRequest) -> Plan:
        if p.native_decisions(request.model):
            native = self.hooks(p)
            checked = p.builder.checked_decision(native.parse)
            return Plan(native._replace(parse=checked), (request,))
        chat = p.builder.decision_fallback(request)
        answered = p.builder.decision_from_json
        return Plan(CHAT.hooks(p), (chat,), combine=lambda answers: answered(answers[0], request))

    def missing(self, cls: type) -> list[str]:
        native = super().missing(cls)
        return native if native and JSON.missing(cls) else []


#: The routes of the operations (``llm_core.operations`` names one per operation).
CHAT = ChatRoute()
COMPLETE = ChatRoute(feature=Feature.COMPLETION)
STREAM = StreamRoute(feature=Feature.STREAMING)
TOKENS = TokenCountRoute(feature=Feature.TOKEN_COUNTING)
TOOLS = ToolRoute()
VISION = VisionRoute()
JSON = JsonRoute()
EMBEDDINGS = EmbeddingRoute()
IMAGES = ImageRoute()
DECISIONS = DecisionRoute()
