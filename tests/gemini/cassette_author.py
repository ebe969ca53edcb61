"""Author the Gemini cassettes in ``cassettes/gemini/`` without network access.

Each case runs the real provider and the real google-genai SDK against an ``httpx2.MockTransport``
that answers with a response modelled on the real service (field names and shapes checked against
recorded Gemini traffic and the SDK's types); vcrpy records the exact request the SDK sent and
that answer in the readable cassette format. Tests then replay the cassettes through the real SDK
with record mode ``none``.

Run from the repository root:

    python -m tests.gemini.cassette_author             # every cassette
    python -m tests.gemini.cassette_author chat_basic  # some

To record against the real API instead, run the tests with ``LLM_CORE_RECORD=all`` and a real
``GEMINI_API_KEY`` (see docs/gemini.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from core_gemini_plugin import assistant_message
from core_gemini_plugin.provider import GeminiProvider
from llm_core.errors import LLMError
from llm_core.messages import ChatMessage, ImagePart, TextPart
from llm_core.retry import RetryPolicy
from llm_core.testing import scenarios as sc
from llm_core.testing.cassettes import SECRET_HEADERS, use_cassette
from llm_core.tools import ToolCall
from tests.gemini.gemini_inputs import (
    BROKEN_PNG,
    CASSETTES,
    CLOCK,
    COLORS_SCHEMA,
    COUNT_FALLBACK_PROMPT,
    EMPTY_PDF,
    KEY,
    LOOKUP,
    PDF,
    PNG,
    QUESTION,
    QUESTIONS,
    STYLE_GUIDE,
    SUBJECT,
    SYSTEM,
    THINK_QUESTION,
    TOOL_RESULT_TABLE,
    WEATHER,
    CityLocation,
)

Reply = Callable[[httpx2.Request], httpx2.Response]
JSON_HEADERS = {"content-type": "application/json; charset=UTF-8", "vary": "Origin, X-Origin, Referer",
                "server-timing": "gfet4t7; dur=612"}
SSE_HEADERS = {"content-type": "text/event-stream", "content-disposition": "attachment",
               "vary": "Origin, X-Origin, Referer", "server-timing": "gfet4t7; dur=431"}
JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")
WEBP = (b"RIFF" + struct.pack("<I", 26) + b"WEBPVP8L" + struct.pack("<I", 13)
        + bytes.fromhex("2f000000100700100811118888fe0700"))


# -- response builders (shapes of the real service) ------------------------------------------


def response_id(seed: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(seed.encode()).digest()).decode()[:23]


def signature(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return base64.b64encode(b"\x12\x9a\x04\n\x97\x04\x01" + digest * 4).decode()


def usage(prompt: int, output: int | None = None, thoughts: int | None = None,
          cached: int | None = None) -> dict[str, Any]:
    """``usageMetadata``; ``cached`` prompt tokens (part of ``prompt``) came from the context cache."""
    meta: dict[str, Any] = {"promptTokenCount": prompt}
    if output is not None:
        meta["candidatesTokenCount"] = output
    meta["totalTokenCount"] = prompt + (output or 0) + (thoughts or 0)
    if cached:
        meta["cachedContentTokenCount"] = cached
    meta["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if cached:
        meta["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    return meta


def generate(seed: str, parts: list[dict[str, Any]] | None, *, finish: str | None = "STOP",
             model: str = "gemini-2.5-flash", meta: dict[str, Any] | None = None,
             **candidate_fields: Any) -> dict[str, Any]:
    """A ``generateContent`` body (also one SSE chunk)."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"} if parts is not None else {}}
    if finish:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    candidate.update(candidate_fields)
    body: dict[str, Any] = {"candidates": [candidate]}
    if meta is not None:
        body["usageMetadata"] = meta
    body["modelVersion"] = model
    body["responseId"] = response_id(seed)
    return body


def ok(body: dict[str, Any]) -> Reply:
    return lambda _request: httpx2.Response(200, headers=JSON_HEADERS, content=json.dumps(body).encode())


def sse(chunks: Sequence[dict[str, Any]]) -> Reply:
    text = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks)
    return lambda _request: httpx2.Response(200, headers=SSE_HEADERS, content=text.encode())


def google_error(code: int, status: str, message: str, details: Sequence[dict[str, Any]] = ()) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    reason = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests",
              500: "Internal Server Error", 503: "Service Unavailable"}[code]
    return lambda _request: httpx2.Response(code, headers=JSON_HEADERS, content=json.dumps({"error": error}).encode(),
                                            extensions={"reason_phrase": reason.encode()})


