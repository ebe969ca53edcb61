"""The OpenAI cassette scenarios: each is one call of the public API (written once, run against
``provider`` or ``provider.aio``) and the replies the server gives to it.

``cassette_author.py`` runs a scenario through the real SDK to write ``cassettes/openai/NAME.json``;
the tests replay the same call, sync and async, and assert on the result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from pydantic import BaseModel

from llm_core.messages import ChatMessage
from llm_core.requests import Prompt
from llm_core.retry import RetryPolicy
from llm_core.testing.cassettes import record_mode
from llm_core.tools import ToolCall, ToolSpec
from tests.openai.openai_wire import (
    CREATED,
    JPEG,
    PDF,
    PNG,
    Answer,
    Call,
    Msg,
    Think,
    decision_body,
    embeddings_body,
    error_body,
    final_item,
    ident,
    images_body,
    models_body,
    response_body,
    stream_body,
    usage,
)

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "openai"
TEST_KEY = "test-key"

#: A reply: (decoded JSON request or None, the request) → (status, body, extra headers).
Reply = Callable[[Any, httpx2.Request], tuple[int, Any, dict[str, str]]]


@dataclass
class Scenario:
    name: str
    call: Callable[[Any], Any]
    replies: list[Reply]
    options: dict[str, Any] = field(default_factory=dict)
    #: failure cassettes cannot be re-recorded from the real API: they always replay
    authored_only: bool = False


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, *replies: Reply, authored_only: bool = False,
             **options: Any) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    def register(call: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if name in SCENARIOS:
            raise ValueError(f"duplicate scenario {name}")
        SCENARIOS[name] = Scenario(name, call, list(replies), options, authored_only)
        return call

    return register


class Sleeps(list[float]):
    """The waits the retry policy asked for (recorded, not slept)."""

    def sleep(self, seconds: float) -> None:
        self.append(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.append(seconds)


def make_provider(sleeps: Sleeps | None = None, **options: Any) -> Any:
    """The provider as the tests use it: test key (a real one only when recording), a retry
    policy that records its waits instead of sleeping."""
    from core_openai_plugin.provider import OpenAIProvider

    sleeps = sleeps if sleeps is not None else Sleeps()
    recording = record_mode() != "none"
    key = os.environ.get("OPENAI_API_KEY", TEST_KEY) if recording else TEST_KEY
    options.setdefault("api_key", key)
    policy = RetryPolicy(max_attempts=3, initial_delay=0.5, jitter=0.0, sleep=sleeps.sleep,
                         async_sleep=sleeps.async_sleep)
    return OpenAIProvider(retry=policy, **options)


# --- replies -----------------------------------------------------------------------------------


def ok(answer: Answer) -> Reply:
    """A Responses API object answering the captured request."""
    return lambda req, _: (200, response_body(req, answer), {})


def sse(answer: Answer, **kwargs: Any) -> Reply:
    """A Responses event stream answering the captured request."""
    return lambda req, _: (200, stream_body(req, answer, **kwargs), {})


def status(code: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return lambda req, _: (code, body, dict(headers or {}))


def body(payload: Any) -> Reply:
    return lambda req, _: (200, payload, {})


RATE_HEADERS = {
    "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499",
    "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "0",
    "x-ratelimit-reset-tokens": "250ms",
}


def rate_limited(retry_after: dict[str, str], model: str = "gpt-4.1") -> Reply:
    message = (f"Rate limit reached for {model} in organization org-EXAMPLE on tokens per min (TPM): "
               "Limit 30000, Used 29800, Requested 400. Please try again in 250ms. "
               "Visit https://platform.openai.com/account/rate-limits to learn more.")
    return status(429, error_body(message, kind="tokens", code="rate_limit_exceeded"), {**RATE_HEADERS, **retry_after})


SERVER_ERROR = error_body("The server had an error while processing your request. Sorry about that!",
                          kind="server_error", code=None)


# --- 1. chat and completion ----------------------------------------------------------------------

CAPITAL = [{"role": "system", "content": "Answer in one short sentence."},
           {"role": "user", "content": "What is the capital of France?"}]


@scenario("chat_basic", ok(Answer([Msg(["The capital of France is Paris."])], usage(26, 8), seed="chat_basic")))
def chat_basic(p: Any) -> Any:
    return p.chat_completion(CAPITAL, model="gpt-4.1", temperature=0.0)


@scenario("chat_prompt", ok(Answer([Msg(["Bonjour !"])], usage(21, 4), seed="chat_prompt")))
def chat_prompt(p: Any) -> Any:
    prompt = Prompt(system="You translate into French.", text="Hello!", model="gpt-4.1", temperature=0.0,
                    max_tokens=50)
    return p.chat_completion(prompt)


@scenario("complete_default", ok(Answer([Think([]), Msg(["Bonjour !"])], usage(12, 74, reasoning=64),
                                        seed="complete_default")))
def complete_default(p: Any) -> Any:
    return p.complete("Say hello in French.")


#: A long, fixed system prompt: OpenAI caches prompt prefixes of 1024 tokens and more, so the
#: second call with it reports ``input_tokens_details.cached_tokens`` (in steps of 128 tokens).
STYLE_GUIDE = "You are the support assistant of a bookshop. House rules:\n" + "".join(
    f"{n}. Rule {n}: answer politely, name the shelf of every book you mention, quote prices in euros "
    "with two decimals, and never promise a delivery date you cannot check.\n" for n in range(1, 41))


@scenario("chat_cached", ok(Answer([Think([]), Msg(["Poetry is on shelf 12."])],
                                   usage(1290, 30, reasoning=22, cached=1152), seed="chat_cached")))
def chat_cached(p: Any) -> Any:
    return p.chat_completion([{"role": "system", "content": STYLE_GUIDE},
                              {"role": "user", "content": "Where is poetry?"}], model="gpt-5.4-mini")


@scenario("stream_cached", sse(Answer([Think([]), Msg(["Maps are ", "on shelf 3."])],
                                      usage(1291, 28, reasoning=20, cached=1152), seed="stream_cached")))
def stream_cached(p: Any) -> Any:
    return p.stream_chat_completion([{"role": "system", "content": STYLE_GUIDE},
                                     {"role": "user", "content": "Where are maps?"}], model="gpt-5.4-mini")


@scenario("chat_incomplete", ok(Answer([Msg(["The sea, a restless mirror of the sky,\nIt"])], usage(15, 16),
                                       status="incomplete", incomplete_reason="max_output_tokens",
                                       seed="chat_incomplete")))
def chat_incomplete(p: Any) -> Any:
    return p.chat_completion("Write a long poem about the sea.", model="gpt-4.1", max_tokens=16)


@scenario("chat_refusal", ok(Answer([Msg(["I'm sorry, but I can't help with that."], refusal=True)], usage(24, 11),
                                    seed="chat_refusal")))
def chat_refusal(p: Any) -> Any:
    return p.chat_completion("Give me step-by-step instructions to make a nerve agent.", model="gpt-4.1")


STRAWBERRY_THOUGHTS = Think([
    ["**Counting letters**\n\n", "I spell the word: s-t-r-a-w-b-e-r-r-y. ", "The r's are at positions 3, 8 and 9."],
    ["**Answer**\n\n", "So there are three."],
])
STRAWBERRY = Answer([STRAWBERRY_THOUGHTS, Msg(['There are 3 r\'s in "strawberry".'])],
                    usage(18, 180, reasoning=128), seed="chat_reasoning")


@scenario("chat_reasoning", ok(STRAWBERRY))
def chat_reasoning(p: Any) -> Any:
    return p.chat_completion("How many r's are in 'strawberry'?", thinking={"level": "high", "summary": "detailed"})


def _replay_turn(first: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "How many r's are in 'strawberry'?"},
        {"role": "assistant", "content": first.content, "metadata": first.metadata},
        {"role": "user", "content": "And in 'raspberry'?"},
    ]


RASPBERRY = Answer([Think([["**Recount**\n\n", "r-a-s-p-b-e-r-r-y has three r's."]], seed="second"),
                    Msg(["'raspberry' has 3 r's as well."])],
                   usage(230, 90, reasoning=64), seed="chat_reasoning_replay")


@scenario("chat_reasoning_replay", ok(STRAWBERRY), ok(RASPBERRY))
def chat_reasoning_replay(p: Any) -> Any:
    """Two stateless turns: the second sends the first turn's encrypted reasoning back."""
    thinking = {"level": "high", "summary": "detailed"}
    if hasattr(p, "provider"):  # the async view
        async def turns() -> Any:
            first = await p.chat_completion("How many r's are in 'strawberry'?", thinking=thinking)
            return await p.chat_completion(_replay_turn(first), thinking=thinking)

        return turns()
    first = p.chat_completion("How many r's are in 'strawberry'?", thinking=thinking)
    return p.chat_completion(_replay_turn(first), thinking=thinking)



