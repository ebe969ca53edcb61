"""Real OpenAI Responses traffic with built-in tools (web search, file search, code interpreter,
remote MCP) replayed through the plugin and the real ``openai`` SDK, sync and async, calls and
streams: every output item comes back typed or kept with all its keys, and goes back in the
next turn (``store=False``) in the order the answer gave it."""

from __future__ import annotations

from typing import Any

from llm_core.builtin_tools import CodeExecution, FileSearch, ImageGeneration, RemoteMCP, WebSearch
from llm_core.messages import ChatMessage, Role
from llm_core.responses import CompletionResponse
from llm_core.streaming import StreamEventType, StreamMetadata
from tests.builtin.conftest import Runner
from tests.builtin.recordings import (
    OPENAI,
    OPENAI_CHAT,
    OPENAI_IMAGES,
    Recording,
    needs_recordings,
    openai_chat_endpoint,
    openai_provider,
)

pytestmark = needs_recordings

#: Output item types that become a typed field of the response rather than ``output_items``.
TYPED = {"message", "reasoning", "function_call", "custom_tool_call", "image_generation_call"}


def recording(name: str) -> Recording:
    return Recording(OPENAI / f"{name}.yaml")


def assert_nothing_dropped(output: list[dict[str, Any]], content: str, metadata: dict[str, Any]) -> None:
    """Every recorded output item is in the answer: messages as its text, reasoning items for
    replay, every other item in ``output_items`` with all its keys, in order."""
    texts = [part["text"] for item in output if item["type"] == "message" for part in item["content"]]
    assert content == "".join(texts)
    reasoning = [item["id"] for item in output if item["type"] == "reasoning"]
    assert [item["id"] for item in metadata.get("reasoning_items", [])] == reasoning
    others = [item for item in output if item["type"] not in TYPED]
    assert metadata.get("output_items", []) == others
    if others:
        expected = [item["id"] for item in output if item["type"] not in TYPED or item["type"] == "reasoning"]
        assert metadata["output_order"] == expected


def kinds(items: list[dict[str, Any]]) -> list[str]:
    """What each input item is: a message by its role, any other item by its type."""
    return [item.get("role") or item["type"] for item in items]


def stream_answer(events: list[Any]) -> tuple[str, StreamMetadata]:
    assert [e.type for e in events[-2:]] == [StreamEventType.METADATA, StreamEventType.END]
    text = "".join(e.text for e in events if e.type is StreamEventType.TOKEN and not e.is_thinking)
    meta = events[-2].metadata
    assert meta is not None
    return text, meta


def final_output(record: Recording, index: int) -> list[dict[str, Any]]:
    """The output of a streamed answer: its ``response.completed`` event's."""
    done = [event for event in record.events(index) if event["type"] == "response.completed"]
    output: list[dict[str, Any]] = done[-1]["response"]["output"]
    return output


async def test_web_search_call_gives_citations_queries_and_every_item(run: Runner) -> None:
    record = recording("test_openai_responses_model_builtin_tools_web_search")
    prompt = "Give me the top 3 news in the world today"
    answer: CompletionResponse = await run(
        openai_provider(record), lambda p: p.chat_completion(prompt, model="gpt-5", builtin_tools=[WebSearch()])
    )
    assert record.all_played
    sent = record.sent[0]
    assert sent["tools"] == record.request(0)["tools"] == [{"type": "web_search"}]
    assert sent["include"] == ["reasoning.encrypted_content", "web_search_call.action.sources"]
    output = record.response(0)["output"]
    assert_nothing_dropped(output, answer.content, answer.metadata)
    searches = answer.builtin_tool_calls or []
    recorded = [item["action"]["query"] for item in output if item["type"] == "web_search_call"]
    assert [call.queries for call in searches] == [[query] for query in recorded]
    assert {call.tool for call in searches} == {"web_search"} and all(c.status == "completed" for c in searches)
    assert answer.citations and all(c.tool == "web_search" and c.url and c.title for c in answer.citations)
    for citation in answer.citations:
        assert citation.start is not None and citation.end is not None
        assert citation.text == answer.content[citation.start : citation.end]
    notes = [n for item in output if item["type"] == "message" for n in item["content"][0]["annotations"]]
    assert [(c.url, c.start, c.end) for c in answer.citations] == [
        (n["url"], n["start_index"], n["end_index"]) for n in notes
    ]
    assert answer.usage.tool_uses == {"web_search": len(recorded)}