INVALID_KEY = google_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
     "metadata": {"service": "generativelanguage.googleapis.com"}},
    {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
     "message": "API key not valid. Please pass a valid API key."},
])


def rate_limited(delay: str, model: str = "gemini-2.5-flash") -> Reply:
    return google_error(
        429, "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details. For more information on "
        "this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: "
        "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: "
        f"{model}\nPlease retry in {delay}.",
        [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "10"}]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                {"description": "Learn more about Gemini API quotas",
                 "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
        ],
    )


OVERLOADED = google_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
INTERNAL = google_error(500, "INTERNAL", "An internal error has occurred. Please retry or report in "
                                         "https://developers.generativeai.google/guide/troubleshooting")


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"text": value, **extra}


def thought(value: str) -> dict[str, Any]:
    return {"text": value, "thought": True}


def call(name: str, args: dict[str, Any], sig: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
    if sig:
        part["thoughtSignature"] = sig
    return part


def inline(data: bytes, mime: str | None) -> dict[str, Any]:
    blob: dict[str, Any] = {"data": base64.b64encode(data).decode()}
    if mime:
        blob["mimeType"] = mime
    return {"inlineData": blob}


def vector(seed: str, dims: int, like: str | None = None) -> list[float]:
    """Deterministic unit-ish vectors; ``like`` makes a vector close to another one."""
    def raw(s: str) -> list[float]:
        out: list[float] = []
        counter = 0
        while len(out) < dims:
            digest = hashlib.sha256(f"{s}:{counter}".encode()).digest()
            out.extend((b - 127.5) / 2550.0 for b in digest)
            counter += 1
        return out[:dims]

    values = raw(seed)
    if like is not None:
        base = raw(like)
        values = [0.9 * b + 0.1 * v for b, v in zip(base, values, strict=True)]
    return [round(v, 7) for v in values]


# -- the cases ---------------------------------------------------------------------------------


@dataclass
class Case:
    replies: list[Reply]
    action: Callable[[GeminiProvider], Any]
    raises: type[LLMError] | None = None
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy(max_attempts=3, sleep=lambda _s: None))


CASES: dict[str, Case] = {}


def case(name: str, replies: list[Reply], *, raises: type[LLMError] | None = None,
         attempts: int = 3) -> Callable[[Callable[[GeminiProvider], Any]], Callable[[GeminiProvider], Any]]:
    def register(action: Callable[[GeminiProvider], Any]) -> Callable[[GeminiProvider], Any]:
        CASES[name] = Case(replies, action, raises, RetryPolicy(max_attempts=attempts, sleep=lambda _s: None))
        return action
    return register


def drain(events: Any) -> list[Any]:
    return list(events)


# chat and completion

case("chat_basic", [ok(generate("chat_basic", [text("The capital of France is Paris.")], meta=usage(14, 7, 41)))])(
    lambda p: p.chat_completion([{"role": "user", "content": QUESTION}], system=SYSTEM, temperature=0.0,
                                max_tokens=200))

case("chat_cached", [ok(generate("chat_cached", [text("Poetry is on shelf 12.")],
                                  meta=usage(1300, 9, 35, cached=1024)))])(
    lambda p: p.chat_completion("Where is poetry?", system=STYLE_GUIDE))
case("chat_plain_string", [ok(generate("chat_plain_string", [text(
    "Crisp leaves drift and fall,\nGolden light on quiet paths,\nThe year exhales slow.\n")],
    meta=usage(7, 21, 312)))])(lambda p: p.generate_text("Write a haiku about autumn."))

THOUGHT_1 = ("**Counting the letters**\n\nI'm spelling out s-t-r-a-w-b-e-r-r-y and marking each r: positions 3, 8 "
             "and 9. That makes three.\n")
ANSWER_1 = "The letter r appears **3** times in strawberry."
THINKING_TURN = generate("chat_thinking_budget", [thought(THOUGHT_1), text(ANSWER_1, thoughtSignature=signature("t1"))],
                         meta=usage(13, 12, 87))

case("chat_thinking_budget", [ok(THINKING_TURN)])(
    lambda p: p.chat_completion(THINK_QUESTION, thinking={"budget": 1024}))


@case("chat_multi_turn_signature", [ok(THINKING_TURN), ok(generate("chat_multi_turn_signature", [
    thought("**Checking raspberry**\n\nr-a-s-p-b-e-r-r-y has an r at positions 1, 7 and 8.\n"),
    text("The letter r appears **3** times in raspberry.", thoughtSignature=signature("t2"))],
    meta=usage(45, 12, 64)))])