# --- 3. streaming -----------------------------------------------------------------------------------

WEATHER = ToolSpec(
    name="get_weather", description="Current weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"], "additionalProperties": False},
)
LOCAL_TIME = ToolSpec(
    name="get_time", description="Local time in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                "additionalProperties": False},
)
COUNT = Answer([Msg(["One", ",", " two", "", ", three", ", four", ", five", "."])], usage(14, 12), seed="stream_text")


@scenario("stream_text", sse(COUNT))
def stream_text(p: Any) -> Any:
    return p.stream_chat_completion("Count from one to five.", model="gpt-4.1")


PRIME = Answer([
    Think([["**Checking divisors**\n\n", "97 is odd; ", "not divisible by 3, 5 or 7."],
           ["**Conclusion**\n\n", "No divisor up to its square root."]], seed="prime"),
    Msg(["Yes", ", 97 is", " prime."]),
], usage(11, 150, reasoning=140), seed="stream_reasoning")


@scenario("stream_reasoning", sse(PRIME))
def stream_reasoning(p: Any) -> Any:
    return p.stream_chat_completion("Is 97 prime?", thinking={"level": "medium", "summary": "auto"},
                                    call_context="AGENT_THOUGHT")


TWO_CITIES = "What's the weather in Paris and the local time in Tokyo?"
CITY_CALLS = Answer([Call("get_weather", ['{"ci', 'ty":"Pa', 'ris"}'], "paris"),
                     Call("get_time", ['{"city":', '"Tokyo"}'], "tokyo")], usage(120, 40), seed="stream_tools")


