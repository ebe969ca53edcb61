"""Opt-in content capture (semconv v1.41 gen-ai-spans.md "Capturing instructions, inputs, and
outputs"; the shapes of gen-ai-input-messages.json / gen-ai-output-messages.json /
gen-ai-system-instructions.json / gen-ai-tool-definitions.json): nothing by default, the
messages as the conventions shape them when the switch is on, never bytes or secrets."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider

from core_otel_plugin.content import CAPTURE_ENV, OMITTED_BLOB
from core_otel_plugin.observer import OtelObserver
from llm_core.messages import ChatMessage, ImagePart
from llm_core.registry import Registry
from llm_core.testing import FakeProvider, FakeReply
from llm_core.tools import ToolSpec

from .conftest import Telemetry

SECRET_PROMPT = "my secret question"
KEY = "sk-fake-0123456789abcdefSECRET"
PIXELS = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
CONTENT_ATTRIBUTES = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


@pytest.fixture(autouse=True)
def _no_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)


def observe(telemetry: Telemetry, **options: Any) -> None:
    Registry().add_observer(
        OtelObserver(telemetry.tracer_provider, MeterProvider(metric_readers=[telemetry.metrics]), **options)
    )


def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


def everything(telemetry: Telemetry) -> None:
    """A call with a system message, an image and tools, a streamed call, and a tool-loop turn."""
    fake = FakeProvider(api_key=KEY)
    messages = [
        ChatMessage.system("Answer in French."),
        ChatMessage.user([SECRET_PROMPT, ImagePart(data=PIXELS, mime_type="image/png")]),
    ]
    fake.chat_completion_with_tools(messages, [ToolSpec(name="lookup", description="Look it up.")])
    list(fake.stream_chat_completion(SECRET_PROMPT))
    loop = FakeProvider(api_key=KEY, replies=[FakeReply.calling(("add", {"a": 2, "b": 3})), FakeReply("5")])
    loop.conversation(tools=[add]).send(SECRET_PROMPT)


def all_attributes(telemetry: Telemetry) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in telemetry.spans():
        for name, value in span.attributes.items():
            found.setdefault(name, []).append(value)
    return found


@pytest.mark.parametrize("switch", [None, "false", "NO_CONTENT", "EVENT_ONLY", "yes please"])
def test_off_records_nothing_of_the_messages(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch, switch: str | None
) -> None:
    if switch is not None:
        monkeypatch.setenv(CAPTURE_ENV, switch)
    observe(telemetry)
    everything(telemetry)
    attributes = all_attributes(telemetry)
    assert not CONTENT_ATTRIBUTES & set(attributes)
    text = repr(attributes)
    assert SECRET_PROMPT not in text and "Answer in French" not in text and KEY not in text


@pytest.mark.parametrize("switch", ["true", "SPAN_ONLY", "span_and_event"])
def test_the_conventions_switch_turns_it_on(telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    monkeypatch.setenv(CAPTURE_ENV, switch)
    observe(telemetry)
    FakeProvider().chat_completion(SECRET_PROMPT)
    (span,) = telemetry.spans()
    assert json.loads(span.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": SECRET_PROMPT}]}
    ]


def test_a_call_records_instructions_inputs_tools_and_outputs(telemetry: Telemetry) -> None:
    observe(telemetry, capture_content=True)
    fake = FakeProvider(api_key=KEY, replies=[FakeReply.calling(("lookup", {"q": "Paris"}), thinking="hmm")])
    url = "https://images.example.com/cat.png?X-Goog-Signature=abc123&expires=9"
    messages = [
        ChatMessage.system("Answer in French."),
        ChatMessage.user(["What is in these?", ImagePart(data=PIXELS, mime_type="image/png"), ImagePart(url=url)]),
    ]
    response = fake.chat_completion_with_tools(messages, [ToolSpec(name="lookup", description="Look it up.")])
    (span,) = telemetry.spans()
    attributes = span.attributes
    assert json.loads(attributes["gen_ai.system_instructions"]) == [{"type": "text", "content": "Answer in French."}]
    assert json.loads(attributes["gen_ai.input.messages"]) == [
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": "What is in these?"},
                {"type": OMITTED_BLOB, "modality": "image", "mime_type": "image/png", "size": len(PIXELS)},
                {"type": "uri", "modality": "image", "mime_type": None, "uri": "https://images.example.com/cat.png"},
            ],
        }
    ]
    # the conventions advise name and type only by default (no description, no schema)
    assert json.loads(attributes["gen_ai.tool.definitions"]) == [{"type": "function", "name": "lookup"}]
    (call,) = response.tool_calls or []
    assert json.loads(attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "hmm"},
                {"type": "tool_call", "id": call.id, "name": "lookup", "arguments": {"q": "Paris"}},
            ],
            "finish_reason": "tool_call",
        }
    ]
    text = repr(dict(attributes))
    assert base64.b64encode(PIXELS).decode() not in text and "X-Goog-Signature" not in text and KEY not in text


def test_a_turn_records_its_input_and_answer_and_tool_runs_their_arguments(telemetry: Telemetry) -> None:
    observe(telemetry, capture_content=True)
    loop = FakeProvider(replies=[FakeReply.calling(("add", {"a": 2, "b": 3})), FakeReply("5")])
    loop.conversation(tools=[add], system="Be brief.").send("What is 2 + 3?")
    spans = {span.name: span for span in telemetry.spans()}
    turn, tool = spans["invoke_agent"], spans["execute_tool add"]
    assert json.loads(turn.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 2 + 3?"}]}
    ]
    assert json.loads(turn.attributes["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(turn.attributes["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "5"}], "finish_reason": "stop"}
    ]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == 5
    # the second model call saw the tool's answer, as the conventions' tool_call_response part
    second = [s for s in telemetry.spans() if s.name == "chat fake-model"][1]
    history = json.loads(second.attributes["gen_ai.input.messages"])
    assert history[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": history[1]["parts"][0]["id"], "response": "5"}],
    }


def test_a_stream_records_its_input_only(telemetry: Telemetry) -> None:
    """A stream's text goes to the caller; llm-core keeps none of it, so no output messages."""
    observe(telemetry, capture_content=True)
    list(FakeProvider().stream_chat_completion(SECRET_PROMPT))
    (span,) = telemetry.spans()
    assert SECRET_PROMPT in span.attributes["gen_ai.input.messages"]
    assert "gen_ai.output.messages" not in span.attributes