async def test_web_search_stream_then_the_next_turn_replays_its_items(run: Runner) -> None:
    record = recording("test_openai_responses_model_web_search_tool_stream")
    provider = openai_provider(record)
    question = "What is the weather in San Francisco today?"
    tools = [WebSearch(context_size="medium")]
    events = await run(provider, lambda p: p.stream_chat_completion(question, model="gpt-5", builtin_tools=tools))
    text, meta = stream_answer(events)
    assert record.sent[0]["tools"] == record.request(0)["tools"]
    output = final_output(record, 0)
    assert_nothing_dropped(output, text, meta.extra)
    assert [c.queries for c in meta.builtin_tool_calls or []] == [
        [item["action"]["query"]] for item in output if item["type"] == "web_search_call"
    ]
    assert meta.tool_uses == {"web_search": 1}

    turns = [
        ChatMessage.user(question),
        ChatMessage(role=Role.ASSISTANT, content=text, metadata=meta.extra),
        ChatMessage.user("how about Mexico City?"),
    ]
    answer = await run(provider, lambda p: p.chat_completion(turns, model="gpt-5", builtin_tools=tools))
    assert record.all_played
    replayed = [item for item in record.sent[1]["input"] if item.get("type") in ("reasoning", "web_search_call")]
    recorded = [item for item in output if item["type"] in ("reasoning", "web_search_call")]
    assert [item["id"] for item in replayed] == [item["id"] for item in recorded]
    assert [i for i in replayed if i["type"] == "web_search_call"] == [
        i for i in recorded if i["type"] == "web_search_call"
    ]
    assert_nothing_dropped(record.response(1)["output"], answer.content, answer.metadata)
    (searched,) = answer.builtin_tool_calls or []
    assert [(s.url, s.title) for s in searched.sources] == [(None, "oai-weather")]  # one of OpenAI's data sources


async def test_file_search_results_and_file_citation(run: Runner) -> None:
    record = recording("test_openai_responses_model_file_search_tool_with_results")
    store = record.request(0)["tools"][0]["vector_store_ids"][0]
    answer = await run(
        openai_provider(record),
        lambda p: p.chat_completion(
            "What is the capital of France?",
            model="gpt-4o",
            system="You are a helpful assistant.",
            builtin_tools=[FileSearch(stores=[store])],
        ),
    )
    assert record.sent[0]["tools"] == record.request(0)["tools"]
    assert record.sent[0]["include"] == record.request(0)["include"] == ["file_search_call.results"]
    output = record.response(0)["output"]
    assert_nothing_dropped(output, answer.content, answer.metadata)
    (search,) = answer.builtin_tool_calls or []
    recorded = output[0]
    assert search.tool == "file_search" and search.queries == recorded["queries"]
    assert [(r.file_id, r.filename, r.score, r.text) for r in search.results] == [
        (r["file_id"], r["filename"], r["score"], r["text"]) for r in recorded["results"]
    ]
    (citation,) = answer.citations or []
    assert (citation.tool, citation.file_id, citation.title, citation.start) == (
        "file_search",
        "file-2b6dRdmXnzSrqiEbhVJZRU",
        "tmpd_9a5dki.txt",
        30,
    )
    assert answer.usage.tool_uses == {"file_search": 1}


async def test_file_search_stream(run: Runner) -> None:
    record = recording("test_openai_responses_model_file_search_tool_stream")
    store = record.request(0)["tools"][0]["vector_store_ids"][0]
    events = await run(
        openai_provider(record),
        lambda p: p.stream_chat_completion(
            "What is the capital of France?", model="gpt-4o", builtin_tools=[FileSearch(stores=[store])]
        ),
    )
    text, meta = stream_answer(events)
    output = final_output(record, 0)
    assert_nothing_dropped(output, text, meta.extra)
    assert [c.tool for c in meta.builtin_tool_calls or []] == ["file_search"]
    assert meta.citations and meta.citations[0].tool == "file_search" and meta.citations[0].file_id


async def test_code_interpreter_two_turns(run: Runner) -> None:
    record = recording("test_openai_responses_thinking_with_code_execution_tool")
    provider = openai_provider(record)
    first_question = "what is 65465-6544 * 65464-6+1.02255"
    first = await run(
        provider, lambda p: p.chat_completion(first_question, model="gpt-5", builtin_tools=[CodeExecution()])
    )
    assert record.sent[0]["tools"] == record.request(0)["tools"]
    assert record.sent[0]["include"] == record.request(0)["include"]
    output = record.response(0)["output"]
    assert_nothing_dropped(output, first.content, first.metadata)
    (ran,) = first.builtin_tool_calls or []
    assert ran.tool == "code_execution" and ran.language == "python"
    assert ran.code == output[1]["code"] and [o.text for o in ran.outputs] == ["-428330955.97745"]
    assert first.usage.tool_uses == {"code_execution": 1}

    turns = [ChatMessage.user(first_question), first.to_message(), ChatMessage.user("how about 2 to the power of 8?")]
    second = await run(provider, lambda p: p.chat_completion(turns, model="gpt-5", builtin_tools=[CodeExecution()]))
    assert record.all_played
    assert kinds(record.sent[1]["input"]) == kinds(record.request(1)["input"])
    assert second.content == "256" and second.usage.tool_uses == {"code_execution": 1}  # a container each answer