@scenario("stream_tools", sse(CITY_CALLS))
def stream_tools(p: Any) -> Any:
    return p.stream_chat_completion(TWO_CITIES, model="gpt-4.1", tools=[WEATHER, LOCAL_TIME])


FAILED = Answer([Msg(["The first", " part"])], usage(10, 3), status="failed", seed="stream_failed",
                error={"code": "server_error", "message": "The model produced invalid content."})


@scenario("stream_failed", sse(FAILED), authored_only=True)
def stream_failed(p: Any) -> Any:
    return p.stream_chat_completion("Tell me a story.", model="gpt-4.1")


@scenario("stream_error_event", sse(Answer([Msg(["Once upon", " a time"])], usage(10, 4), seed="stream_error_event"),
                                    error_event={"code": "rate_limit_exceeded", "param": None,
                                                 "message": "Rate limit reached for gpt-4.1 (tokens per min)."}),
          authored_only=True)
def stream_error_event(p: Any) -> Any:
    return p.stream_chat_completion("Tell me a fairy tale.", model="gpt-4.1")


@scenario("stream_incomplete", sse(Answer([Msg(["The sea", " is wide", " and"])], usage(12, 8), status="incomplete",
                                          incomplete_reason="max_output_tokens", seed="stream_incomplete")))
def stream_incomplete(p: Any) -> Any:
    return p.stream_chat_completion("Describe the sea.", model="gpt-4.1", max_tokens=8)


@scenario("stream_cut", sse(Answer([Msg(["Half an"]), Msg(["answer"])], usage(9, 3), seed="stream_cut"), cut_after=1),
          authored_only=True)
def stream_cut(p: Any) -> Any:
    return p.stream_chat_completion("Explain tides.", model="gpt-4.1")


@scenario("stream_open_429", rate_limited({"retry-after-ms": "100"}), sse(COUNT), authored_only=True)
def stream_open_429(p: Any) -> Any:
    return p.stream_chat_completion("Count from one to five.", model="gpt-4.1")


@scenario("stream_refusal", sse(Answer([Msg(["I can't", " help with that."], refusal=True)], usage(20, 7),
                                       seed="stream_refusal")))
def stream_refusal(p: Any) -> Any:
    return p.stream_chat_completion("How do I pick my neighbour's lock?", model="gpt-4.1")


@scenario("stream_text_only", sse(COUNT))
def stream_text_only(p: Any) -> Any:
    return p.stream_text("Count from one to five.", model="gpt-4.1")


@scenario("stream_text_failed", sse(FAILED), authored_only=True)
def stream_text_failed(p: Any) -> Any:
    return p.stream_text("Tell me a story.", model="gpt-4.1")


# --- 4. structured output -----------------------------------------------------------------------------


class City(BaseModel):
    city: str
    country: str


LARGEST_CITY = "Which is the largest city in Japan?"
PLANETS = {"title": "Planets", "type": "object",
           "properties": {"planets": {"type": "array", "items": {"type": "string"}}},
           "required": ["planets"], "additionalProperties": False}


@scenario("json_model", ok(Answer([Msg(['{"city":"Tokyo",', '"country":"Japan"}'])], usage(48, 10), seed="json_model")))
def json_model(p: Any) -> Any:
    return p.generate_json(LARGEST_CITY, schema=City, model="gpt-4.1")


@scenario("json_reasoning", ok(Answer([Think([["**Largest city**\n\n", "Tokyo metro area."]]),
                                       Msg(['{"city":"Tokyo","country":"Japan"}'])],
                                      usage(48, 90, reasoning=76), seed="json_reasoning")))
def json_reasoning(p: Any) -> Any:
    return p.generate_json(LARGEST_CITY, schema=City, thinking={"level": "low"})


@scenario("json_mode", ok(Answer([Msg(['{"colours": ["red", "yellow", "blue"]}'])], usage(30, 13), seed="json_mode")))
def json_mode(p: Any) -> Any:
    return p.generate_json("List the three primary colours under the key colours.", model="gpt-4.1")


@scenario("json_dict_schema", ok(Answer([Msg(['{"planets":["Mars","Venus"]}'])], usage(40, 9), seed="json_dict")))
def json_dict_schema(p: Any) -> Any:
    return p.generate_json("Name two planets.", schema=PLANETS, model="gpt-4.1")


@scenario("json_refusal", ok(Answer([Msg(["I'm sorry, I can't help with that request."], refusal=True)],
                                    usage(52, 10), seed="json_refusal")), authored_only=True)
def json_refusal(p: Any) -> Any:
    return p.generate_json("Which city should I attack first?", schema=City, model="gpt-4.1")


@scenario("json_truncated", ok(Answer([Msg(['{"city":"Tok'])], usage(48, 8), status="incomplete",
                                      incomplete_reason="max_output_tokens", seed="json_truncated")),
          authored_only=True)
def json_truncated(p: Any) -> Any:
    return p.generate_json(LARGEST_CITY, schema=City, model="gpt-4.1", max_tokens=8)