def _multi_turn(p: GeminiProvider) -> Any:
    first = p.chat_completion(THINK_QUESTION, thinking={"budget": 1024})
    return p.chat_completion([ChatMessage.user(THINK_QUESTION), assistant_message(first),
                              ChatMessage.user("And in raspberry?")], thinking={"budget": 1024})


case("chat_thinking_level", [ok(generate("chat_thinking_level", [
    thought("**Counting characters**\n\nThe word has three r characters.\n"),
    text(ANSWER_1, thoughtSignature=signature("t3"))], model="gemini-3-flash-preview", meta=usage(13, 12, 44)))])(
    lambda p: p.chat_completion(THINK_QUESTION, model="gemini-3-flash-preview", thinking={"level": "low"}))

case("chat_max_tokens", [ok(generate("chat_max_tokens", [text("The capital of France is")], finish="MAX_TOKENS",
                                     meta=usage(8, 5)))])(
    lambda p: p.chat_completion(QUESTION, max_tokens=5, thinking={"include_thoughts": False, "budget": 0}))

SAFETY_RATINGS = [
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM", "blocked": True},
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]
HARASSMENT = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_LOW_AND_ABOVE"}]

case("chat_safety_blocked", [ok(generate("chat_safety_blocked", None, finish="SAFETY", meta=usage(12),
                                         safetyRatings=SAFETY_RATINGS))])(
    lambda p: p.chat_completion("Write a cruel joke about my neighbours.", safety_settings=HARASSMENT))

PROMPT_BLOCKED = {
    "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
    "usageMetadata": usage(13),
    "modelVersion": "gemini-2.5-flash",
    "responseId": response_id("chat_prompt_blocked"),
}
case("chat_prompt_blocked", [ok(PROMPT_BLOCKED)], raises=LLMError)(
    lambda p: p.chat_completion("Describe how to pick the lock of my neighbour's front door."))

# errors

case("error_invalid_key", [INVALID_KEY], raises=LLMError)(lambda p: p.generate_text("Hello"))
case("error_permission_denied", [google_error(403, "PERMISSION_DENIED", "The caller does not have permission")],
     raises=LLMError)(lambda p: p.generate_text("Hello", model="gemini-2.5-pro"))
case("error_model_not_found", [google_error(
    404, "NOT_FOUND", "models/gemini-0-nope is not found for API version v1, or is not supported for "
    "generateContent. Call ListModels to see the list of available models and their supported methods.")],
    raises=LLMError)(lambda p: p.generate_text("Hello", model="gemini-0-nope"))
case("error_rate_limited_then_ok", [rate_limited("7s"), ok(generate("error_rate_limited_then_ok", [text("Hi there!")],
                                                                    meta=usage(2, 3)))])(
    lambda p: p.generate_text("Hello"))
case("error_rate_limited", [rate_limited("41s")] * 3, raises=LLMError)(lambda p: p.generate_text("Hello"))
case("error_server_then_ok", [OVERLOADED, ok(generate("error_server_then_ok", [text("Hi there!")], meta=usage(2, 3)))])(
    lambda p: p.generate_text("Hello"))
case("error_server", [INTERNAL] * 3, raises=LLMError)(lambda p: p.generate_text("Hello"))

# structured output

case("json_pydantic", [ok(generate("json_pydantic", [text('{\n  "city": "Mexico City",\n  "country": "Mexico"\n}')],
                                   meta=usage(9, 20)))])(
    lambda p: p.generate_json("What is the largest city in Mexico?", schema=CityLocation))
case("json_dict_schema", [ok(generate("json_dict_schema", [text('{"colors": ["red", "yellow", "blue"]}')],
                                      meta=usage(11, 12)))])(
    lambda p: p.generate_json("Name the three primary colours.", schema=COLORS_SCHEMA))
case("json_no_schema", [ok(generate("json_no_schema", [text('{"primes": [2, 3, 5]}')], meta=usage(16, 10)))])(
    lambda p: p.generate_json("Give the first three primes as a JSON object with the key primes."))
case("json_truncated", [ok(generate("json_truncated", [text('{\n  "city": "Mexico')], finish="MAX_TOKENS",
                                    meta=usage(9, 6)))], raises=LLMError)(
    lambda p: p.generate_json("What is the largest city in Mexico?", schema=CityLocation, max_tokens=6))
