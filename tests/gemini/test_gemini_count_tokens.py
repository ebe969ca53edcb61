"""``count_tokens`` through ``models.count_tokens`` (``POST /v1/models/{model}:countTokens``),
replayed through the real SDK, sync and async; what the Gemini Developer API cannot count is
refused before sending; a router falls back for it; observers hear it.

Shapes: the requests are what google-genai 3.6 sends for our calls (recorded by
cassette_author.py); the answers carry ``totalTokens`` and ``promptTokensDetails`` as a recorded
Vertex AI countTokens answer does (see cassette_author.py), and ``cachedContentTokenCount`` is the
field the SDK reads into ``CountTokensResponse.cached_content_token_count``
(``models._CountTokensResponse_from_mldev``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google.genai import types

from core_gemini_plugin.provider import GeminiProvider
from core_gemini_plugin.response_parser import parse_count_tokens
from core_openai_plugin.provider import OpenAIProvider
from llm_core.errors import InvalidInputError, InvalidResponseError, RateLimitError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.messages import ChatMessage, ImagePart, TextPart
from llm_core.registry import Registry
from llm_core.requests import ChatRequest
from llm_core.responses import TokenCount
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.testing.cassettes import use_cassette
from llm_core.tools import ToolSpec
from tests.gemini.gemini_inputs import CASSETTES, COUNT_FALLBACK_PROMPT, KEY, PNG, QUESTION
from tests.gemini.gemini_support import Offline, Runner, cassette, sent_body
from tests.observers.recording import Recorder

WEATHER = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
CONVERSATION = [
    ChatMessage.user(QUESTION),
    ChatMessage.assistant("The capital of France is Paris."),
    ChatMessage.user([TextPart(text="And which flag is this?"), ImagePart(data=PNG, mime_type="image/png")]),
]


def test_count_tokens_sends_the_chat_contents_and_reads_the_total(run: Runner) -> None:
    with cassette("count_tokens") as recorded:
        counted = run("count_tokens", CONVERSATION)
    assert recorded.requests[0].uri.endswith("/v1/models/gemini-2.5-flash:countTokens")
    # the contents mapper of chat, and nothing else: no config reaches the Developer API
    assert sent_body(recorded) == {
        "contents": [
            {"parts": [{"text": QUESTION}], "role": "user"},
            {"parts": [{"text": "The capital of France is Paris."}], "role": "model"},
            {
                "parts": [
                    {"text": "And which flag is this?"},
                    {"inlineData": {"data": base64.b64encode(PNG).decode(), "mime_type": "image/png"}},
                ],
                "role": "user",
            },
        ]
    }
    assert counted == TokenCount(input_tokens=282, model="gemini-2.5-flash", provider="gemini")
    assert recorded.all_played


def test_the_payload_is_the_chat_payload_without_config(provider: GeminiProvider) -> None:
    request = provider.builder.chat(CONVERSATION, feature=Feature.TOKEN_COUNTING)
    chat = provider.map_chat_request(request)
    assert provider.map_count_tokens_request(request) == {"model": "gemini-2.5-flash", "contents": chat["contents"]}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"system": "Be brief."}, "system"),
        ({"tools": [WEATHER]}, "tools"),
        ({"tools": [WEATHER], "tool_choice": "required"}, "tool_choice, tools"),
        ({"thinking": {"budget": 512}}, "thinking"),
        ({"temperature": 0.2, "max_tokens": 10}, "max_tokens, temperature"),
        ({"seed": 7}, "seed"),
    ],
)
def test_what_the_developer_api_cannot_count_is_refused_before_sending(
    offline: Offline, options: dict[str, Any], named: str
) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match=f"Gemini counts only the messages: {named} cannot") as raised:
        provider.count_tokens(QUESTION, **options)
    assert "Vertex AI only" in str(raised.value) and raised.value.provider == "gemini"
    with pytest.raises(InvalidInputError, match=named):
        Runner(provider, "async")("count_tokens", QUESTION, **options)
    assert sent == []


def test_models_that_do_not_count_are_refused_before_sending(offline: Offline) -> None:
    provider, sent = offline()
    for model in ("gemini-embedding-001", "imagen-4.0-generate-001"):
        with pytest.raises(UnsupportedFeatureError, match="token_counting"):
            provider.count_tokens(QUESTION, model=model)
    assert sent == []


def _answer(body: str) -> Any:
    return lambda _request: httpx2.Response(200, headers={"content-type": "application/json"}, content=body.encode())


def test_cached_content_tokens_are_read_through_the_sdk(offline: Offline) -> None:
    body = {"totalTokens": 1310, "cachedContentTokenCount": 1152,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1310}],
            "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 1152}]}
    provider, sent = offline(_answer(json.dumps(body)))
    counted = provider.count_tokens("Where is poetry?")
    assert (counted.input_tokens, counted.cached_tokens) == (1310, 1152)
    assert len(sent) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"promptTokensDetails": [{"modality": "TEXT", "tokenCount": 5}]}', "no valid totalTokens"),
        ("{}", "no valid totalTokens"),
        ('{"totalTokens": "many"}', "could not be read"),  # the SDK's CountTokensResponse refuses it
        ("<html>Gateway</html>", "not JSON"),
    ],
)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_answer_that_is_no_count_is_an_invalid_response(offline: Offline, body: str, says: str, mode: str) -> None:
    provider, sent = offline(_answer(body))
    with pytest.raises(InvalidResponseError, match=says):
        Runner(provider, mode)("count_tokens", QUESTION)
    assert len(sent) == 1  # never a success with 0 tokens, and not retried on the same provider


def test_parser_rejects_negative_and_keeps_cached_tokens() -> None:
    request = ChatRequest(messages=[ChatMessage.user("hi")], model="gemini-2.5-flash")
    cached = parse_count_tokens(types.CountTokensResponse(total_tokens=40, cached_content_token_count=32), request)
    assert (cached.input_tokens, cached.cached_tokens, cached.provider) == (40, 32, "gemini")
    with pytest.raises(InvalidResponseError, match="totalTokens"):
        parse_count_tokens(types.CountTokensResponse(total_tokens=-1), request)
    with pytest.raises(InvalidResponseError, match="cachedContentTokenCount"):
        parse_count_tokens(types.CountTokensResponse(total_tokens=4, cached_content_token_count=-2), request)


# -- a router falls back: Gemini is rate limited, OpenAI counts -----------------------------------


@pytest.fixture
def both_cassettes(tmp_path: Path) -> Iterator[Any]:
    """Gemini's 429 (count_tokens_rate_limited) then OpenAI's count (count_tokens_fallback)."""
    files = (CASSETTES / "count_tokens_rate_limited.json", CASSETTES.parent / "openai/count_tokens_fallback.json")
    merged = [i for f in files for i in json.loads(f.read_text(encoding="utf-8"))["interactions"]]
    path = tmp_path / "fallback.json"
    path.write_text(json.dumps({"version": 1, "interactions": merged}), encoding="utf-8")
    with use_cassette(path, mode="none", allow_playback_repeats=True) as recorded:
        yield recorded


def _router() -> Any:
    registry = Registry(strict=False)
    for built in (GeminiProvider(api_key=KEY, retry=RetryPolicy.none()),
                  OpenAIProvider(api_key="test-key", retry=RetryPolicy.none())):
        spec = built.provider_spec
        registry.register(ProviderSpec(spec.identifier, spec.name, spec.features, lambda _p=built, **_c: _p,
                                       spec.models, spec.default_model))
    return registry.router("token_counting", prefer=["gemini", "openai"])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_router_falls_back_to_the_next_provider_that_counts(both_cassettes: Any, mode: str) -> None:
    router = _router()
    if mode == "sync":
        counted = router.count_tokens(COUNT_FALLBACK_PROMPT)
    else:
        counted = asyncio.run(router.aio.count_tokens(COUNT_FALLBACK_PROMPT))
    assert (counted.provider, counted.model, counted.input_tokens) == ("openai", "gpt-5.4-mini", 8)
    assert router.last_provider == "openai"
    hosts = [request.host for request in both_cassettes.requests]
    assert hosts == ["generativelanguage.googleapis.com", "api.openai.com"]


# -- observers --------------------------------------------------------------------------------------


@pytest.mark.usefixtures("fresh_registry")
def test_observers_hear_count_tokens(run: Runner) -> None:
    recorder = Recorder()
    Registry().add_observer(recorder)
    with cassette("count_tokens"):
        run("count_tokens", CONVERSATION)
    assert [kind for kind, _ in recorder.events] == ["before", "after"]
    (_, before), (_, after) = recorder.events
    assert before["operation"] == after["operation"] == "count_tokens"
    assert "token_counting" in before["features"] and "vision" in before["features"]  # the image part
    assert before["provider"] == "gemini" and before["model"] == "gemini-2.5-flash"
    assert KEY not in json.dumps([before, after], default=str)


@pytest.mark.usefixtures("fresh_registry")
def test_observers_hear_a_failed_count() -> None:
    recorder = Recorder()
    Registry().add_observer(recorder)
    with cassette("count_tokens_rate_limited"), pytest.raises(RateLimitError):
        GeminiProvider(api_key=KEY, retry=RetryPolicy.none()).count_tokens(COUNT_FALLBACK_PROMPT)
    [(kind, event)] = [(k, e) for k, e in recorder.events if k != "before"]
    assert kind == "error" and event["operation"] == "count_tokens"
