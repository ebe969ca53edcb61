"""Checks on what a provider returned, one function per kind of result.

Each raises :class:`ConformanceError` with a message naming the provider and the broken claim.
They are used by :class:`~llm_core.testing.conformance.ProviderConformance` and can be called on
their own (e.g. in a plugin's own tests of a recorded interaction).
"""

from __future__ import annotations

from typing import Any

from llm_core.capabilities import DecisionCapable
from llm_core.decisions import DecisionResponse, ProbabilityKind, parse_questions, validate_answers
from llm_core.errors import LLMError, ProviderError
from llm_core.media import format_of, sniff_mime
from llm_core.provider import BaseProvider
from llm_core.responses import CompletionResponse, EmbeddingResponse, ImageResponse, TokenCount, Usage
from llm_core.streaming import StreamEvent, StreamEventType, StreamMetadata, TokenType
from llm_core.testing import scenarios as sc
from llm_core.tools import ToolCall


class ConformanceError(AssertionError):
    """A provider's claim is not backed by what it does."""


def expect(condition: object, message: str) -> None:
    """Fail the check with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ConformanceError(message)


# -- checks on results (usable on their own) -------------------------------------------------


def check_completion(provider: BaseProvider, response: Any, what: str) -> None:
    """A :class:`CompletionResponse` with text, the model's name and this provider's identifier."""
    pid = provider.identifier
    expect(
        isinstance(response, CompletionResponse),
        f"{pid}: {what} returned {type(response).__name__}, not CompletionResponse",
    )
    expect(isinstance(response.content, str) and response.content.strip(), f"{pid}: {what} returned no content")
    expect(isinstance(response.model, str) and response.model.strip(), f"{pid}: {what} names no model")
    expect(response.provider == pid, f"{pid}: {what} says provider={response.provider!r}")
    expect(isinstance(response.usage, Usage), f"{pid}: {what} has no Usage")
    check_usage(provider, response.usage, what)
    expect(isinstance(response.finish_reason, str) and response.finish_reason, f"{pid}: {what} has no finish reason")


def check_usage(provider: BaseProvider, usage: Usage, what: str) -> None:
    """Token accounting (docs/plugin-authors.md): no negative count; ``completion_tokens``
    excludes the thinking tokens, so prompt + completion + thinking is at most the total (a
    service may bill more, e.g. tool-use prompts); cached tokens are part of ``prompt_tokens``."""
    pid = provider.identifier
    thinking, cached = usage.thinking_tokens or 0, usage.cached_tokens or 0
    counts = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "thinking_tokens": thinking,
        "cached_tokens": cached,
    }
    negative = [f"{name}={value}" for name, value in counts.items() if value < 0]
    expect(not negative, f"{pid}: {what} reports negative token counts: {', '.join(negative)}")
    counted = usage.prompt_tokens + usage.completion_tokens + thinking
    expect(
        counted <= usage.total_tokens,
        f"{pid}: {what} counts {usage.prompt_tokens} prompt + {usage.completion_tokens} completion + {thinking} "
        f"thinking = {counted} tokens, more than its total of {usage.total_tokens}: completion_tokens must "
        "exclude the thinking tokens (a service that counts reasoning in its output tokens needs them "
        "subtracted)",
    )
    expect(
        cached <= usage.prompt_tokens,
        f"{pid}: {what} reports {cached} cached tokens but only {usage.prompt_tokens} prompt tokens: cached "
        "tokens are part of prompt_tokens (add them when the service reports them apart)",
    )


def check_error(provider: BaseProvider, error: BaseException, expected: type[LLMError] = ProviderError) -> None:
    """Inside the taxonomy, of the ``expected`` class, naming the provider, hiding the key."""
    pid = provider.identifier
    expect(
        isinstance(error, LLMError),
        f"{pid} let {type(error).__module__}.{type(error).__qualname__} escape: map SDK errors into the "
        "LLMError taxonomy (map_error)",
    )
    assert isinstance(error, LLMError)
    expect(
        isinstance(error, expected),
        f"{pid} raised {type(error).__name__} ({error}), expected {expected.__name__} "
        "(set expected_error if the recorded failure is of another kind)",
    )
    expect(error.provider == pid, f"{pid}: the error names provider {error.provider!r}")
    if provider.api_key is not None:
        expect(provider.api_key.reveal() not in str(error), f"{pid}: the API key shows in the error message")


def check_stream(provider: BaseProvider, events: list[StreamEvent]) -> None:
    """``TOKEN*`` then exactly one ``METADATA``, then ``END`` (once, last); some response text."""
    pid = provider.identifier
    types = [e.type for e in events]
    expect(types and types[-1] is StreamEventType.END, f"{pid}: the stream must end with END, got {types_text(types)}")
    expect(types.count(StreamEventType.END) == 1, f"{pid}: END must come once, got {types_text(types)}")
    errors = [e.error for e in events if e.type is StreamEventType.ERROR]
    expect(not errors, f"{pid}: the stream failed: {errors[0] if errors else ''}")
    expect(
        types.count(StreamEventType.METADATA) == 1 and types[-2] is StreamEventType.METADATA,
        f"{pid}: exactly one METADATA must come right before END, got {types_text(types)}",
    )
    expect(
        all(t is StreamEventType.TOKEN for t in types[:-2]),
        f"{pid}: only TOKEN events may come before METADATA, got {types_text(types)}",
    )
    for event in events[:-2]:
        expect(
            isinstance(event.text, str) and isinstance(event.token_type, TokenType),
            f"{pid}: a TOKEN needs text and a token type, got {short(event)}",
        )
    expect(
        any(e.text for e in events if e.type is StreamEventType.TOKEN and not e.is_thinking),
        f"{pid}: the stream carried no response text",
    )
    meta = events[-2].metadata
    expect(isinstance(meta, StreamMetadata), f"{pid}: METADATA carries no StreamMetadata")
    assert meta is not None
    expect(meta.provider == pid, f"{pid}: stream metadata says provider={meta.provider!r}")
    check_usage(provider, meta.usage, "the stream's METADATA")


def check_stream_thinking(provider: BaseProvider, events: list[StreamEvent]) -> None:
    """A stream asked for thinking carries thinking tokens (``…_THINKING``) besides the answer."""
    expect(
        any(e.text for e in events if e.type is StreamEventType.TOKEN and e.is_thinking),
        f"{provider.identifier} claims thinking, but a stream with thinking=True carried no thinking token "
        "(TokenType ..._THINKING)",
    )


def check_stream_failure(
    provider: BaseProvider, events: list[StreamEvent], expected: type[LLMError] = ProviderError
) -> None:
    """``TOKEN*`` then ``ERROR`` (an error of the taxonomy) then ``END``; no METADATA."""
    pid = provider.identifier
    types = [e.type for e in events]
    expect(
        len(types) >= 2 and types[-2:] == [StreamEventType.ERROR, StreamEventType.END],
        f"{pid}: a failing stream must end with ERROR then END, got {types_text(types)}",
    )
    expect(
        all(t is StreamEventType.TOKEN for t in types[:-2]),
        f"{pid}: only TOKEN events may come before ERROR in a failing stream, got {types_text(types)}",
    )
    error = events[-2].error
    expect(error is not None, f"{pid}: the ERROR event carries no error")
    assert error is not None
    check_error(provider, error, expected)


def check_tool_call(provider: BaseProvider, response: Any) -> None:
    """The model asked for ``get_weather`` with an id, the name and a ``city`` argument."""
    pid = provider.identifier
    expect(isinstance(response, CompletionResponse), f"{pid}: chat_completion_with_tools returned {short(response)}")
    expect(
        response.tool_calls,
        f"{pid} claims tools, but the tools scenario returned no tool call (finish_reason "
        f"{response.finish_reason!r}, content {response.content[:80]!r})",
    )
    for call in response.tool_calls:
        expect(isinstance(call, ToolCall), f"{pid}: tool_calls must hold ToolCall objects, got {short(call)}")
        expect(call.id and call.name == sc.WEATHER_TOOL.name, f"{pid}: unexpected tool call {short(call)}")
        expect(
            isinstance(call.arguments, dict) and isinstance(call.arguments.get("city"), str),
            f"{pid}: the tool call's arguments must be a mapping with the required 'city', got {call.arguments!r}",
        )
    expect(
        response.finish_reason == "tool_calls",
        f"{pid}: a response that calls tools must have finish_reason 'tool_calls', got {response.finish_reason!r}",
    )


def check_tool_answer(provider: BaseProvider, response: Any) -> None:
    """The request carrying the tool result was accepted and answered."""
    pid = provider.identifier
    expect(
        isinstance(response, CompletionResponse) and (response.content.strip() or response.tool_calls),
        f"{pid}: after the tool result was sent back, the model answered nothing: {short(response)}",
    )


def check_tool_loop(provider: BaseProvider, response: Any) -> None:
    """A conversation called the tool, sent its result back and got an answer from this provider."""
    pid = provider.identifier
    steps = getattr(response, "steps", None) or []
    expect(
        len(steps) >= 2 and any(c.name == "get_weather" for c in steps[0].tool_calls or ()),
        f"{pid}: the conversation's first model call asked for no get_weather call: {short(steps)}",
    )
    expect(
        isinstance(response, CompletionResponse) and bool(response.content.strip()) and not response.tool_calls,
        f"{pid}: the tool loop ended without an answer: {short(response)}",
    )
    expect(response.provider == pid, f"{pid}: the answer names provider {response.provider!r}")


def check_json(provider: BaseProvider, result: Any) -> None:
    expect(
        isinstance(result, sc.CityFacts),
        f"{provider.identifier}: generate_json(schema=CityFacts) returned {short(result)}, not a CityFacts",
    )


def check_embeddings(provider: BaseProvider, response: Any, count: int) -> None:
    """One vector of floats per input, all of the same length."""
    pid = provider.identifier
    expect(isinstance(response, EmbeddingResponse), f"{pid}: embeddings returned {short(response)}")
    vectors = response.vectors
    expect(len(vectors) == count, f"{pid}: {count} inputs gave {len(vectors)} vectors")
    expect(
        all(v and all(isinstance(x, float) for x in v) for v in vectors),
        f"{pid}: every vector must be a non-empty list of floats",
    )
    expect(len({len(v) for v in vectors}) == 1, f"{pid}: vectors differ in length")
    expect(response.provider == pid and response.model, f"{pid}: the response names {response.provider!r}")


def check_image(provider: BaseProvider, image: Any) -> None:
    """Image bytes whose content matches the stated MIME type."""
    pid = provider.identifier
    expect(isinstance(image, ImageResponse), f"{pid}: generate_image returned {short(image)}")
    expect(isinstance(image.data, bytes) and image.data, f"{pid}: the generated image has no bytes")
    expect(image.mime_type.startswith("image/"), f"{pid}: the image's MIME type is {image.mime_type!r}")
    sniffed = sniff_mime(image.data)
    expect(
        sniffed is None or format_of(sniffed) == format_of(image.mime_type),
        f"{pid}: the image bytes are {sniffed} but the response says {image.mime_type}",
    )
    expect(image.provider == pid and image.model, f"{pid}: the image names {image.provider!r}")


def check_decision(provider: BaseProvider, response: Any, model: str | None) -> None:
    """One valid answer per question, in order; probability kind matching native vs fallback."""
    pid = provider.identifier
    expect(isinstance(response, DecisionResponse), f"{pid}: decide returned {short(response)}")
    keys = [q.key for q in sc.DECISION_QUESTIONS]
    expect(list(response.answers) == keys, f"{pid}: answers {list(response.answers)} for questions {keys}")
    try:
        validate_answers(parse_questions(sc.DECISION_QUESTIONS), response.answers, provider=pid)
    except LLMError as exc:
        raise ConformanceError(f"{pid}: {exc.message}") from exc
    expect(response.provider == pid, f"{pid}: the decision names provider {response.provider!r}")
    native = isinstance(provider, DecisionCapable) and model is not None and provider.native_decisions(model)
    if native:
        expect(
            response.probability_kind is not ProbabilityKind.NONE,
            f"{pid}: a native decision API must report probabilities (kind is 'none')",
        )
    else:
        expect(
            response.probability_kind is ProbabilityKind.NONE,
            f"{pid}: decisions through structured output have probability kind 'none', got "
            f"{response.probability_kind.value!r}",
        )


# -- comparison keys --------------------------------------------------------------------------


def check_token_count(provider: BaseProvider, result: Any, model: str | None) -> None:
    """A :class:`TokenCount` of at least one token (the prompt is not empty), for the model asked
    about, naming this provider; cached tokens, when given, are part of the input."""
    pid = provider.identifier
    expect(isinstance(result, TokenCount), f"{pid}: count_tokens returned {short(result)}, not TokenCount")
    expect(result.input_tokens > 0, f"{pid}: count_tokens counted {result.input_tokens} tokens for a prompt")
    expect(result.provider == pid, f"{pid}: count_tokens says provider={result.provider!r}")
    expect(not model or result.model == model, f"{pid}: count_tokens for {model!r} says model={result.model!r}")
    expect(
        result.cached_tokens is None or 0 <= result.cached_tokens <= result.input_tokens,
        f"{pid}: count_tokens says {result.cached_tokens} of {result.input_tokens} input tokens are cached",
    )


def completion_key(response: CompletionResponse) -> dict[str, Any]:
    """What must agree between the sync and async answers to one recorded interaction."""
    return {
        "content": response.content,
        "model": response.model,
        "provider": response.provider,
        "finish_reason": response.finish_reason,
        "thinking": response.thinking,
        "tool_calls": [c.model_dump() for c in response.tool_calls or ()],
        "usage": response.usage.model_dump(),
    }


def stream_key(events: list[StreamEvent]) -> list[Any]:
    key: list[Any] = []
    for event in events:
        if event.type is StreamEventType.METADATA and event.metadata is not None:
            meta = event.metadata
            fields = ("input_tokens", "output_tokens", "thinking_tokens", "stop_reason", "model", "provider")
            key.append(("METADATA", {f: getattr(meta, f) for f in fields}))
        elif event.type is StreamEventType.ERROR:
            key.append(("ERROR", type(event.error).__name__))
        else:
            key.append((event.type.value, event.text, event.token_type))
    return key


def decision_key(response: DecisionResponse) -> dict[str, Any]:
    return {
        "answers": {k: a.model_dump() for k, a in response.answers.items()},
        "probability_kind": response.probability_kind,
        "model": response.model,
    }


# -- failure messages ----------------------------------------------------------------------


def agree(
    provider: BaseProvider, what: str, first: Any, second: Any, labels: tuple[str, str] = ("sync", "async")
) -> None:
    expect(
        first == second,
        f"{provider.identifier}: {what} differ:\n  {labels[0]}: {short(first)}\n  {labels[1]}: {short(second)}",
    )


def types_text(types: list[StreamEventType]) -> str:
    return " ".join(t.value for t in types) or "no events"


def describe(outcome: Any) -> str:
    if isinstance(outcome, BaseException):
        return f"{type(outcome).__name__}: {outcome}"
    return f"no error (returned {short(outcome)})"


def short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