case("json_schema_mismatch", [ok(generate("json_schema_mismatch", [text('{"city": "Mexico City"}')],
                                          meta=usage(9, 8)))], raises=LLMError)(
    lambda p: p.generate_json("Which city hosts the Zócalo?", schema=CityLocation))

# tools

WEATHER_QUESTION = "What's the weather in Paris and Tokyo right now?"
TOOL_TURN = generate("tools_loop", [call("get_weather", {"city": "Paris"}, signature("tools")),
                                    call("get_weather", {"city": "Tokyo"})],
                     model="gemini-3-flash-preview", meta=usage(74, 30, 112))


@case("tools_loop", [ok(TOOL_TURN), ok(generate("tools_loop_2", [text(
    "Paris is 18 °C and cloudy; Tokyo is 24 °C and clear.", thoughtSignature=signature("tools2"))],
    model="gemini-3-flash-preview", meta=usage(160, 19, 35)))])
def _tools_loop(p: GeminiProvider) -> Any:
    first = p.chat_completion_with_tools(WEATHER_QUESTION, [WEATHER, CLOCK], model="gemini-3-flash-preview")
    assert first.tool_calls is not None
    paris, tokyo = first.tool_calls
    return p.chat_completion_with_tools(
        [ChatMessage.user(WEATHER_QUESTION), assistant_message(first),
         ChatMessage.tool(paris.id, '{"temp_c": 18, "sky": "cloudy"}'),
         ChatMessage.tool(tokyo.id, '{"temp_c": 24, "sky": "clear"}')],
        [WEATHER, CLOCK], model="gemini-3-flash-preview")


SLOT_CALLS = [ToolCall(id=f"slot_{i}", name="lookup", arguments={"key": str(i)}) for i in range(len(TOOL_RESULT_TABLE))]
SLOT_CALLS[0] = ToolCall(id="slot_0", name="lookup", arguments={})
SLOT_CALLS[1] = ToolCall(id="slot_1", name="lookup", arguments={"0": "zero", "1": "one"})


def slot_messages() -> list[ChatMessage]:
    return [ChatMessage.user("Look up the seven records."), ChatMessage.assistant(tool_calls=SLOT_CALLS),
            *(ChatMessage.tool(c.id, output) for c, (output, _) in zip(SLOT_CALLS, TOOL_RESULT_TABLE, strict=True))]


case("tools_result_slots", [ok(generate("tools_result_slots", [text("All seven records were retrieved.")],
                                        meta=usage(151, 7)))])(
    lambda p: p.chat_completion_with_tools(slot_messages(), [LOOKUP]))
case("tools_choice_named", [ok(generate("tools_choice_named", [call("get_weather", {"city": "Oslo"},
                                                                    signature("oslo"))], meta=usage(58, 15, 40)))])(
    lambda p: p.chat_completion_with_tools("Check the weather in Oslo.", [WEATHER, CLOCK], tool_choice="get_weather"))

case("tools_malformed_call", [ok(generate("tools_malformed_call", None, finish="MALFORMED_FUNCTION_CALL",
                                          meta=usage(58)))])(
    lambda p: p.chat_completion_with_tools("Check the weather in Oslo.", [WEATHER]))

# streaming


def chunks(seed: str, pieces: Sequence[dict[str, Any] | None], *, model: str = "gemini-2.5-flash",
           last_finish: str = "STOP", prompt: int = 9, thoughts: int | None = None, cached: int | None = None,
           **last_fields: Any) -> list[dict[str, Any]]:
    """SSE chunks: one per part (``None``: a chunk without content); usage on every chunk, the
    finish reason on the last, like the real service."""
    out = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        parts = [piece] if piece is not None else None
        body = generate(seed, parts, finish=last_finish if last else None, model=model,
                        meta=usage(prompt, index + 2 if last or index else None, thoughts, cached),
                        **(last_fields if last else {}))
        out.append(body)
    return out


case("stream_cached", [sse(chunks("stream_cached", [text("Maps are"), text(" on shelf 3.")], prompt=1291,
                                  thoughts=20, cached=1024))])(
    lambda p: drain(p.stream_chat_completion("Where are maps?", system=STYLE_GUIDE)))
case("stream_text", [sse(chunks("stream_text", [text("One, two,"), text(" three, four,"), text(" five.")]))])(
    lambda p: drain(p.stream_chat_completion("Count from one to five.")))