@scenario("json_model_429", rate_limited({"retry-after": "1"}),
          ok(Answer([Msg(['{"city":"Tokyo","country":"Japan"}'])], usage(48, 10), seed="json_model_429")),
          authored_only=True)
def json_model_429(p: Any) -> Any:
    return p.generate_json(LARGEST_CITY, schema=City, model="gpt-4.1")


@scenario("json_stream", sse(Answer([Msg(['{"city":', '"Tokyo",', '"country":"Japan"}'])], usage(48, 10),
                                    seed="json_stream")))
def json_stream(p: Any) -> Any:
    return p.stream_chat_completion(LARGEST_CITY, model="gpt-4.1", json_mode=True, response_schema=City)


# --- 5. tools -------------------------------------------------------------------------------------------

CITY_TOOLS = Answer([Call("get_weather", ['{"city":"Paris"}'], "paris"),
                     Call("get_time", ['{"city":"Tokyo"}'], "tokyo")], usage(120, 40), seed="tools_call")


@scenario("tools_call", ok(CITY_TOOLS))
def tools_call(p: Any) -> Any:
    return p.chat_completion_with_tools(TWO_CITIES, [WEATHER, LOCAL_TIME], model="gpt-4.1")


def city_calls() -> list[ToolCall]:
    """The calls of ``tools_call`` as the parser returns them."""
    items = [final_item(item, CITY_TOOLS, i) for i, item in enumerate(CITY_TOOLS.items)]
    return [ToolCall(id=i["call_id"], name=i["name"], arguments=i["arguments"]) for i in items]


CITY_RESULTS = ['{"temp_c": 18, "sky": "sunny"}', '{"time": "21:05"}']


@scenario("tools_round_trip", ok(Answer([Msg(["It's 18 °C and sunny in Paris, and 21:05 in Tokyo."])], usage(190, 18),
                                        seed="tools_round_trip")))
def tools_round_trip(p: Any) -> Any:
    weather, clock = city_calls()
    messages = [
        {"role": "user", "content": TWO_CITIES},
        ChatMessage.assistant("", tool_calls=[weather, clock]),
        ChatMessage.tool(weather.id, CITY_RESULTS[0], name="get_weather"),
        ChatMessage.tool(clock.id, CITY_RESULTS[1], name="get_time"),
    ]
    return p.chat_completion_with_tools(messages, [WEATHER, LOCAL_TIME], model="gpt-4.1")


PARIS_QUESTION = "Should I take an umbrella in Paris today?"
THINK_THEN_CALL = Answer([Think([["**Need the forecast**\n\n", "I'll look up the weather in Paris."]]),
                          Call("get_weather", ['{"city":"Paris"}'], "paris")], usage(95, 60, reasoning=40),
                         seed="tools_reasoning_1")
THINK_THEN_ANSWER = Answer([Think([["**Forecast is dry**"]], seed="second"),
                            Msg(["No umbrella needed: it's sunny in Paris."])], usage(180, 50, reasoning=30),
                           seed="tools_reasoning_2")


@scenario("tools_reasoning_round_trip", ok(THINK_THEN_CALL), ok(THINK_THEN_ANSWER))
def tools_reasoning_round_trip(p: Any) -> Any:
    """A reasoning model calls a tool; the result goes back with the encrypted reasoning (store=False)."""

    def follow_up(first: Any) -> list[Any]:
        [call] = first.tool_calls
        return [
            {"role": "user", "content": PARIS_QUESTION},
            {"role": "assistant", "content": first.content, "tool_calls": first.tool_calls, "metadata": first.metadata},
            {"role": "tool", "tool_call_id": call.id, "content": CITY_RESULTS[0]},
        ]

    if hasattr(p, "provider"):
        async def turns() -> Any:
            first = await p.chat_completion_with_tools(PARIS_QUESTION, [WEATHER])
            return await p.chat_completion_with_tools(follow_up(first), [WEATHER])

        return turns()
    first = p.chat_completion_with_tools(PARIS_QUESTION, [WEATHER])
    return p.chat_completion_with_tools(follow_up(first), [WEATHER])


@scenario("tools_forced", ok(Answer([Call("get_weather", ['{"city":"Paris"}'], "forced")], usage(80, 12),
                                    seed="tools_forced")))
def tools_forced(p: Any) -> Any:
    return p.chat_completion_with_tools(PARIS_QUESTION, [WEATHER, LOCAL_TIME], model="gpt-4.1",
                                        tool_choice="get_weather", parallel_tool_calls=False)


DATE_TOOL = ToolSpec(name="lookup", description="Look up events on a date.",
                     parameters={"type": "object", "properties": {"when": {"type": "string", "format": "date-ish"}},
                                 "required": ["when"], "additionalProperties": False})


@scenario("tools_invalid_schema", status(400, error_body(
    "Invalid schema for function 'lookup': In context=('properties', 'when'), 'format' 'date-ish' is not "
    "supported.", kind="invalid_request_error", code="invalid_function_parameters", param="tools[0].parameters")),
    authored_only=True)
def tools_invalid_schema(p: Any) -> Any:
    return p.chat_completion_with_tools("What happened yesterday?", [DATE_TOOL], model="gpt-4.1")


