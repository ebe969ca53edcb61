"""Real Gemini traffic with built-in tools (Google Search, URL context, code execution) replayed
through the plugin and the real ``google-genai`` SDK, sync and async, calls and streams: the
grounding comes back as citations and tool runs, the metadata and every part are kept, and the
code the model ran goes back in the next turn."""

from __future__ import annotations

from typing import Any

from llm_core.builtin_tools import CodeExecution, UrlContext, WebSearch
from llm_core.messages import ChatMessage, Role
from llm_core.responses import CompletionResponse
from llm_core.streaming import StreamEventType
from llm_core.tools import ToolSpec
from tests.builtin.conftest import Runner
from tests.builtin.recordings import (
    GEMINI,
    GEMINI_CODE,
    VERTEX,
    Recording,
    gemini_provider,
    needs_recordings,
    vertex_provider,
)

pytestmark = needs_recordings

#: Recorded part keys → the keys the plugin keeps them under for replay.
PART_KEYS = {"text": "text", "executableCode": "executable_code", "codeExecutionResult": "code_execution_result"}


def candidate_of(body: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = body["candidates"][0]
    return found


def assert_parts_kept(recorded: list[dict[str, Any]], kept: list[dict[str, Any]]) -> None:
    """Every recorded part is kept for replay, its content and thought signature with it."""
    assert len(kept) == len(recorded)
    for part, saved in zip(recorded, kept, strict=True):
        (key,) = [k for k in part if k in PART_KEYS]
        assert saved[PART_KEYS[key]] == part[key]
        assert ("thought_signature" in saved) == ("thoughtSignature" in part)


def assert_grounding_kept(recorded: dict[str, Any], answer: CompletionResponse | Any, metadata: dict[str, Any]) -> None:
    """The grounding metadata is kept, and each support's sources are citations of its span."""
    kept = metadata["grounding_metadata"]
    assert len(kept.get("grounding_chunks", [])) == len(recorded.get("groundingChunks", []))
    assert len(kept.get("grounding_supports", [])) == len(recorded.get("groundingSupports", []))
    assert kept.get("web_search_queries") == recorded.get("webSearchQueries")
    assert ("search_entry_point" in kept) == ("searchEntryPoint" in recorded)
    chunks = recorded.get("groundingChunks", [])
    expected = [
        (chunks[i]["web"]["uri"], chunks[i]["web"]["title"], support["segment"]["text"])
        for support in recorded.get("groundingSupports", [])
        for i in support["groundingChunkIndices"]
    ]
    assert [(c.url, c.title, c.text) for c in answer.citations or []] == expected


async def test_google_search_two_turns(run: Runner) -> None:
    record = Recording(GEMINI / "test_google_model_web_search_tool.yaml")
    provider = gemini_provider(record)
    question = "What is the weather in San Francisco today?"
    first = await run(
        provider, lambda p: p.chat_completion(question, model="gemini-2.5-pro", builtin_tools=[WebSearch()])
    )
    assert record.sent[0]["tools"] == record.request(0)["tools"] == [{"googleSearch": {}}]
    candidate = candidate_of(record.response(0))
    assert first.content == "".join(part["text"] for part in candidate["content"]["parts"])
    assert_parts_kept(candidate["content"]["parts"], first.metadata["gemini_parts"])
    grounding = candidate["groundingMetadata"]
    assert_grounding_kept(grounding, first, first.metadata)
    for citation in first.citations or []:
        assert citation.start is not None and first.content[citation.start : citation.end] == citation.text
    (search,) = first.builtin_tool_calls or []
    assert search.tool == "web_search" and search.queries == grounding["webSearchQueries"]
    assert first.usage.tool_uses == {"web_search": 1}  # Gemini 2.5: billed per grounded answer
    usage = record.response(0)["usageMetadata"]
    assert first.usage.prompt_tokens == usage["promptTokenCount"] + usage.get("toolUsePromptTokenCount", 0)

    turns = [ChatMessage.user(question), first.to_message(), ChatMessage.user("how about Mexico City?")]
    second = await run(
        provider, lambda p: p.chat_completion(turns, model="gemini-2.5-pro", builtin_tools=[WebSearch()])
    )
    assert record.all_played
    assert record.sent[1]["contents"] == record.request(1)["contents"]
    assert_grounding_kept(candidate_of(record.response(1))["groundingMetadata"], second, second.metadata)


async def test_google_search_stream(run: Runner) -> None:
    record = Recording(GEMINI / "test_google_model_web_search_tool_stream.yaml")
    question = "What is the weather in San Francisco today?"
    events = await run(
        gemini_provider(record),
        lambda p: p.stream_chat_completion(question, model="gemini-2.5-pro", builtin_tools=[WebSearch()]),
    )
    meta = events[-2].metadata
    assert meta is not None and events[-1].type is StreamEventType.END
    text = "".join(e.text for e in events if e.type is StreamEventType.TOKEN)
    last = candidate_of(record.events(0)[-1])
    assert_grounding_kept(last["groundingMetadata"], meta, meta.extra)
    for citation in meta.citations or []:
        assert citation.start is not None and text[citation.start : citation.end] == citation.text
    assert [c.tool for c in meta.builtin_tool_calls or []] == ["web_search"]
    assert meta.tool_uses == {"web_search": 1}


async def test_url_context_reports_each_url_and_its_citation(run: Runner) -> None:
    record = Recording(GEMINI / "test_google_model_web_fetch_tool.yaml")
    question = "What is the first sentence on the page https://ai.pydantic.dev? Reply with only the sentence."
    answer = await run(
        gemini_provider(record),
        lambda p: p.chat_completion(
            question, model="gemini-2.5-flash", system="You are a helpful chatbot.", builtin_tools=[UrlContext()]
        ),
    )
    assert record.sent[0]["tools"] == record.request(0)["tools"] == [{"urlContext": {}}]
    candidate = candidate_of(record.response(0))
    (read,) = answer.builtin_tool_calls or []
    assert read.tool == "url_context"
    assert read.statuses == {"https://ai.pydantic.dev": "URL_RETRIEVAL_STATUS_SUCCESS"}
    (citation,) = answer.citations or []
    assert (citation.tool, citation.url, citation.start, citation.end) == (
        "url_context",
        "https://ai.pydantic.dev",
        0,
        len(answer.content),
    )
    assert answer.metadata["url_context_metadata"] == {
        "url_metadata": [
            {"retrieved_url": "https://ai.pydantic.dev", "url_retrieval_status": "URL_RETRIEVAL_STATUS_SUCCESS"}
        ]
    }
    assert_parts_kept(candidate["content"]["parts"], answer.metadata["gemini_parts"])
    assert answer.usage.tool_uses is None  # URL context bills tokens only


async def test_code_execution_two_turns_sends_the_code_back(run: Runner) -> None:
    record = Recording(GEMINI_CODE / "test_code_execution.yaml")
    provider = gemini_provider(record)
    question = "What day is today in Utrecht?"
    first = await run(
        provider, lambda p: p.chat_completion(question, model="gemini-3-flash-preview", builtin_tools=[CodeExecution()])
    )
    assert record.sent[0]["tools"] == record.request(0)["tools"] == [{"codeExecution": {}}]
    parts = candidate_of(record.response(0))["content"]["parts"]
    assert_parts_kept(parts, first.metadata["gemini_parts"])
    code = [part["executableCode"] for part in parts if "executableCode" in part]
    results = {
        part["codeExecutionResult"]["id"]: part["codeExecutionResult"]
        for part in parts
        if "codeExecutionResult" in part
    }
    assert [(c.code, c.language, c.outcome) for c in first.builtin_tool_calls or []] == [
        (c["code"], "python", results[c["id"]]["outcome"]) for c in code
    ]
    assert [c.outputs[0].text for c in first.builtin_tool_calls or []] == [results[c["id"]]["output"] for c in code]
    assert first.usage.tool_uses == {"code_execution": len(code)}

    follow_up = record.request(1)["contents"][2]["parts"][0]["text"]
    turns = [ChatMessage.user(question), first.to_message(), ChatMessage.user(follow_up)]
    await run(
        provider, lambda p: p.chat_completion(turns, model="gemini-3-flash-preview", builtin_tools=[CodeExecution()])
    )
    assert record.all_played
    # the model turn goes back part for part, thought signatures included
    assert record.sent[1]["contents"] == record.request(1)["contents"]


async def test_code_execution_stream(run: Runner) -> None:
    record = Recording(GEMINI_CODE / "test_code_execution_stream.yaml")
    question = "what is 65465-6544 * 65464-6+1.02255"
    events = await run(
        gemini_provider(record),
        lambda p: p.stream_chat_completion(question, model="gemini-3-flash-preview", builtin_tools=[CodeExecution()]),
    )
    meta = events[-2].metadata
    assert meta is not None
    (ran,) = meta.builtin_tool_calls or []
    assert (ran.code, ran.outcome, ran.outputs[0].text) == (
        "result = 65465 - 6544 * 65464 - 6 + 1.02255\nprint(result)",
        "OUTCOME_OK",
        "-428330955.97745\n",
    )
    kept = [part for part in meta.extra["gemini_parts"] if "executable_code" in part or "code_execution_result" in part]
    assert len(kept) == 2 and "thought_signature" in kept[0]


def test_a_model_turn_from_gemini_replays_on_openai_without_its_parts() -> None:
    """A conversation that falls back to OpenAI keeps the Gemini turn's text and drops what only
    Gemini reads (its parts, grounding metadata)."""
    from core_openai_plugin.request_mapper import input_items

    turn = ChatMessage(
        role=Role.ASSISTANT,
        content="It is Tuesday.",
        metadata={
            "gemini_parts": [{"executable_code": {"code": "print(1)", "language": "PYTHON"}}],
            "grounding_metadata": {"web_search_queries": ["day"]},
        },
    )
    assert input_items([ChatMessage.user("Which day?"), turn]) == [
        {"role": "user", "content": "Which day?"},
        {"role": "assistant", "content": "It is Tuesday."},
    ]


async def test_gemini_3_searches_beside_a_function_tool(run: Runner) -> None:
    """Gemini 3 takes Google Search and function declarations in one request (recorded on Vertex
    AI): the function call comes back, then the grounded answer to its result."""
    record = Recording(VERTEX / "test_google_vertex_tool_combination_omits_include_server_side_tool_invocations.yaml")
    project = record.interactions[0]["request"]["uri"].split("/projects/")[1].split("/")[0]
    provider = vertex_provider(record, project)
    city = ToolSpec(
        name="get_user_city",
        description="The city the user lives in.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    question = "Look up the city I live in, then search the web for its weather today."
    system = "You are a helpful chatbot."
    first = await run(
        provider,
        lambda p: p.chat_completion_with_tools(
            question, [city], model="gemini-3-flash-preview", system=system, tool_choice="auto",
            builtin_tools=[WebSearch()],
        ),
    )  # fmt: skip
    recorded = record.request(0)
    assert sorted(key for tool in record.sent[0]["tools"] for key in tool) == ["functionDeclarations", "googleSearch"]
    assert sorted(key for tool in recorded["tools"] for key in tool) == ["functionDeclarations", "googleSearch"]
    assert record.sent[0]["toolConfig"] == recorded["toolConfig"]
    (call,) = first.tool_calls or []
    assert (call.id, call.name) == ("vcyiitct", "get_user_city")
    turns = [ChatMessage.user(question), first.to_message(), ChatMessage.tool(call.id, "San Francisco")]
    second = await run(
        provider,
        lambda p: p.chat_completion_with_tools(
            turns, [city], model="gemini-3-flash-preview", system=system, tool_choice="auto",
            builtin_tools=[WebSearch()],
        ),
    )  # fmt: skip
    assert record.all_played
    assert record.sent[1]["contents"][1] == record.request(1)["contents"][1]  # the call, signature and all
    grounding = candidate_of(record.response(1))["groundingMetadata"]
    assert_grounding_kept(grounding, second, second.metadata)
    assert [c.tool for c in second.builtin_tool_calls or []] == ["web_search"]
    assert second.usage.tool_uses == {"web_search": len(grounding.get("webSearchQueries", []))}  # per query