case("stream_thinking", [sse(chunks("stream_thinking", [
    thought("**Counting letters**\n\nSpelling it out: s-t-r-a-w-b-e-r-r-y.\n\n"),
    thought("Marking each r gives three.\n\n"),
    text("The letter r appears "),
    text("**3** times in strawberry."),
    text("", thoughtSignature=signature("stream")),
], prompt=13, thoughts=96))])(lambda p: drain(p.stream_chat_completion(THINK_QUESTION, thinking={"budget": 1024})))
case("stream_tool_call", [sse(chunks("stream_tool_call", [call("get_weather", {"city": "Paris"}, signature("st")),
                                                          text("")], model="gemini-3-flash-preview", prompt=41,
                                     thoughts=77))])(
    lambda p: drain(p.stream_chat_completion("What's the weather in Paris?", model="gemini-3-flash-preview",
                                             tools=[WEATHER])))


def _stream_then_error(_request: httpx2.Request) -> httpx2.Response:
    good = chunks("stream_error_midway", [text("The lighthouse keeper "), text("climbed the stairs")])
    good[-1]["candidates"][0].pop("finishReason")
    error = {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                       "status": "UNAVAILABLE"}}
    body = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in [*good, error])
    return httpx2.Response(200, headers=SSE_HEADERS, content=body.encode())


case("stream_error_midway", [_stream_then_error])(
    lambda p: drain(p.stream_chat_completion("Tell me a long story about a lighthouse keeper.")))
case("stream_open_retry", [rate_limited("2s"), sse(chunks("stream_open_retry", [text("Nile, Amazon"),
                                                                                 text(" and Danube.")]))])(
    lambda p: drain(p.stream_chat_completion("Name three rivers.")))
case("stream_safety", [sse(chunks("stream_safety", [text("Here is a joke"), None], last_finish="SAFETY",
                                  safetyRatings=SAFETY_RATINGS))])(
    lambda p: drain(p.stream_chat_completion("Write a cruel joke about my neighbours.", safety_settings=HARASSMENT)))
case("stream_max_tokens", [sse(chunks("stream_max_tokens", [text("The ocean is vast,"), text(" deep and")],
                                      last_finish="MAX_TOKENS"))])(
    lambda p: drain(p.stream_chat_completion("Describe the ocean.", max_tokens=8)))
case("stream_prompt_blocked", [sse([PROMPT_BLOCKED])])(
    lambda p: drain(p.stream_chat_completion("Describe how to pick the lock of my neighbour's front door.")))

# vision and documents

case("vision_png", [ok(generate("vision_png", [text("The image is a single transparent pixel.")],
                                meta=usage(265, 9)))])(
    lambda p: p.analyze_image(PNG, "What is in this image?", mime_type="image/png"))
case("document_pdf", [ok(generate("document_pdf", [text("The invoice total is 99 EUR.")], meta=usage(270, 9)))])(
    lambda p: p.chat_completion([{"role": "user", "content": [
        {"type": "text", "text": "What is the invoice total?"},
        {"type": "document", "data": PDF, "mime_type": "application/pdf"}]}]))

case("vision_invalid_image", [google_error(
    400, "INVALID_ARGUMENT", "Unable to process input image. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting")], raises=LLMError)(
    lambda p: p.analyze_image(BROKEN_PNG, "What is in this image?", mime_type="image/png"))
case("document_no_pages", [google_error(400, "INVALID_ARGUMENT", "The document has no pages.")], raises=LLMError)(
    lambda p: p.chat_completion([{"role": "user", "content": [
        {"type": "text", "text": "What is the invoice total?"},
        {"type": "document", "data": EMPTY_PDF, "mime_type": "application/pdf"}]}]))

# embeddings

EMBED_TEXTS = ["The cat sat on the mat.", "A feline rested on the rug.", "Stock markets fell sharply today."]
case("embed_one", [ok({"embeddings": [{"values": vector("hello", 3072)}]})])(lambda p: p.embeddings("Hello, world!"))
case("embed_many", [ok({"embeddings": [{"values": vector("cat", 768)}, {"values": vector("feline", 768, like="cat")},
                                       {"values": vector("stocks", 768)}]})])(
    lambda p: p.embeddings(EMBED_TEXTS, dimensions=768, task_type="semantic_similarity"))
case("embed_not_found", [google_error(
    404, "NOT_FOUND", "models/text-embedding-000 is not found for API version v1, or is not supported for "
    "embedContent. Call ListModels to see the list of available models and their supported methods.")],
    raises=LLMError)(lambda p: p.embeddings("Hello, world!", model="text-embedding-000"))