LOOSE_TOOL = ToolSpec(name="search", description="Search the web.",
                      parameters={"type": "object", "properties": {"query": {"type": "string"}}})


@scenario("tools_bad_arguments", ok(Answer([Call("search", ['{"query": "weather Paris'])], usage(60, 9),
                                           seed="tools_bad_arguments")), authored_only=True)
def tools_bad_arguments(p: Any) -> Any:
    return p.chat_completion_with_tools("Search for the weather in Paris.", [LOOSE_TOOL], model="gpt-4.1")


# --- 6. vision and documents ----------------------------------------------------------------------------

IMAGE_URL = "https://upload.wikimedia.org/wikipedia/commons/4/47/PNG_transparency_demonstration_1.png"


@scenario("vision_bytes", ok(Answer([Msg(["It is a single, fully transparent pixel."])], usage(280, 10),
                                    seed="vision_bytes")))
def vision_bytes(p: Any) -> Any:
    return p.analyze_image(PNG, "What is in this image?", model="gpt-4.1")


@scenario("vision_url", ok(Answer([Msg(["Two dice on a checkerboard."])], usage(790, 7), seed="vision_url")))
def vision_url(p: Any) -> Any:
    return p.analyze_image(IMAGE_URL, "Describe it in five words.", model="gpt-4.1")


@scenario("vision_two_images", ok(Answer([Msg(["No: the first is a PNG pixel, the second a grey JPEG pixel."])],
                                         usage(560, 16), seed="vision_two_images")))
def vision_two_images(p: Any) -> Any:
    return p.analyze_image([PNG, JPEG], "Are these two images the same?", model="gpt-4.1", image_detail="low")


@scenario("document_pdf", ok(Answer([Msg(["The report says Q3 revenue grew 12%."])], usage(410, 10),
                                    seed="document_pdf")))
def document_pdf(p: Any) -> Any:
    return p.chat_completion([{"role": "user", "content": [
        {"type": "text", "text": "Summarise this document in one sentence."},
        {"type": "document", "data": PDF, "mime_type": "application/pdf", "name": "report.pdf"},
    ]}], model="gpt-4.1")


CORRUPT_PNG = PNG[:16] + b"\x00" * 48


@scenario("vision_invalid_image", status(400, error_body(
    "The image data you provided does not represent a valid image. Please check your input and try again with "
    "one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'].",
    kind="invalid_request_error", code="invalid_image_format", param="input")), authored_only=True)
def vision_invalid_image(p: Any) -> Any:
    return p.analyze_image(CORRUPT_PNG, "What is in this image?", model="gpt-4.1")


# --- 7. embeddings --------------------------------------------------------------------------------------

SENTENCES = ["The cat sat on the mat.", "A dog barked."]
VECTORS = [[0.5, -0.25, 0.125, 0.75], [-0.5, 0.0625, 0.25, -0.375]]


@scenario("embeddings_basic", lambda req, _: (200, embeddings_body(req["model"], VECTORS, 12, as_base64=True), {}))
def embeddings_basic(p: Any) -> Any:
    return p.embeddings(SENTENCES, dimensions=4)


@scenario("embeddings_float", lambda req, _: (200, embeddings_body(req["model"], [[0.25, -0.5, 1.0]], 2,
                                                                   as_base64=False), {}))
def embeddings_float(p: Any) -> Any:
    return p.embeddings("Hello world", model="text-embedding-3-large", dimensions=3, encoding_format="float")


@scenario("embeddings_base64", lambda req, _: (200, embeddings_body(req["model"], [VECTORS[0]], 2, as_base64=True), {}))
def embeddings_base64(p: Any) -> Any:
    return p.embeddings("Hello world", encoding_format="base64", task_type="RETRIEVAL_QUERY")


@scenario("embeddings_too_long", status(400, error_body(
    "This model's maximum context length is 8192 tokens, however you requested 9002 tokens (9002 in your prompt; "
    "0 for the completion). Please reduce your prompt; or completion length.",
    kind="invalid_request_error", code=None)), authored_only=True)
def embeddings_too_long(p: Any) -> Any:
    return p.embeddings("lorem ipsum " * 4500)


# --- 8. images ------------------------------------------------------------------------------------------


@scenario("image_generate", body(images_body(PNG, output_format="png", size="1024x1024", quality="low",
                                             tokens=(12, 272))))
def image_generate(p: Any) -> Any:
    return p.generate_image_bytes("A watercolour fox in the snow", size="1024x1024", quality="low")


@scenario("image_generate_jpeg", body(images_body(JPEG, output_format="jpeg", size="1536x1024", quality="medium",
                                                  tokens=(10, 1056))))
def image_generate_jpeg(p: Any) -> Any:
    return p.generate_image("A lighthouse at dusk", aspect_ratio="3:2", quality="medium", mime_type="image/jpeg",
                            background="opaque")


@scenario("image_edit", body(images_body(PNG, output_format="png", size="1024x1024", quality="low",
                                         tokens=(340, 272))))
def image_edit(p: Any) -> Any:
    return p.generate_image_bytes("Make the pixel red", input_images=[(PNG, "image/png")], model="gpt-image-1.5",
                                  size="1024x1024", quality="low")


