"""Built-in and custom tools as call options, through the real SDKs on a mock transport: features
per model, refusals before anything is sent, routing, custom (freeform) tool calls in calls,
streams and their next turn, and answers that hold only non-text items.

The custom tool answers are written from the installed ``openai`` SDK's types
(``ResponseCustomToolCall``: ``id``, ``call_id``, ``name``, ``input``; the
``response.custom_tool_call_input.delta/done`` events; ``ResponseReasoningItem``) around the
response envelope the other OpenAI tests use; the web search item is
``ResponseFunctionWebSearch``."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import httpx2
import pytest

from core_gemini_plugin.plugin import SPEC as GEMINI_SPEC
from core_openai_plugin.plugin import SPEC as OPENAI_SPEC
from llm_core.builtin_tools import CodeExecution, FileSearch, GoogleMaps, RemoteMCP, UrlContext, WebSearch
from llm_core.errors import InvalidInputError, UnsupportedFeatureError
from llm_core.messages import ChatMessage
from llm_core.pricing import Prices
from llm_core.registry import Registry
from llm_core.responses import Usage
from llm_core.routing import Router
from llm_core.tools import Grammar, ToolSpec
from tests.builtin.conftest import Runner
from tests.reliability import upstreams as up

KEY = "test-key-not-a-secret"
GRAMMAR = Grammar(syntax="regex", definition=r"^\d+ [+*-] \d+$")
CALC = ToolSpec.custom("calc", "Evaluate one arithmetic operation.", grammar=GRAMMAR)
WEATHER = ToolSpec(name="weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
REASONING = {"id": "rs_custom_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAAABpCustomToolSketch"}
CUSTOM_CALL = {
    "id": "ctc_custom_1",
    "type": "custom_tool_call",
    "call_id": "call_custom_1",
    "name": "calc",
    "input": "6544 * 65464",
}
SEARCH = {
    "id": "ws_only_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "llm-core"},
}


class Wire:
    """A mock transport answering each request with the next reply; keeps what was sent."""

    def __init__(self, *replies: str | dict[str, Any]) -> None:
        self.replies = list(replies)
        self.sent: list[Any] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert self.replies, f"unexpected request {request.method} {request.url}"
        self.sent.append(json.loads(request.read()))
        reply = self.replies.pop(0)
        if isinstance(reply, dict):
            return httpx2.Response(200, json=reply)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=reply.encode())

    def openai(self, **options: Any) -> Any:
        from core_openai_plugin.provider import OpenAIProvider

        return OpenAIProvider(api_key=KEY, client_args={"transport": httpx2.MockTransport(self)}, **options)

    def gemini(self) -> Any:
        from core_gemini_plugin.provider import GeminiProvider

        transport = httpx2.MockTransport(self)
        return GeminiProvider(
            api_key=KEY, client_args={"transport": transport}, async_client_args={"transport": transport}
        )


def sse(*events: dict[str, Any]) -> str:
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
        for n, event in enumerate(events)
    )


def custom_call_stream() -> str:
    """The stream of a gpt-5 answer holding a reasoning item and a custom tool call."""
    added = {**CUSTOM_CALL, "input": ""}
    return sse(
        {
            "type": "response.created",
            "response": up.openai_response([], status="in_progress", model="gpt-5", usage=False),
        },
        {"type": "response.output_item.added", "output_index": 0, "item": {**REASONING, "encrypted_content": None}},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.added", "output_index": 1, "item": added},
        {
            "type": "response.custom_tool_call_input.delta",
            "output_index": 1,
            "item_id": "ctc_custom_1",
            "delta": "6544 * ",
        },
        {
            "type": "response.custom_tool_call_input.delta",
            "output_index": 1,
            "item_id": "ctc_custom_1",
            "delta": "65464",
        },
        {
            "type": "response.custom_tool_call_input.done",
            "output_index": 1,
            "item_id": "ctc_custom_1",
            "input": "6544 * 65464",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": CUSTOM_CALL},
        {"type": "response.completed", "response": up.openai_response([REASONING, CUSTOM_CALL], model="gpt-5")},
    )


# -- custom (freeform) tools ----------------------------------------------------------------------


async def test_a_reasoning_and_custom_tool_call_answer_returns_its_call(run: Runner) -> None:
    wire = Wire(up.openai_response([REASONING, CUSTOM_CALL], model="gpt-5"))
    answer = await run(
        wire.openai(), lambda p: p.chat_completion_with_tools("6544 times 65464?", [CALC], model="gpt-5")
    )
    (call,) = answer.tool_calls
    assert (call.id, call.name, call.input, call.arguments, call.is_custom) == (
        "call_custom_1",
        "calc",
        "6544 * 65464",
        {},
        True,
    )
    assert answer.finish_reason == "tool_calls"
    assert answer.metadata["reasoning_items"] == [REASONING]
    assert wire.sent[0]["tools"] == [
        {
            "type": "custom",
            "name": "calc",
            "description": "Evaluate one arithmetic operation.",
            "format": {"type": "grammar", "syntax": "regex", "definition": GRAMMAR.definition},
        }
    ]


async def test_a_streamed_custom_tool_call(run: Runner) -> None:
    wire = Wire(custom_call_stream())
    events = await run(
        wire.openai(),
        lambda p: p.stream_chat_completion("6544 times 65464?", model="gpt-5", tools=[CALC], tool_choice="calc"),
    )
    meta = events[-2].metadata
    assert meta is not None and [c.input for c in meta.tool_calls or []] == ["6544 * 65464"]
    assert meta.stop_reason == "tool_calls" and meta.extra["reasoning_items"] == [REASONING]
    assert wire.sent[0]["tool_choice"] == {"type": "custom", "name": "calc"}


async def test_the_next_turn_sends_the_custom_call_and_its_output_back(run: Runner) -> None:
    wire = Wire(up.openai_response([REASONING, CUSTOM_CALL], model="gpt-5"), up.openai_text("428,396,416"))
    provider = wire.openai()
    first = await run(provider, lambda p: p.chat_completion_with_tools("6544 times 65464?", [CALC], model="gpt-5"))
    turns = [ChatMessage.user("6544 times 65464?"), first.to_message(), ChatMessage.tool("call_custom_1", "428396416")]
    await run(provider, lambda p: p.chat_completion_with_tools(turns, [CALC], model="gpt-5"))
    assert wire.sent[1]["input"][1:] == [
        REASONING,
        {"type": "custom_tool_call", "call_id": "call_custom_1", "name": "calc", "input": "6544 * 65464"},
        {"type": "custom_tool_call_output", "call_id": "call_custom_1", "output": "428396416"},
    ]


def test_a_conversation_runs_a_custom_tool_with_its_text() -> None:
    seen: list[str] = []

    def calc(expression: str) -> str:
        seen.append(expression)
        return "428396416"

    wire = Wire(up.openai_response([REASONING, CUSTOM_CALL], model="gpt-5"), up.openai_text("It is 428,396,416."))
    tool = ToolSpec.custom("calc", "Evaluate one arithmetic operation.", grammar=GRAMMAR, handler=calc)
    chat = wire.openai().conversation(tools=[tool], model="gpt-5")
    reply = chat.send("6544 times 65464?")
    assert seen == ["6544 * 65464"] and reply.content == "It is 428,396,416."
    assert wire.sent[1]["input"][-1] == {
        "type": "custom_tool_call_output",
        "call_id": "call_custom_1",
        "output": "428396416",
    }


def test_a_gemini_turn_after_openai_leaves_custom_calls_out() -> None:
    """A conversation that falls back to Gemini goes on without what only OpenAI takes."""
    from core_gemini_plugin.contents import map_contents
    from llm_core.tools import ToolCall

    call = ToolCall(id="call_custom_1", name="calc", input="6544 * 65464")
    turns = [
        ChatMessage.user("6544 times 65464?"),
        ChatMessage.assistant("", [call]),
        ChatMessage.tool("call_custom_1", "428396416"),
        ChatMessage.user("And now?"),
    ]
    assert map_contents(turns) == [
        {"role": "user", "parts": [{"text": "6544 times 65464?"}]},
        {"role": "user", "parts": [{"text": "And now?"}]},
    ]


# -- answers with only non-text items ------------------------------------------------------------


async def test_a_completed_answer_of_only_a_web_search_item_is_an_answer(run: Runner) -> None:
    wire = Wire(up.openai_response([SEARCH], model="gpt-5"))
    answer = await run(
        wire.openai(), lambda p: p.chat_completion("Search.", model="gpt-5", builtin_tools=["web_search"])
    )
    assert answer.content == "" and answer.metadata["output_items"] == [SEARCH]
    assert [c.queries for c in answer.builtin_tool_calls] == [["llm-core"]]


# -- refused before anything is sent --------------------------------------------------------------

Call = Callable[[Any], Any]
REFUSED: dict[str, tuple[str, Call, type[Exception], str]] = {
    "custom tool on Gemini": (
        "gemini",
        lambda p: p.chat_completion_with_tools("Hi", [CALC]),
        UnsupportedFeatureError,
        "custom_tools",
    ),
    "custom tool on o3": (
        "openai",
        lambda p: p.chat_completion_with_tools("Hi", [CALC], model="o3"),
        UnsupportedFeatureError,
        "custom_tools",
    ),
    "URL context on OpenAI": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=[UrlContext()]),
        UnsupportedFeatureError,
        "url_context",
    ),
    "Maps on OpenAI": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=[GoogleMaps()]),
        UnsupportedFeatureError,
        "google_maps",
    ),
    "MCP on Gemini": (
        "gemini",
        lambda p: p.chat_completion(
            "Hi", builtin_tools=[RemoteMCP(server_label="x", server_url="https://example.org/mcp")]
        ),
        UnsupportedFeatureError,
        "remote_mcp",
    ),
    "Maps on Gemini 3": (
        "gemini",
        lambda p: p.chat_completion("Hi", model="gemini-3-flash-preview", builtin_tools=["google_maps"]),
        UnsupportedFeatureError,
        "google_maps",
    ),
    "search and functions on Gemini 2.5": (
        "gemini",
        lambda p: p.chat_completion_with_tools("Hi", [WEATHER], builtin_tools=[WebSearch()]),
        InvalidInputError,
        "Gemini 3 models can",
    ),
    "search and a JSON answer on Gemini 2.5": (
        "gemini",
        lambda p: p.generate_json("Name a city.", builtin_tools=[WebSearch()]),
        InvalidInputError,
        "built-in tools and a JSON answer",
    ),
    "OpenAI settings on Gemini": (
        "gemini",
        lambda p: p.chat_completion("Hi", builtin_tools=[WebSearch(allowed_domains=["example.org"])]),
        InvalidInputError,
        "allowed_domains",
    ),
    "web search with minimal reasoning": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=[WebSearch()], thinking={"level": "minimal"}),
        InvalidInputError,
        "minimal reasoning",
    ),
    "an unknown built-in tool": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=["web_browse"]),
        InvalidInputError,
        "unknown built-in tool 'web_browse'",
    ),
    "a tool twice": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=[WebSearch(), "web_search"]),
        InvalidInputError,
        "twice",
    ),
    "a file search without stores": (
        "openai",
        lambda p: p.chat_completion("Hi", builtin_tools=[{"type": "file_search", "stores": []}]),
        InvalidInputError,
        "stores",
    ),
    "not a list": (
        "gemini",
        lambda p: p.chat_completion("Hi", builtin_tools=WebSearch()),
        InvalidInputError,
        "must be a list",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_bad_combinations_are_refused_with_no_request(case: str, run: Runner) -> None:
    provider_name, call, error, words = REFUSED[case]
    wire = Wire()
    provider = wire.openai() if provider_name == "openai" else wire.gemini()
    with pytest.raises(error, match=words):
        await run(provider, call)
    assert wire.sent == []


def test_a_custom_tool_takes_text_not_parameters() -> None:
    with pytest.raises(ValueError, match="custom tool takes text"):
        ToolSpec(name="calc", kind="custom", parameters={"type": "object", "properties": {"x": {"type": "string"}}})


# -- features per model, routing ---------------------------------------------------------------------


def both() -> Registry:
    registry = Registry(strict=False)
    registry.register(GEMINI_SPEC)
    registry.register(OPENAI_SPEC)
    return registry


def test_the_registry_finds_both_providers_for_search_and_code() -> None:
    registry = both()
    for feature in ("web_search", "code_execution"):
        assert {spec.identifier for spec in registry.supporting(feature)} == {"gemini", "openai"}
    assert [s.identifier for s in registry.supporting("url_context")] == ["gemini"]
    assert [s.identifier for s in registry.supporting("remote_mcp")] == ["openai"]
    assert [s.identifier for s in registry.supporting("custom_tools")] == ["openai"]
    assert [s.identifier for s in registry.supporting("file_search", model="gemini-2.5-pro")] == ["gemini"]


@pytest.mark.parametrize(
    ("tools", "answered_by"),
    [
        ([WebSearch()], "gemini"),
        ([RemoteMCP(server_label="wiki", server_url="https://mcp.example.org")], "openai"),
        ([UrlContext(), CodeExecution()], "gemini"),
        ([FileSearch(stores=["vs_1"]), "image_generation"], "openai"),
    ],
)
async def test_a_router_sends_a_builtin_tool_call_to_a_provider_that_runs_it(
    tools: list[Any], answered_by: str, run: Runner
) -> None:
    gemini = Wire(up.gemini_text("Sunny."))
    openai = Wire(up.openai_text("Sunny."))
    config = {
        "gemini": {
            "api_key": KEY,
            "client_args": {"transport": httpx2.MockTransport(gemini)},
            "async_client_args": {"transport": httpx2.MockTransport(gemini)},
        },
        "openai": {"api_key": KEY, "client_args": {"transport": httpx2.MockTransport(openai)}},
    }
    router = Router(both(), ["chat"], prefer=["gemini", "openai"], config=config)  # Gemini first when it can
    answer = await run(router, lambda r: r.chat_completion("Weather?", builtin_tools=tools))
    assert answer.provider == answered_by
    sent = (gemini if answered_by == "gemini" else openai).sent
    assert len(sent) == 1 and (openai if answered_by == "gemini" else gemini).sent == []
    found = router.candidates("chat_completion", (("Weather?",), {"builtin_tools": tools}))
    assert found[0].spec.identifier == answered_by


# -- cost ----------------------------------------------------------------------------------------------


async def test_the_cost_includes_the_web_search_fee(run: Runner) -> None:
    from core_openai_plugin.models import CHAT_MODELS, TOOL_FEES

    wire = Wire(
        up.openai_response([SEARCH, SEARCH | {"id": "ws_only_2"}, up.openai_message("Found.")], model="gpt-5.4")
    )
    answer = await run(
        wire.openai(), lambda p: p.chat_completion("Search.", model="gpt-5.4", builtin_tools=[WebSearch()])
    )
    prices = next(model.prices for model in CHAT_MODELS if model.id == "gpt-5.4")
    assert prices is not None
    tokens = prices.cost(answer.usage.model_copy(update={"tool_uses": None}))
    assert answer.usage.tool_uses == {"web_search": 2}
    assert tokens is not None and answer.usage.cost == tokens + 2 * Decimal(TOOL_FEES["web_search"])


def test_a_tool_without_a_listed_fee_makes_the_cost_unknown() -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=100, tool_uses={"web_search": 1})
    assert Prices.of(input="1", output="2").cost(usage) is None  # the search fee is not known
    assert Prices.of(input="1", output="2", web_search="0.01").cost(usage) == Decimal("0.0012") + Decimal("0.01")
    free = Usage(prompt_tokens=1000, tool_uses={"url_context": 3})  # billed as tokens only
    assert Prices.of(input="1").cost(free) == Decimal("0.001")


def test_gemini_3_bills_search_per_query_and_2_5_per_answer() -> None:
    from core_gemini_plugin.models import model_info

    for model, fee in (("gemini-2.5-flash", "0.035"), ("gemini-3-flash-preview", "0.014")):
        info = model_info(model)
        assert info is not None and info.prices is not None and info.prices.web_search == Decimal(fee)
        assert info.prices.code_execution == 0


# -- conversations --------------------------------------------------------------------------------------


def test_a_conversation_with_web_search_replays_its_items_and_saves_the_option() -> None:
    from llm_core.conversation import Conversation

    message = up.openai_message("Sunny.", "msg_1")
    wire = Wire(up.openai_response([SEARCH, message], model="gpt-5"), up.openai_text("Also sunny."))
    provider = wire.openai()
    chat = provider.conversation(model="gpt-5", builtin_tools=[WebSearch(context_size="low")])
    chat.send("Weather in Paris?")
    saved = chat.to_json()
    resumed = Conversation.from_json(saved, provider=provider)
    resumed.send("And in Lyon?")
    assert wire.sent[1]["tools"] == [{"type": "web_search", "search_context_size": "low"}]
    assert wire.sent[1]["input"][1] == SEARCH  # the search item goes back before the answer it led to
    assert wire.sent[1]["input"][2] == {"role": "assistant", "content": "Sunny."}


def test_a_router_conversation_goes_to_a_provider_that_runs_its_builtin_tools() -> None:
    gemini = Wire(up.gemini_text("It reads: hello."))
    openai = Wire()
    config = {
        "gemini": {"api_key": KEY, "client_args": {"transport": httpx2.MockTransport(gemini)}},
        "openai": {"api_key": KEY, "client_args": {"transport": httpx2.MockTransport(openai)}},
    }
    router = Router(both(), ["chat"], prefer=["openai", "gemini"], config=config)
    reply = router.conversation(builtin_tools=[UrlContext()]).send("What does https://example.org say?")
    assert reply.content == "It reads: hello." and openai.sent == []
    assert gemini.sent[0]["tools"] == [{"urlContext": {}}]


# -- the Chat Completions dialect ---------------------------------------------------------------------


def chat_endpoint(wire: Wire, preset: str = "openai") -> Any:
    registry = Registry.discover()
    transport = httpx2.MockTransport(wire)
    registry.add_endpoint("chat", plugin="openai", preset=preset, api_key=KEY, client_args={"transport": transport})
    return registry.get("chat")


def test_a_search_model_s_url_citations_are_citations() -> None:
    text = "The 2028 Summer Olympics will be in Los Angeles."
    start = text.index("Los Angeles")
    note = {
        "type": "url_citation",
        "url_citation": {"start_index": start, "end_index": len(text) - 1, "title": "LA28", "url": "https://la28.org"},
    }
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-search-preview",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text, "annotations": [note], "refusal": None}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}  # fmt: skip
    wire = Wire(body)
    answer = chat_endpoint(wire).chat_completion("Where?", model="gpt-4o-search-preview", builtin_tools=["web_search"])
    (citation,) = answer.citations or []
    assert (citation.url, citation.title, citation.text) == ("https://la28.org", "LA28", "Los Angeles")
    assert wire.sent[0]["web_search_options"] == {}


@pytest.mark.parametrize(
    ("preset", "tools", "error"),
    [
        ("openai", [CodeExecution()], UnsupportedFeatureError),
        ("openai", [WebSearch(allowed_domains=["example.org"])], InvalidInputError),
        ("ollama", [WebSearch()], UnsupportedFeatureError),
    ],
)
def test_the_chat_completions_dialect_refuses_what_it_cannot_run(preset: str, tools: list[Any], error: type) -> None:
    wire = Wire()
    with pytest.raises(error):
        chat_endpoint(wire, preset).chat_completion("Hi", model="gpt-4o-search-preview", builtin_tools=tools)
    assert wire.sent == []


# -- Gemini grounding without a recording: Maps and file search (shapes of the SDK's GroundingChunk) --


def test_maps_grounding_cites_places_and_counts_its_fee() -> None:
    text = "Try Café Lumen on Rue Neuve."
    chunk = {"maps": {"uri": "https://maps.google.com/?cid=1", "title": "Café Lumen", "placeId": "places/1"}}
    body = up.gemini_content([{"text": text}])
    body["modelVersion"] = "gemini-2.5-flash"
    body["candidates"][0]["groundingMetadata"] = {
        "groundingChunks": [chunk],
        "groundingSupports": [{"segment": {"startIndex": 4, "endIndex": 14, "text": "Café Lumen"},
                               "groundingChunkIndices": [0]}],
    }  # fmt: skip
    wire = Wire(body)
    answer = wire.gemini().chat_completion("Where for coffee?", model="gemini-2.5-flash", builtin_tools=[GoogleMaps()])
    assert wire.sent[0]["tools"] == [{"googleMaps": {}}]
    (place,) = answer.citations or []
    # the segment counts UTF-8 bytes ("é" is two): the span is the characters of "Café Lumen"
    assert (place.tool, place.title, place.start, place.end, place.text) == ("google_maps", "Café Lumen", 4, 14,
                                                                            "Café Lumen")  # fmt: skip
    assert text[place.start : place.end] == "Café Lumen"
    assert [c.tool for c in answer.builtin_tool_calls or []] == ["google_maps"]
    assert answer.usage.tool_uses == {"google_maps": 1}


def test_gemini_file_search_cites_its_documents() -> None:
    body = up.gemini_content([{"text": "The warranty lasts two years."}])
    body["candidates"][0]["groundingMetadata"] = {
        "groundingChunks": [{"retrievedContext": {"title": "warranty.pdf", "text": "two years",
                                                  "documentName": "fileSearchStores/s1/documents/d1"}}],
        "retrievalQueries": ["warranty length"],
    }  # fmt: skip
    wire = Wire(body)
    store = "fileSearchStores/s1"
    answer = wire.gemini().chat_completion(
        "How long is the warranty?", model="gemini-2.5-flash", builtin_tools=[FileSearch(stores=[store], max_results=3)]
    )
    # as the SDK sends it (its converter passes the tool's fields on in their proto names)
    assert wire.sent[0]["tools"] == [{"fileSearch": {"file_search_store_names": [store], "top_k": 3}}]
    (search,) = answer.builtin_tool_calls or []
    assert (search.tool, search.queries) == ("file_search", ["warranty length"])
    assert [(s.title, s.file_id) for s in search.sources] == [("warranty.pdf", "fileSearchStores/s1/documents/d1")]


def test_a_gemini_model_outside_the_catalogue_still_gets_no_openai_tool() -> None:
    from core_gemini_plugin.request_mapper import map_chat_request
    from llm_core.requests import ChatRequest

    request = ChatRequest(messages=[ChatMessage.user("Hi")], model="gemini-next", builtin_tools=[RemoteMCP(
        server_label="x", server_url="https://example.org/mcp")])  # fmt: skip
    with pytest.raises(InvalidInputError, match="Gemini has no built-in remote_mcp tool"):
        map_chat_request(request)


def test_each_built_in_tool_feature_has_exactly_one_option_class() -> None:
    """``features.BUILTIN_TOOLS`` (light, read at start-up) and the option classes of
    ``builtin_tools`` (Pydantic) name the same tools: a tool added to one is added to the other."""
    from typing import get_args

    from llm_core.builtin_tools import AnyBuiltinTool
    from llm_core.features import BUILTIN_TOOLS

    union, _discriminator = get_args(AnyBuiltinTool)
    types = [cls.model_fields["type"].default for cls in get_args(union)]
    assert sorted(types) == sorted(feature.value for feature in BUILTIN_TOOLS)