# images

FOX = "A watercolor painting of a red fox in the snow."
case("image_basic", [ok(generate("image_basic", [text("Here is your watercolor fox."), inline(PNG, "image/png")],
                                 model="gemini-2.5-flash-image", meta=usage(12, 1290)))])(
    lambda p: p.generate_image_bytes(FOX, aspect_ratio="1:1"))
case("image_input_images", [ok(generate("image_input_images", [inline(PNG, "image/png")],
                                        model="gemini-2.5-flash-image", meta=usage(270, 1290)))])(
    lambda p: p.generate_image_bytes("Turn this pixel blue.", input_images=[(PNG, "image/png")]))
case("image_mime_fallback", [ok(generate("image_mime_fallback", [inline(WEBP, None)], model="gemini-2.5-flash-image",
                                         meta=usage(7, 1290)))])(
    lambda p: p.generate_image_bytes("A tiny blue square.", mime_type="image/webp"))
SIZE_REJECTED = google_error(400, "INVALID_ARGUMENT", "Image size 4K is not available for this request. "
                                                      "Supported sizes: 1K, 2K.")
case("image_4k_retry", [SIZE_REJECTED, ok(generate("image_4k_retry", [inline(PNG, "image/png")],
                                                   model="gemini-3-pro-image", meta=usage(12, 1120)))])(
    lambda p: p.generate_image_bytes(FOX, model="gemini-3-pro-image", size="4K"))
case("image_4k_retry_fails", [SIZE_REJECTED, google_error(400, "INVALID_ARGUMENT", "Image generation is not "
                                                          "available for this prompt.")], raises=LLMError)(
    lambda p: p.generate_image_bytes(FOX, model="gemini-3-pro-image", size="4K"))
case("image_no_image", [ok(generate("image_no_image", [text(
    "I can describe it instead: a red fox curled up in fresh snow.")], model="gemini-3-pro-image",
    meta=usage(12, 14)))], raises=LLMError)(
    lambda p: p.generate_image_bytes(FOX, model="gemini-3-pro-image", size="4K"))
case("image_blocked", [ok(generate("image_blocked", None, finish="IMAGE_SAFETY", model="gemini-2.5-flash-image",
                                   meta=usage(11)))], raises=LLMError)(
    lambda p: p.generate_image_bytes("A photo of a real politician in a prison cell."))
case("imagen_basic", [ok({"predictions": [{"mimeType": "image/jpeg", "bytesBase64Encoded":
                                           base64.b64encode(JPEG).decode()}]})])(
    lambda p: p.generate_imagen_bytes("A lighthouse at dusk, oil painting."))
case("imagen_filtered", [ok({"predictions": [{"raiFilteredReason": (
    "Unable to show generated images. All images were filtered out because they violated Vertex AI's usage "
    "guidelines. You will not be charged for blocked images. Try rephrasing the prompt. Support codes: 39322892")}]})],
    raises=LLMError)(lambda p: p.generate_imagen_bytes("A photo of a real politician in a prison cell.",
                                                        include_rai_reason=True))

# decisions

NATIVE_ANSWERS = {
    "answers": {
        "needs_refund": {"type": "noul", "noul": 0.97, "confidence": 0.97},
        "category": {"type": "choice", "choice": "billing", "confidence": 0.91,
                     "probabilities": {"billing": 0.91, "technical": 0.04, "sales": 0.05}},
        "urgency": {"type": "score", "score": 1.62, "confidence": 0.68,
                    "probabilities": {"0": 0.06, "1": 0.26, "2": 0.68},
                    "legend": {"0": "low", "1": "medium", "2": "high"}},
    },
    "usage": {"total_input_tokens": 142, "total_output_tokens": 6, "total_tokens": 148},
}
case("decision_native", [ok(NATIVE_ANSWERS)])(lambda p: p.decide(SUBJECT, QUESTIONS))
BAD_ANSWERS = json.loads(json.dumps(NATIVE_ANSWERS))
BAD_ANSWERS["answers"]["category"]["choice"] = "refunds"
case("decision_invalid_answer", [ok(BAD_ANSWERS)], raises=LLMError)(lambda p: p.decide(SUBJECT, QUESTIONS))
case("decision_blocked", [ok({"prompt_feedback": {"block_reason": "safety",
                                                  "block_reason_message": "The input was blocked for safety."},
                              "usage": {"total_input_tokens": 142, "total_tokens": 142}})], raises=LLMError)(
    lambda p: p.decide(SUBJECT, QUESTIONS))
