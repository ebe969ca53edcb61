"""Built-in tools in the telemetry: each run the provider reports is an ``execute_tool`` span
under the call's span, with ``gen_ai.tool.type`` as the conventions define it (semconv v1.41
gen-ai-spans.md: ``extension`` for a tool the agent side runs against external APIs,
``datastore`` for retrieval); observers hear the tools among the call's features and their
billed uses in the usage."""

from __future__ import annotations

from typing import Any

import httpx2
from opentelemetry.trace import StatusCode

from llm_core.builtin_tools import FileSearch, WebSearch
from llm_core.registry import Registry
from tests.observers.recording import Recorder
from tests.reliability import upstreams as up

from .conftest import Telemetry

SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}}
FILES = {"id": "fs_1", "type": "file_search_call", "status": "failed", "queries": ["q"], "results": None}


def provider(body: dict[str, Any]) -> Any:
    from core_openai_plugin.provider import OpenAIProvider

    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=body))
    return OpenAIProvider(api_key="test-key-not-a-secret", client_args={"transport": transport})


def test_each_builtin_tool_run_is_an_execute_tool_span(registry: Registry, telemetry: Telemetry) -> None:
    answer = up.openai_response([SEARCH, FILES, up.openai_message("Found it.")], model="gpt-5.4")
    heard = Recorder()
    registry.add_observer(heard)
    provider(answer).chat_completion(
        "Find it.", model="gpt-5.4", builtin_tools=[WebSearch(), FileSearch(stores=["vs_1"])]
    )
    spans = {span.name: span for span in telemetry.spans()}
    chat = spans["chat gpt-5.4"]
    search, files = spans["execute_tool web_search"], spans["execute_tool file_search"]
    for span in (search, files):
        assert span.parent is not None and span.parent.span_id == chat.context.span_id
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.provider.name"] == "openai"
    assert (search.attributes["gen_ai.tool.type"], search.attributes["gen_ai.tool.call.id"]) == ("extension", "ws_1")
    assert files.attributes["gen_ai.tool.type"] == "datastore"
    assert files.status.status_code is StatusCode.ERROR  # the provider reported the run failed
    assert search.status.status_code is StatusCode.UNSET
    (before,) = [event for kind, event in heard.events if kind == "before"]
    assert {"web_search", "file_search"} <= set(before["features"])
    (after,) = [event for kind, event in heard.events if kind == "after"]
    assert after["usage"]["tool_uses"] == {"web_search": 1, "file_search": 1}


def test_captured_tool_definitions_name_custom_and_builtin_tools() -> None:
    import json

    from core_otel_plugin import content
    from llm_core.messages import ChatMessage
    from llm_core.requests import ChatRequest
    from llm_core.tools import ToolSpec

    request = ChatRequest(
        messages=[ChatMessage.user("Hi")],
        model="gpt-5.4",
        tools=[ToolSpec(name="lookup"), ToolSpec.custom("calc")],
        builtin_tools=[WebSearch()],
    )
    assert json.loads(content.request_attributes(request)["gen_ai.tool.definitions"]) == [
        {"type": "function", "name": "lookup"},
        {"type": "custom", "name": "calc"},
        {"type": "web_search"},
    ]