@scenario("image_moderation", status(400, error_body(
    "Your request was rejected as a result of our safety system. Your request may contain content that is not "
    "allowed by our safety system.", kind="image_generation_user_error", code="moderation_blocked")),
    authored_only=True)
def image_moderation(p: Any) -> Any:
    return p.generate_image_bytes("A photorealistic picture of a violent crime scene")


# --- 9. decisions ---------------------------------------------------------------------------------------

APPLICATION = {
    "task": "Screen a job application for a senior backend role.",
    "candidate": "Ada: 6 years of Python, led a payments team of five.",
    "evidence": ["Built a ledger service handling 2k transactions per second.", "No Kubernetes experience."],
}
SCREENING = [
    {"kind": "yes_no", "key": "qualified", "instructions": "Does the candidate meet the requirements of the role?",
     "yes_description": "meets every must-have requirement", "no_description": "misses a must-have requirement"},
    {"kind": "choice", "key": "seniority", "instructions": "Which level fits the candidate?",
     "options": ["junior", "mid", "senior"], "option_descriptions": {"senior": "leads projects and people"}},
    {"kind": "score", "key": "fit", "instructions": "How well does the candidate fit the team?",
     "levels": ["poor", "fair", "good", "excellent"]},
]
QUALIFIED = {"type": "predicate", "name": "qualified", "probability": 0.82}
SENIORITY = {"type": "choice", "name": "seniority", "choice": "senior", "confidence": 0.74,
             "probabilities": [{"value": "junior", "probability": 0.03}, {"value": "mid", "probability": 0.23},
                               {"value": "senior", "probability": 0.74}]}
FIT = {"type": "score", "name": "fit", "score": 2.0, "confidence": 0.61,
       "probabilities": [{"label": "poor", "value": 0, "probability": 0.04},
                         {"label": "fair", "value": 1, "probability": 0.2},
                         {"label": "good", "value": 2, "probability": 0.61},
                         {"label": "excellent", "value": 3, "probability": 0.15}]}


@scenario("decision_native", body(decision_body("gpt-6-luna", [QUALIFIED, SENIORITY, FIT], (212, 3))))
def decision_native(p: Any) -> Any:
    return p.decide(APPLICATION, SCREENING)


@scenario("decision_refusal", body(decision_body("gpt-6-luna", [QUALIFIED, {"type": "refusal", "name": "seniority"},
                                                                FIT], (212, 2))), authored_only=True)
def decision_refusal(p: Any) -> Any:
    return p.decide(APPLICATION, SCREENING)


@scenario("decision_invalid", body(decision_body("gpt-6-luna", [QUALIFIED, {**SENIORITY, "choice": "principal"}, FIT],
                                                 (212, 3))), authored_only=True)
def decision_invalid(p: Any) -> Any:
    return p.decide(APPLICATION, SCREENING)


@scenario("decision_fallback", ok(Answer([Msg(['{"qualified":"yes","seniority":"senior","fit":2}'])], usage(260, 16),
                                         seed="decision_fallback")))
def decision_fallback(p: Any) -> Any:
    return p.decide(APPLICATION, SCREENING, model="gpt-4.1")


@scenario("decision_unknown_model", status(404, error_body(
    "The model `gpt-6-luna-preview` does not exist or you do not have access to it.",
    kind="invalid_request_error", code="model_not_found")), authored_only=True, native_decisions=True)
def decision_unknown_model(p: Any) -> Any:
    return p.decide(APPLICATION, SCREENING[:1], model="gpt-6-luna-preview")


# --- 10. models and health --------------------------------------------------------------------------------

LISTED = ["gpt-5.4-mini", "gpt-4.1", "text-embedding-3-small", "gpt-image-2", "gpt-6-luna"]


@scenario("models_list", body(models_body(LISTED)))
def models_list(p: Any) -> Any:
    return p.available_models()


@scenario("models_unauthorized", status(401, error_body(
    "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys.",
    kind="invalid_request_error", code="invalid_api_key")), authored_only=True)
def models_unauthorized(p: Any) -> Any:
    return p.test_connection()


# --- 11. OpenAI-compatible servers -------------------------------------------------------------------------

OLLAMA = {"base_url": "http://localhost:11434/v1", "api_key": "ollama",
          "unknown_model_features": ["chat", "completion", "streaming"]}


def ollama_reply(req: Any, _: Any) -> tuple[int, Any, dict[str, str]]:
    """Ollama's /v1/responses answer: fewer fields than OpenAI's, usage without details."""
    return 200, {
        "id": ident("resp", "ollama"), "object": "response", "created_at": CREATED, "completed_at": CREATED + 1,
        "status": "completed", "model": req["model"],
        "output": [{"id": ident("msg", "ollama"), "type": "message", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Air scatters blue light more than red light.",
                                 "annotations": []}]}],
        "usage": {"input_tokens": 31, "output_tokens": 11, "total_tokens": 42},
    }, {}


@scenario("compatible_ollama", ollama_reply, authored_only=True, **OLLAMA)
def compatible_ollama(p: Any) -> Any:
    return p.chat_completion("Why is the sky blue? Answer in one sentence.", model="llama3.2")