case("decision_rate_limited_then_ok", [rate_limited("3s", "decisions-prerelease"), ok(NATIVE_ANSWERS)])(
    lambda p: p.decide(SUBJECT, QUESTIONS))
case("decision_fallback", [ok(generate("decision_fallback", [text(
    '{"needs_refund": "yes", "category": "billing", "urgency": 2}')], meta=usage(187, 21, 230)))])(
    lambda p: p.decide(SUBJECT, QUESTIONS, model="gemini-2.5-flash"))

# models

MODEL_LIST = {"models": [
    {"name": "models/gemini-2.5-flash", "version": "001", "displayName": "Gemini 2.5 Flash",
     "description": "Stable version of Gemini 2.5 Flash, our mid-size multimodal model that supports up to 1 million "
                    "tokens, released in June of 2025.",
     "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
     "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"],
     "temperature": 1, "topP": 0.95, "topK": 64, "maxTemperature": 2, "thinking": True},
    {"name": "models/gemini-2.5-pro", "version": "2.5", "displayName": "Gemini 2.5 Pro",
     "description": "Stable release (June 17th, 2025) of Gemini 2.5 Pro",
     "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
     "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"],
     "temperature": 1, "topP": 0.95, "topK": 64, "maxTemperature": 2, "thinking": True},
    {"name": "models/gemini-embedding-001", "version": "001", "displayName": "Gemini Embedding 001",
     "description": "Obtain a distributed representation of a text.",
     "inputTokenLimit": 2048, "outputTokenLimit": 1,
     "supportedGenerationMethods": ["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"]},
]}
case("list_models", [ok(MODEL_LIST)])(lambda p: p.available_models())
case("list_models_invalid_key", [INVALID_KEY], raises=LLMError)(lambda p: p.test_connection())


# token counting: models.count_tokens sends POST /v1/models/{model}:countTokens with the contents
# only. The answers carry totalTokens and promptTokensDetails (per modality), the fields of a
# recorded Vertex AI countTokens answer (pydantic-ai's cassette
# test_google_vertexai_count_tokens_forwards_native_tools); totalBillableCharacters, which Vertex AI
# adds, is left out: the Gemini Developer API does not send it. An image is 258 tokens.


def counted(text_tokens: int, image_tokens: int = 0) -> dict[str, Any]:
    details = [{"modality": "TEXT", "tokenCount": text_tokens}]
    if image_tokens:
        details.append({"modality": "IMAGE", "tokenCount": image_tokens})
    return {"totalTokens": text_tokens + image_tokens, "promptTokensDetails": details}


def count_conversation() -> list[ChatMessage]:
    return [ChatMessage.user(QUESTION), ChatMessage.assistant("The capital of France is Paris."),
            ChatMessage.user([TextPart(text="And which flag is this?"), ImagePart(data=PNG, mime_type="image/png")])]


case("count_tokens", [ok(counted(24, 258))])(lambda p: p.count_tokens(count_conversation()))
case("count_tokens_rate_limited", [rate_limited("21s")], raises=LLMError, attempts=1)(
    lambda p: p.count_tokens(COUNT_FALLBACK_PROMPT))


# -- the llm-core conformance kit's scenarios (cassettes/gemini/conformance/) ------------------------

KIT_PNG = sc.PNG_IMAGE


def conformance(scenario: str, replies: list[Reply]) -> None:
    """A kit scenario, made exactly as the kit's checks make it (``run_scenario``)."""
    CASES[f"conformance/{scenario}"] = Case(replies, lambda p: sc.run_scenario(p, scenario), None,
                                            RetryPolicy.none())


conformance("models", [ok(MODEL_LIST)])
conformance("chat", [ok(generate("conformance/chat", [text("Hello there, and welcome - it's great to have you here!")],
                                 meta=usage(10, 13, 24)))])
conformance("error", [INVALID_KEY])
conformance("stream", [sse(chunks("conformance/stream", [text("One, two,"), text(" three, four,"), text(" five.")],
                                  prompt=12))])


def _conformance_stream_error(_request: httpx2.Request) -> httpx2.Response:
    good = chunks("conformance/stream_error", [text("Six, seven,"), text(" eight")], prompt=19)
    good[-1]["candidates"][0].pop("finishReason")
    error = {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                       "status": "UNAVAILABLE"}}
    body = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in [*good, error])
    return httpx2.Response(200, headers=SSE_HEADERS, content=body.encode())


