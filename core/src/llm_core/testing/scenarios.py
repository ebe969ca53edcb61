"""The fixed inputs of the conformance checks, one scenario (and one cassette) per behaviour.

Every value here ends up in a request body, and recorded cassettes match on request bodies: the
inputs are frozen. Changing one means re-recording every plugin's conformance cassettes.

:func:`run_scenario` performs a scenario's calls exactly as the checks do; cassette authoring
scripts use it to capture the requests a provider sends for each scenario.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from llm_core.decisions import ChoiceQuestion, DecisionSubject, Question, ScoreQuestion, YesNoQuestion
from llm_core.errors import LLMError
from llm_core.features import Feature
from llm_core.messages import ChatMessage, DocumentPart, TextPart
from llm_core.provider import BaseProvider
from llm_core.responses import CompletionResponse
from llm_core.tools import ToolSpec


@dataclass(frozen=True)
class Scenario:
    """One behaviour the kit checks. ``feature``: the claim that makes it run (``None``: every
    provider; its model serves the scenario), ``also``: further claims it needs; ``cassette``:
    whether it needs recorded traffic (``<name>.json``)."""

    name: str
    feature: Feature | None
    description: str
    cassette: bool = True
    also: tuple[Feature, ...] = ()

    def claimed_by(self, provider: BaseProvider) -> Feature | None:
        """The first feature the scenario needs that ``provider`` does not claim (``None``: all are)."""
        needed = ((self.feature,) if self.feature is not None else ()) + self.also
        return next((feature for feature in needed if not provider.supports_feature(feature)), None)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("static", None, "claims, catalogue, hooks and secrets (nothing is sent)", cassette=False),
        Scenario("invalid_input", None, "invalid input raises InvalidInputError, nothing is sent", cassette=False),
        Scenario("unsupported", None, "features a model lacks raise UnsupportedFeatureError, nothing sent", False),
        Scenario("parameters", None, "temperature, max_tokens, tool_choice mapped or refused, nothing sent", False),
        Scenario("models", None, "available_models and test_connection"),
        Scenario("chat", Feature.CHAT, "chat_completion / complete / generate_text"),
        Scenario("error", None, "a failed call raises an error of the LLMError taxonomy"),
        Scenario("stream", Feature.STREAMING, "a stream: TOKEN* METADATA END"),
        Scenario("stream_error", Feature.STREAMING, "a failing stream: TOKEN* ERROR END"),
        Scenario("tools", Feature.TOOLS, "a tool call, then its result sent back"),
        Scenario("tool_loop", Feature.TOOLS, "a conversation runs the Python function the model calls, then answers"),
        Scenario("json", Feature.JSON_MODE, "generate_json validated into a Pydantic model"),
        Scenario("vision", Feature.VISION, "analyze_image on a small PNG"),
        Scenario("documents", Feature.DOCUMENTS, "a chat with a small inline PDF"),
        Scenario("thinking", Feature.THINKING, "a chat with thinking=True returns thinking"),
        Scenario(
            "stream_thinking",
            Feature.THINKING,
            "a stream with thinking=True carries thinking tokens and the answer",
            also=(Feature.STREAMING,),
        ),
        Scenario(
            "thinking_tools",
            Feature.THINKING,
            "thinking=True with a tool call, then its result sent back with the answer's metadata",
            also=(Feature.TOOLS,),
        ),
        Scenario("embeddings", Feature.EMBEDDINGS, "vectors for two texts"),
        Scenario("image", Feature.IMAGE, "generate_image returns image bytes of the stated type"),
        Scenario("decision", Feature.DECISION, "decide: one valid answer per question"),
        Scenario("count_tokens", Feature.TOKEN_COUNTING, "count_tokens: the input tokens of a prompt"),
    )
}

# -- inputs (frozen: they are part of every recorded request) -------------------------------

CHAT_PROMPT = "Greet the reader in one short, friendly sentence."
ERROR_PROMPT = "Say hello. (This request is recorded failing, e.g. with an invalid API key.)"
STREAM_PROMPT = "Count from one to five in words, separated by commas."
STREAM_ERROR_PROMPT = "Count from six to ten in words. (This stream is recorded failing.)"
TOOL_PROMPT = "What is the weather in Paris right now? Use the get_weather tool."
WEATHER_TOOL = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
        "required": ["city"],
    },
)
TOOL_RESULT = '{"city": "Paris", "temperature_c": 18, "condition": "sunny"}'


def get_weather(city: Annotated[str, Field(description="City name, e.g. Paris")]) -> str:
    """Current weather for a city."""
    return TOOL_RESULT


def tool_loop(api: Any, model: str | None) -> Any:
    """The ``tool_loop`` scenario: a conversation (``api.conversation``, sync or ``.aio``) with
    :func:`get_weather` as its tool, sent :data:`TOOL_PROMPT` (a response, or an awaitable)."""
    return api.conversation(tools=[get_weather], model=model).send(TOOL_PROMPT)


JSON_PROMPT = "Give the name, country and approximate population of the capital of France."
VISION_PROMPT = "What colour is this image? Answer in one word."
DOCUMENT_PROMPT = "What total does this invoice state? Answer briefly."
THINKING_PROMPT = "Is 391 a prime number? Think it through, then answer yes or no."
STREAM_THINKING_PROMPT = "How many times does the letter r appear in strawberry? Think it through first."
THINKING_TOOL_PROMPT = "Think about what is asked, then use the get_weather tool: is it warm in Paris today?"
EMBEDDING_INPUTS = ("The cat sat on the mat.", "A dog slept on the rug.")
IMAGE_PROMPT = "A small red square on a white background, flat illustration."
COUNT_PROMPT = "How many tokens does this sentence take?"


class CityFacts(BaseModel):
    """The schema of the ``json`` scenario."""

    name: str
    country: str
    population: int


#: An 8x8 red PNG (74 bytes).
PNG_IMAGE = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000080000000808020000004b6d29dc000000114944415478da63b8a0a0"
    "8015310c2d0900be4e44018507140f0000000049454e44ae426082"
)

#: A one-page PDF that reads "Invoice total: 42 EUR" (595 bytes).
PDF_DOCUMENT = (
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"
    b"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
    b"/Resources << /Font << /F1 5 0 R >> >> >>\nendobj\n"
    b"4 0 obj\n<< /Length 51 >>\nstream\nBT /F1 18 Tf 20 40 Td (Invoice total: 42 EUR) Tj ET\nendstream\nendobj\n"
    b"5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n"
    b"xref\n0 6\n0000000000 65535 f \n0000000009 00000 n \n0000000058 00000 n \n0000000115 00000 n \n"
    b"0000000241 00000 n \n0000000342 00000 n \ntrailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n412\n%%EOF\n"
)

DECISION_SUBJECT = DecisionSubject(
    task="Triage a customer support ticket.",
    candidate="Ticket: 'I was charged twice for order 1234 and would like a refund.'",
    evidence=["The payment log shows two identical charges.", "Refunds need approval by a staff member."],
)
DECISION_QUESTIONS: tuple[Question, ...] = (
    YesNoQuestion(
        key="needs_human",
        instructions="Does this ticket need a human agent?",
        yes_description="a staff member must act",
        no_description="an automated answer is enough",
    ),
    ChoiceQuestion(
        key="category",
        instructions="Which category fits the ticket best?",
        options=["billing", "shipping", "technical"],
    ),
    ScoreQuestion(key="urgency", instructions="How urgent is the ticket?", levels=["low", "medium", "high"]),
)


def document_message() -> ChatMessage:
    """The user turn of the ``documents`` scenario."""
    return ChatMessage.user(
        [
            TextPart(text=DOCUMENT_PROMPT),
            DocumentPart(data=PDF_DOCUMENT, mime_type="application/pdf", name="invoice.pdf"),
        ]
    )


def assistant_turn(response: CompletionResponse) -> ChatMessage:
    """The assistant turn that replays ``response`` (its metadata too, e.g. thought signatures)."""
    return response.to_message()


def tool_result_messages(first: CompletionResponse, prompt: str = TOOL_PROMPT) -> list[ChatMessage]:
    """The second request of the ``tools`` scenario (and of ``thinking_tools`` with its
    ``prompt``): the question, the call (with the answer's metadata), and its result."""
    turns = [ChatMessage.user(prompt), assistant_turn(first)]
    turns.extend(ChatMessage.tool(call.id, TOOL_RESULT, name=call.name) for call in first.tool_calls or ())
    return turns


def model_for(provider: BaseProvider, feature: Feature, overrides: Mapping[str, str] | None = None) -> str | None:
    """The model a check uses for ``feature``: an override, else the capability's default
    (embeddings, image, decision), else the provider's default model when it offers the feature,
    else the first catalogue model that does. ``None`` when no model offers it."""
    if overrides and feature.value in overrides:
        return overrides[feature.value]
    spec = provider.provider_spec
    candidates = []
    if feature is Feature.DECISION:
        candidates.append(provider.builder.default_decision_model())
    elif feature in (Feature.EMBEDDINGS, Feature.IMAGE):
        candidates.append(provider.builder.default_model_for(feature))
    if spec.default_model:
        candidates.append(spec.default_model)
    candidates.extend(info.id for info in spec.models)
    for model in candidates:
        if provider.supports_feature(feature, model):
            return model
    return None


def error_feature(provider: BaseProvider) -> Feature | None:
    """The operation the ``error`` scenario fails: chat, else embeddings, else image generation."""
    for feature in (Feature.CHAT, Feature.EMBEDDINGS, Feature.IMAGE):
        if provider.supports_feature(feature):
            return feature
    return None


def call(name: str, api: Any, model: str | None) -> Any:
    """The (first) call of scenario ``name`` on ``api`` (a provider, or its ``.aio`` view, whose
    results are then awaitables and async iterators). The ``error`` scenario's call depends on
    the feature :func:`error_feature` picked: pass ``name="error:<feature>"``."""
    calls: dict[str, Callable[[], Any]] = {
        "models": lambda: api.available_models(),
        "chat": lambda: api.chat_completion(CHAT_PROMPT, model=model),
        "error:chat": lambda: api.chat_completion(ERROR_PROMPT, model=model),
        "error:embeddings": lambda: api.embeddings([ERROR_PROMPT], model=model),
        "error:image": lambda: api.generate_image(ERROR_PROMPT, model=model),
        "stream": lambda: api.stream_chat_completion(STREAM_PROMPT, model=model),
        "stream_error": lambda: api.stream_chat_completion(STREAM_ERROR_PROMPT, model=model),
        "tools": lambda: api.chat_completion_with_tools(TOOL_PROMPT, [WEATHER_TOOL], model=model),
        "tool_loop": lambda: tool_loop(api, model),
        "json": lambda: api.generate_json(JSON_PROMPT, CityFacts, model=model),
        "vision": lambda: api.analyze_image(PNG_IMAGE, VISION_PROMPT, mime_type="image/png", model=model),
        "documents": lambda: api.chat_completion([document_message()], model=model),
        "thinking": lambda: api.chat_completion(THINKING_PROMPT, model=model, thinking=True),
        "stream_thinking": lambda: api.stream_chat_completion(STREAM_THINKING_PROMPT, model=model, thinking=True),
        "thinking_tools": lambda: api.chat_completion_with_tools(
            THINKING_TOOL_PROMPT, [WEATHER_TOOL], model=model, thinking=True
        ),
        "embeddings": lambda: api.embeddings(list(EMBEDDING_INPUTS), model=model),
        "image": lambda: api.generate_image(IMAGE_PROMPT, model=model),
        "decision": lambda: api.decide(DECISION_SUBJECT, list(DECISION_QUESTIONS), model=model),
        "count_tokens": lambda: api.count_tokens(COUNT_PROMPT, model=model),
    }
    if name not in calls:
        raise KeyError(f"scenario {name!r} sends nothing or does not exist; known: {', '.join(calls)}")
    return calls[name]()


def tool_result_call(api: Any, first: CompletionResponse, model: str | None) -> Any:
    """The second call of the ``tools`` scenario: the tool's result sent back."""
    return api.chat_completion_with_tools(tool_result_messages(first), [WEATHER_TOOL], model=model)


def thinking_tool_result_call(api: Any, first: CompletionResponse, model: str | None) -> Any:
    """The second call of the ``thinking_tools`` scenario: the tool's result sent back after the
    assistant turn that carries the first answer's metadata (thought signatures, reasoning items)."""
    messages = tool_result_messages(first, THINKING_TOOL_PROMPT)
    return api.chat_completion_with_tools(messages, [WEATHER_TOOL], model=model, thinking=True)


def scenario_feature(provider: BaseProvider, name: str) -> Feature | None:
    """The feature whose model serves scenario ``name``."""
    if name == "error":
        return error_feature(provider)
    return SCENARIOS[name].feature


def run_scenario(provider: BaseProvider, name: str, overrides: Mapping[str, str] | None = None) -> list[Any]:
    """Make the sync calls of scenario ``name`` exactly as the checks make them. Returns each
    call's result (a stream as its list of events; an :class:`LLMError` in place of a result).

    Cassette authoring scripts run this under a capturing transport to learn the requests.
    """
    feature = scenario_feature(provider, name)
    model = model_for(provider, feature, overrides) if feature is not None else None
    key = f"error:{feature.value}" if name == "error" and feature is not None else name
    results: list[Any] = []
    try:
        first = call(key, provider, model)
        results.append(list(first) if name in ("stream", "stream_error", "stream_thinking") else first)
        if name == "tools" and first.tool_calls:
            results.append(tool_result_call(provider, first, model))
        if name == "thinking_tools" and first.tool_calls:
            results.append(thinking_tool_result_call(provider, first, model))
    except LLMError as exc:
        results.append(exc)
    return results