def vllm_stream(req: Any, _: Any) -> tuple[int, Any, dict[str, str]]:
    """vLLM streaming gpt-oss: raw reasoning text (no summary) before the answer."""
    rid, rs, msg = ident("resp", "vllm"), ident("rs", "vllm"), ident("msg", "vllm")
    base = {"id": rid, "object": "response", "created_at": CREATED, "model": req["model"], "output": [],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "status": "in_progress"}
    final = {**base, "status": "completed", "usage": usage(20, 30, reasoning=18), "output": [
        {"id": rs, "type": "reasoning", "summary": [],
         "content": [{"type": "reasoning_text", "text": "User greets. Reply briefly."}]},
        {"id": msg, "type": "message", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Hello there!", "annotations": []}]}]}
    events = [
        {"type": "response.created", "response": base},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": rs, "type": "reasoning", "summary": [], "content": []}},
        {"type": "response.reasoning_text.delta", "item_id": rs, "output_index": 0, "content_index": 0,
         "delta": "User greets. "},
        {"type": "response.reasoning_text.delta", "item_id": rs, "output_index": 0, "content_index": 0,
         "delta": "Reply briefly."},
        {"type": "response.output_item.done", "output_index": 0, "item": final["output"][0]},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**final["output"][1], "status": "in_progress", "content": []}},
        {"type": "response.output_text.delta", "item_id": msg, "output_index": 1, "content_index": 0,
         "delta": "Hello", "logprobs": []},
        {"type": "response.output_text.delta", "item_id": msg, "output_index": 1, "content_index": 0,
         "delta": " there!", "logprobs": []},
        {"type": "response.output_item.done", "output_index": 1, "item": final["output"][1]},
        {"type": "response.completed", "response": final},
    ]
    text = "".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': i})}\n\n"
                   for i, e in enumerate(events))
    return 200, text, {}


@scenario("compatible_vllm_stream", vllm_stream, authored_only=True, base_url="http://127.0.0.1:8000/v1",
          api_key="EMPTY")
def compatible_vllm_stream(p: Any) -> Any:
    return p.stream_chat_completion("Say hello.", model="openai/gpt-oss-20b", thinking={"level": "low"})

# --- 12. errors and retries (through chat) ---------------------------------------------------------

PING = "Reply with the word pong."


def ping(p: Any, model: str = "gpt-4.1") -> Any:
    return p.chat_completion(PING, model=model)


PONG = Answer([Msg(["pong"])], usage(13, 2), seed="pong")


@scenario("error_401", status(401, error_body(
    "Incorrect API key provided: sk-proj-****************************************************************abcd. "
    "You can find your API key at https://platform.openai.com/account/api-keys.",
    kind="invalid_request_error", code="invalid_api_key")), authored_only=True)
def error_401(p: Any) -> Any:
    return ping(p)


@scenario("error_403", status(403, error_body(
    "Project `proj_EXAMPLE` does not have access to model `gpt-5.4`", kind="invalid_request_error",
    code="model_not_found")), authored_only=True)
def error_403(p: Any) -> Any:
    return ping(p, "gpt-5.4")


@scenario("error_404", status(404, error_body(
    "The model `gpt-9-turbo` does not exist or you do not have access to it.", kind="invalid_request_error",
    code="model_not_found")), authored_only=True)
def error_404(p: Any) -> Any:
    return ping(p, "gpt-9-turbo")


@scenario("error_400", status(400, error_body(
    "Invalid value: 'ultrafast'. Supported values are: 'auto', 'default', 'flex', 'scale' and 'priority'.",
    kind="invalid_request_error", code="invalid_value", param="service_tier")), authored_only=True)
def error_400(p: Any) -> Any:
    return p.chat_completion(PING, model="gpt-4.1", service_tier="ultrafast")


@scenario("error_context_length", status(400, error_body(
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    kind="invalid_request_error", code="context_length_exceeded", param="input")), authored_only=True)
def error_context_length(p: Any) -> Any:
    return p.chat_completion("lorem ipsum " * 2000, model="gpt-4.1")


@scenario("error_429_retry_after_ms", rate_limited({"retry-after-ms": "250"}), ok(PONG), authored_only=True)
def error_429_retry_after_ms(p: Any) -> Any:
    return ping(p)


@scenario("error_429_exhausted", rate_limited({"retry-after": "2"}), rate_limited({"retry-after": "2"}),
          rate_limited({"retry-after": "2"}), authored_only=True)
def error_429_exhausted(p: Any) -> Any:
    return ping(p)


@scenario("error_500_then_ok", status(500, SERVER_ERROR), ok(PONG), authored_only=True)
def error_500_then_ok(p: Any) -> Any:
    return ping(p)


@scenario("error_503_exhausted", status(503, SERVER_ERROR), status(503, SERVER_ERROR), status(503, SERVER_ERROR),
          authored_only=True)
def error_503_exhausted(p: Any) -> Any:
    return ping(p)



# --- count_tokens: POST /v1/responses/input_tokens --------------------------------------------------
# The answer is the SDK's InputTokenCountResponse (openai/types/responses/input_token_count_response.py):
# {"object": "response.input_tokens", "input_tokens": N}, the only fields the endpoint returns.

