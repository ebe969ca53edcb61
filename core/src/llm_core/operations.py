# mypy: disable-error-code="empty-body"
# (each declaration below is a signature with its docstring; the body never runs)
"""Every operation of the provider contract, declared once.

An operation is a public call such as ``chat_completion``. Its declaration below says
everything about it: the signature and docstring users see, the :class:`Feature` it needs, its
route (:mod:`llm_core.wire`: the request builder that validates its arguments and the plugin
methods that map, send and parse the request), whether it streams, how its answer is priced,
the name observers hear it by, and an example call the testing kit probes it with.

Everything else is read from these declarations: the provider's methods and their
``provider.aio`` twins, the router's (``router`` and ``router.aio``), the features a provider
class implements, the features a router asks for a call, the observers' feature names, the
cost rules and the testing kit's claims. A class gets the calls by inheriting
:class:`Operations` beside one of the two runners, :class:`Calls` (sync) or
:class:`AsyncCalls`; each runner implements ``_call`` and ``_stream`` once for every operation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llm_core.features import CHAT_OPTIONS, Feature
from llm_core.operation import Cost, Operation, call, stream
from llm_core.wire import CHAT, COMPLETE, DECISIONS, EMBEDDINGS, IMAGES, JSON, STREAM, TOKENS, TOOLS, VISION

if TYPE_CHECKING:
    from llm_core.decisions import DecisionResponse, DecisionSubject, Question
    from llm_core.media import ImageInput
    from llm_core.messages import MessageLike, TextPart
    from llm_core.requests import Prompt
    from llm_core.responses import (
        CompletionResponse,
        EmbeddingResponse,
        ImageResponse,
        TokenCount,
        VisionResponse,
    )
    from llm_core.streaming import StreamEvent
    from llm_core.tools import ToolSpec

# -- answers made from a response -------------------------------------------------------------


def _content(response: CompletionResponse, *args: Any, **options: Any) -> str:
    return response.content


def _vision(response: CompletionResponse, *args: Any, **options: Any) -> VisionResponse:
    from llm_core.responses import VisionResponse

    return VisionResponse(**response.model_dump())


def _decoded(response: CompletionResponse, prompt: Any, schema: Any = None, **options: Any) -> Any:
    from llm_core.responses import decode_json

    return decode_json(response, schema, response.provider)


def _image_bytes(response: ImageResponse, *args: Any, **options: Any) -> tuple[bytes, str]:
    return response.data, response.mime_type


def _text(events: Any, *args: Any, **options: Any) -> Any:
    from llm_core.streaming import async_text_only, text_only

    return async_text_only(events) if hasattr(events, "__anext__") else text_only(events)


# -- examples the testing kit probes each operation with (plain data: no import needed) -------

#: A 1x1 transparent PNG.
EXAMPLE_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
EXAMPLE_TOOL = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
EXAMPLE_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
}
EXAMPLE_QUESTIONS = [{"kind": "yes_no", "key": "is_positive", "instructions": "Is the review positive?"}]


class Operations:
    """The public calls of the provider contract, declared once for every surface."""

    @call(Feature.CHAT, route=CHAT, observed_as="chat", example=(("Hello.",), {}))
    def chat_completion(self, /, messages: Sequence[MessageLike] | str | Prompt, **options: Any) -> CompletionResponse:
        """Chat: messages (typed, plain mappings, a string or a Prompt) → response.

        Options: ``model``, ``temperature``, ``max_tokens``, ``system``, ``thinking``,
        ``call_context``, ``top_p``, ``stop``, ``tool_choice`` and provider-specific extras.
        """

    @call(
        Feature.COMPLETION,
        route=COMPLETE,
        observed_as="complete",
        example=(("Hello.",), {}),
    )
    def complete(self, /, prompt: str | Prompt, **options: Any) -> CompletionResponse:
        """Simple completion from one prompt (same options as ``chat_completion``)."""

    @complete.answering(_content)
    def generate_text(self, /, prompt: str | Prompt, **options: Any) -> str:
        """The generated text for ``prompt`` (``complete(prompt).content``)."""

    answer = generate_text

    @stream(
        Feature.STREAMING,
        route=STREAM,
        observed_as="stream",
        example=(("Hello.",), {}),
    )
    def stream_chat_completion(
        self, /, messages: Sequence[MessageLike] | str | Prompt, **options: Any
    ) -> Iterator[StreamEvent]:
        """Stream events: TOKEN* METADATA END, or TOKEN* ERROR END. Input errors raise at once."""

    @stream_chat_completion.answering(_text)
    def stream_text(self, /, prompt: str | Prompt | Sequence[MessageLike], **options: Any) -> Iterator[str]:
        """Only the response text, chunk by chunk; a stream error is raised."""

    @call(
        Feature.TOOLS,
        route=TOOLS,
        observed_as="chat_with_tools",
        example=(("What is the weather in Paris?", [EXAMPLE_TOOL]), {}),
    )
    def chat_completion_with_tools(
        self,
        /,
        messages: Sequence[MessageLike] | str,
        tools: Sequence[ToolSpec | Mapping[str, Any]],
        **options: Any,
    ) -> CompletionResponse:
        """Chat in which the model may call ``tools``; calls come back in ``tool_calls``."""

    @call(
        Feature.VISION,
        route=VISION,
        observed_as="analyze_image",
        finish=_vision,
        example=((EXAMPLE_PNG, "What is this?"), {"mime_type": "image/png"}),
    )
    def analyze_image(
        self,
        /,
        image: ImageInput | Sequence[ImageInput | TextPart],
        prompt: str = "Describe this image.",
        *,
        mime_type: str | None = None,
        **options: Any,
    ) -> VisionResponse:
        """Ask about one or more images (bytes, :class:`ImagePart`, or an http(s)/data URL)."""

    @call(
        Feature.JSON_MODE,
        route=JSON,
        observed_as="generate_json",
        finish=_decoded,
        example=(("Name a city and its country.", EXAMPLE_SCHEMA), {}),
    )
    def generate_json(self, /, prompt: str | Prompt | Sequence[MessageLike], schema: Any = None, **options: Any) -> Any:
        """Structured output: a Pydantic model class gives a validated instance of it, a
        JSON-schema dict (or none) the decoded JSON."""

    @call(
        Feature.EMBEDDINGS,
        route=EMBEDDINGS,
        observed_as="embeddings",
        cost=Cost.PROMPT,
        example=(("Hello.",), {}),
    )
    def embeddings(self, /, input: str | Sequence[str], **options: Any) -> EmbeddingResponse:  # noqa: A002
        """Vectors for one or many texts. Options: ``model``, ``dimensions``, ``task_type``."""

    @call(
        Feature.IMAGE,
        route=IMAGES,
        observed_as="generate_image",
        cost=Cost.IMAGE,
        example=(("A red square.",), {}),
    )
    def generate_image(self, /, prompt: str, **options: Any) -> ImageResponse:
        """An image for ``prompt``. Options: ``model``, ``size``, ``aspect_ratio``, ``quality``,
        ``mime_type``, ``input_images`` (to edit or combine)."""

    @generate_image.answering(_image_bytes)
    def generate_image_bytes(self, /, prompt: str, **options: Any) -> tuple[bytes, str]:
        """The first generated image as ``(bytes, mime_type)``."""

    @call(
        Feature.DECISION,
        route=DECISIONS,
        observed_as="decide",
        example=(("A review: 'Great food, friendly staff.'", EXAMPLE_QUESTIONS), {}),
    )
    def decide(
        self,
        /,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        **options: Any,
    ) -> DecisionResponse:
        """One validated answer per question: natively where the model has a decision API,
        else through structured output (``probability_kind`` "none")."""

    @call(
        Feature.TOKEN_COUNTING,
        route=TOKENS,
        observed_as="count_tokens",
        cost=Cost.FREE,
        example=(("Hello.",), {}),
    )
    def count_tokens(self, /, messages: Sequence[MessageLike] | str | Prompt, **options: Any) -> TokenCount:
        """How many input tokens ``messages`` would use with these options (``system``,
        ``tools``, ``thinking``, ...), counted by the provider; nothing is generated."""


#: Every operation, in declaration order.
OPERATIONS: tuple[Operation, ...] = tuple(
    dict.fromkeys(value for value in vars(Operations).values() if isinstance(value, Operation))
)

#: Features a call may use that are not operations of their own: parts of a chat request
#: (thinking, documents, built-in and custom tools) and the batch API (jobs, see :mod:`llm_core.batch`).
ASPECTS = frozenset({Feature.DOCUMENTS, Feature.BATCH}) | CHAT_OPTIONS
#: Features with no implementation in the core yet: a spec may declare them as they are.
DECLARED_ONLY = frozenset(Feature) - {op.feature for op in OPERATIONS} - ASPECTS


def find(operation: str | Operation) -> Operation:
    """The operation named ``operation`` (an :class:`Operation` is returned as it is)."""
    if isinstance(operation, Operation):
        return operation
    found = getattr(Operations, operation, None) if isinstance(operation, str) else None
    if not isinstance(found, Operation):
        names = ", ".join(op.name for op in OPERATIONS)
        raise ValueError(f"{operation!r} is not an operation; the operations are: {names}")
    return found