async def test_code_interpreter_stream(run: Runner) -> None:
    record = recording("test_openai_responses_thinking_with_code_execution_tool_stream")
    events = await run(
        openai_provider(record),
        lambda p: p.stream_chat_completion("Calculate", model="gpt-5", builtin_tools=[CodeExecution()]),
    )
    text, meta = stream_answer(events)
    output = final_output(record, 0)
    assert_nothing_dropped(output, text, meta.extra)
    code = [item for item in output if item["type"] == "code_interpreter_call"]
    assert [c.code for c in meta.builtin_tool_calls or []] == [item["code"] for item in code]


async def test_remote_mcp_two_turns(run: Runner) -> None:
    record = recording("test_openai_responses_model_mcp_server_tool")
    provider = openai_provider(record)
    server = RemoteMCP(
        server_label="deepwiki",
        server_url="https://mcp.deepwiki.com/mcp",
        allowed_tools=["ask_question"],
        description="DeepWiki MCP server",
    )
    question = "Can you tell me more about the pydantic/pydantic-ai repo? Keep your answer short"
    system = "You are a helpful assistant."
    first = await run(
        provider, lambda p: p.chat_completion(question, model="o3", system=system, builtin_tools=[server])
    )
    recorded_tool = {k: v for k, v in record.request(0)["tools"][0].items() if k != "headers"}
    assert record.sent[0]["tools"] == [recorded_tool]
    output = record.response(0)["output"]
    assert_nothing_dropped(output, first.content, first.metadata)
    (call,) = first.builtin_tool_calls or []
    mcp = next(item for item in output if item["type"] == "mcp_call")
    assert (call.tool, call.server, call.name, call.arguments, call.output) == (
        "remote_mcp",
        "deepwiki",
        "ask_question",
        mcp["arguments"],
        mcp["output"],
    )
    turns = [ChatMessage.user(question), first.to_message(), ChatMessage.user("What packages does the repo contain?")]
    second = await run(provider, lambda p: p.chat_completion(turns, model="o3", system=system, builtin_tools=[server]))
    assert record.all_played
    assert kinds(record.sent[1]["input"]) == kinds(record.request(1)["input"])
    assert_nothing_dropped(record.response(1)["output"], second.content, second.metadata)


async def test_remote_mcp_stream(run: Runner) -> None:
    record = recording("test_openai_responses_model_mcp_server_tool_stream")
    server = RemoteMCP(
        server_label="deepwiki",
        server_url="https://mcp.deepwiki.com/mcp",
        allowed_tools=["ask_question", "read_wiki_structure"],
    )
    events = await run(
        openai_provider(record),
        lambda p: p.stream_chat_completion(
            "What is the pydantic/pydantic-ai repo?", model="o3", builtin_tools=[server]
        ),
    )
    text, meta = stream_answer(events)
    output = final_output(record, 0)
    assert_nothing_dropped(output, text, meta.extra)
    assert [c.name for c in meta.builtin_tool_calls or []] == [i["name"] for i in output if i["type"] == "mcp_call"]


async def test_image_generation_tool_gives_the_image_and_its_run(run: Runner) -> None:
    record = Recording(OPENAI_IMAGES / "test_openai_responses_image_generation_jpeg.yaml")
    answer = await run(
        openai_provider(record),
        lambda p: p.chat_completion(
            "Generate an image of axolotl.", model="gpt-5", builtin_tools=[ImageGeneration(output_format="jpeg")]
        ),
    )
    assert record.sent[0]["tools"] == [{"type": "image_generation", "output_format": "jpeg"}]
    output = record.response(0)["output"]
    item = next(item for item in output if item["type"] == "image_generation_call")
    (image,) = answer.metadata["images"]
    assert image.mime_type == "image/jpeg" and image.data.startswith(b"\xff\xd8")  # a JPEG
    assert image.revised_prompt == item["revised_prompt"]
    assert image.metadata == {k: v for k, v in item.items() if k not in ("result", "revised_prompt")}
    assert [(c.tool, c.id, c.status) for c in answer.builtin_tool_calls or []] == [
        ("image_generation", item["id"], "completed")
    ]
    assert answer.content == "" and answer.metadata["reasoning_items"][0]["id"] == output[0]["id"]


async def test_chat_completions_search_model_with_web_search_options(run: Runner) -> None:
    record = Recording(OPENAI_CHAT / "test_openai_web_search_tool.yaml")
    messages = [ChatMessage.system("You are a helpful assistant."), ChatMessage.user("What day is today?")]
    answer = await run(
        openai_chat_endpoint(record),
        lambda p: p.chat_completion(
            messages, model="gpt-4o-search-preview", builtin_tools=[WebSearch(context_size="low")]
        ),
    )
    assert (
        record.sent[0]["web_search_options"]
        == record.request(0)["web_search_options"]
        == {"search_context_size": "low"}
    )
    assert record.sent[0]["messages"] == record.request(0)["messages"]
    message = record.response(0)["choices"][0]["message"]
    assert answer.content == message["content"] and answer.citations is None  # it cited nothing
    assert [c.tool for c in answer.builtin_tool_calls or []] == ["web_search"]