COUNTED = {"object": "response.input_tokens", "input_tokens": 96}


@scenario("count_tokens", body(COUNTED))
def count_tokens(p: Any) -> Any:
    return p.count_tokens(CAPITAL, model="gpt-5.4-mini", tools=[WEATHER], tool_choice="auto",
                          thinking={"level": "low"}, parallel_tool_calls=False, service_tier="flex")


@scenario("count_tokens_fallback", body({"object": "response.input_tokens", "input_tokens": 8}))
def count_tokens_fallback(p: Any) -> Any:
    """OpenAI's side of the router test in tests/gemini: Gemini answered this prompt with a 429."""
    return p.count_tokens("How long is this prompt in tokens?")


__all__ = ["SCENARIOS", "Call", "City", "Scenario", "Think", "make_provider"]


# --- the llm-core conformance kit: one cassette per kit scenario (cassettes/openai/conformance/) ------------

CONFORMANCE = CASSETTES / "conformance"
GREETING = Answer([Think([]), Msg(["Hello", " there, and welcome!"])], usage(20, 70, reasoning=64), seed="kit_chat")
KIT_COUNT = Answer([Think([]), Msg(["one", ", two", ", three", ", four", ", five"])], usage(22, 74, reasoning=64),
                   seed="kit_stream")
KIT_WEATHER = Answer([Think([]), Call("get_weather", ['{"city":', '"Paris"}'])], usage(80, 60, reasoning=40),
                     seed="kit_tools_1")
KIT_TRIAGE = [
    {"type": "predicate", "name": "needs_human", "probability": 0.91},
    {"type": "choice", "name": "category", "choice": "billing", "confidence": 0.95,
     "probabilities": [{"value": "billing", "probability": 0.95}, {"value": "shipping", "probability": 0.03},
                       {"value": "technical", "probability": 0.02}]},
    {"type": "score", "name": "urgency", "score": 1.0, "confidence": 0.55,
     "probabilities": [{"label": "low", "value": 0, "probability": 0.2},
                       {"label": "medium", "value": 1, "probability": 0.55},
                       {"label": "high", "value": 2, "probability": 0.25}]},
]

KIT_UNAUTHORIZED = error_body("Incorrect API key provided: test-key. You can find your API key at "
                              "https://platform.openai.com/account/api-keys.", kind="invalid_request_error",
                              code="invalid_api_key")

#: Kit scenario → the replies to its requests (the calls are the kit's own: run_scenario).
CONFORMANCE_REPLIES: dict[str, list[Reply]] = {
    "models": [body(models_body(LISTED))],
    "chat": [ok(GREETING)],
    "error": [status(401, KIT_UNAUTHORIZED)],
    "stream": [sse(KIT_COUNT)],
    "stream_error": [status(401, KIT_UNAUTHORIZED)],
    "tools": [ok(KIT_WEATHER),
              ok(Answer([Think([]), Msg(["It is 18 °C and sunny in Paris."])], usage(140, 50, reasoning=32),
                        seed="kit_tools_2"))],
    "json": [ok(Answer([Think([]), Msg(['{"name":"Paris","country":"France","population":2100000}'])],
                       usage(70, 80, reasoning=64), seed="kit_json"))],
    "vision": [ok(Answer([Think([]), Msg(["Red."])], usage(90, 66, reasoning=64), seed="kit_vision"))],
    "documents": [ok(Answer([Think([]), Msg(["The invoice total is 42 EUR."])], usage(300, 70, reasoning=60),
                            seed="kit_documents"))],
    "thinking": [ok(Answer([Think([["**Trying small primes**\n\n", "391 = 17 * 23."]]), Msg(["No: 391 = 17 * 23."])],
                           usage(25, 140, reasoning=128), seed="kit_thinking"))],
    "stream_thinking": [sse(Answer([Think([["**Counting letters**\n\n", "s-t-r-a-w-b-e-r-r-y: three r's."]]),
                                    Msg(["The letter r appears", " **3** times", " in strawberry."])],
                                   usage(24, 150, reasoning=128), seed="kit_stream_thinking"))],
    "thinking_tools": [ok(Answer([Think([["**Checking the weather**\n\n", "Call get_weather for Paris."]],
                                        seed="kit_thinking_tools"),
                                  Call("get_weather", ['{"city":', '"Paris"}'], "kit_thinking_tools")],
                                 usage(82, 70, reasoning=52), seed="kit_thinking_tools_1")),
                       ok(Answer([Think([]), Msg(["Yes: 18 °C and sunny in Paris, pleasantly warm."])],
                                 usage(150, 48, reasoning=30), seed="kit_thinking_tools_2"))],
    "embeddings": [lambda req, _: (200, embeddings_body(req["model"], [[0.5, -0.25, 0.125], [0.25, 0.5, -0.75]], 14,
                                                        as_base64=True), {})],
    "image": [body(images_body(PNG, output_format="png", size="1024x1024", quality="auto", tokens=(15, 4160)))],
    "decision": [body(decision_body("gpt-6-luna", KIT_TRIAGE, (180, 3)))],
    "count_tokens": [body({"object": "response.input_tokens", "input_tokens": 9})],  # InputTokenCountResponse
}