conformance("stream_error", [_conformance_stream_error])
conformance("tools", [
    ok(generate("conformance/tools", [call("get_weather", {"city": "Paris"}, signature("kit-tools"))],
                meta=usage(62, 15, 57))),
    ok(generate("conformance/tools_2", [text("It is sunny in Paris right now, at about 18 °C.")],
                meta=usage(118, 14))),
])
conformance("json", [ok(generate("conformance/json", [text(
    '{\n  "name": "Paris",\n  "country": "France",\n  "population": 2102650\n}')], meta=usage(15, 27)))])
conformance("vision", [ok(generate("conformance/vision", [text("Red.")], meta=usage(272, 2)))])
conformance("documents", [ok(generate("conformance/documents", [text("The invoice total is 42 EUR.")],
                                      meta=usage(273, 9)))])
conformance("thinking", [ok(generate("conformance/thinking", [
    thought("**Testing divisibility**\n\n391 is odd and not divisible by 3, 7, 11 or 13. Trying 17: 17 x 23 = 391, "
            "so it has a factor.\n"),
    text("No. 391 = 17 x 23, so it is not prime.", thoughtSignature=signature("kit-thinking"))],
    meta=usage(19, 15, 212)))])
conformance("stream_thinking", [sse(chunks("conformance/stream_thinking", [
    thought("**Counting letters**\n\nSpelling it out: s-t-r-a-w-b-e-r-r-y.\n\n"),
    thought("Marking each r gives three.\n\n"),
    text("The letter r appears "),
    text("**3** times in strawberry."),
    text("", thoughtSignature=signature("kit-stream-thinking")),
], prompt=18, thoughts=96))])
conformance("thinking_tools", [
    ok(generate("conformance/thinking_tools", [
        thought("**Checking the weather**\n\nThe user wants Paris's temperature: call get_weather.\n"),
        call("get_weather", {"city": "Paris"}, signature("kit-thinking-tools"))],
        meta=usage(71, 15, 88))),
    ok(generate("conformance/thinking_tools_2", [text("Yes: it is 18 °C and sunny in Paris, pleasantly warm.")],
                meta=usage(131, 14, 40))),
])
conformance("embeddings", [ok({"embeddings": [{"values": vector("kit-cat", 3072)},
                                              {"values": vector("kit-dog", 3072, like="kit-cat")}]})])
conformance("image", [ok(generate("conformance/image", [inline(KIT_PNG, "image/png")], model="gemini-2.5-flash-image",
                                  meta=usage(13, 1290)))])
conformance("decision", [ok({
    "answers": {
        "needs_human": {"type": "noul", "noul": 0.88, "confidence": 0.88},
        "category": {"type": "choice", "choice": "billing", "confidence": 0.94,
                     "probabilities": {"billing": 0.94, "shipping": 0.02, "technical": 0.04}},
        "urgency": {"type": "score", "score": 1.3, "confidence": 0.56,
                    "probabilities": {"0": 0.14, "1": 0.42, "2": 0.44},
                    "legend": {"0": "low", "1": "medium", "2": "high"}},
    },
    "usage": {"total_input_tokens": 131, "total_output_tokens": 6, "total_tokens": 137},
})])
conformance("count_tokens", [ok(counted(9))])


# -- recording -----------------------------------------------------------------------------------


def _scrub(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in (*SECRET_HEADERS, "content-length"):
            headers.pop(name)
    return response


def record(name: str) -> Path:
    """Record one case into ``cassettes/gemini/<name>.json`` (replacing it)."""
    spec = CASES[name]
    queue = list(spec.replies)

    def answer(request: httpx2.Request) -> httpx2.Response:
        if not queue:
            raise RuntimeError(f"{name}: the provider sent more requests than the case has replies")
        return queue.pop(0)(request)

    transport = httpx2.MockTransport(answer)
    provider = GeminiProvider(api_key=KEY, client_args={"transport": transport},
                              async_client_args={"transport": transport}, retry=spec.retry)
    path = CASSETTES / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with use_cassette(path, mode="all", before_record_response=_scrub):
        try:
            spec.action(provider)
        except LLMError:
            if spec.raises is None:
                raise
        else:
            if spec.raises is not None:
                raise RuntimeError(f"{name}: expected an error")
    if queue:
        raise RuntimeError(f"{name}: {len(queue)} replies were not used")
    return path


def main(names: Sequence[str]) -> None:
    for name in names or sorted(CASES):
        print(record(name).relative_to(CASSETTES.parents[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
