"""Spans of tools served by an MCP server (a real one over stdio) and span events of calls that
wait for approval."""

from __future__ import annotations

from pathlib import Path

from llm_core.conversation import tool_from_function
from llm_core.registry import Registry
from llm_core.testing import FakeProvider, FakeReply
from tests.mcp.servers import stdio_server

from .conftest import Telemetry


def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def test_an_mcp_tool_run_is_an_execute_tool_span_naming_its_server(
    registry: Registry, telemetry: Telemetry, tmp_path: Path
) -> None:
    model = FakeProvider(replies=[FakeReply.calling(("echo", {"text": "hi"})), FakeReply("hi")])
    with model.conversation(tools=[stdio_server(tmp_path / "ledger")]) as chat:
        chat.send("Echo hi")
    (tool,) = [span for span in telemetry.spans() if span.name == "execute_tool echo"]
    (turn,) = [span for span in telemetry.spans() if span.name == "invoke_agent"]
    assert tool.parent is not None and tool.parent.span_id == turn.context.span_id
    attributes = dict(tool.attributes or {})
    assert attributes["gen_ai.tool.type"] == "extension"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["llm_core.mcp.server"] == "tools"


def test_deferred_approved_and_denied_calls_are_span_events(registry: Registry, telemetry: Telemetry) -> None:
    model = FakeProvider(
        replies=[FakeReply.calling(("refund", {"order": "A1"}), ("refund", {"order": "B2"})), FakeReply("ok")]
    )
    chat = model.conversation(tools=[tool_from_function(refund, requires_approval=True)])
    chat.send("Refund both")
    first, second = chat.pending_approvals
    tracer = telemetry.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("review"):
        chat.approve(first.id)
        chat.deny(second.id, "not ours")
    spans = {span.name: span for span in telemetry.spans()}
    deferred = [(e.name, dict(e.attributes or {})) for e in spans["invoke_agent"].events]
    assert deferred == [
        ("llm_core.tool.deferred", {"gen_ai.tool.name": "refund", "gen_ai.tool.call.id": first.id}),
        ("llm_core.tool.deferred", {"gen_ai.tool.name": "refund", "gen_ai.tool.call.id": second.id}),
    ]
    decided = [(e.name, dict(e.attributes or {})) for e in spans["review"].events]
    assert decided == [
        ("llm_core.tool.approved", {"gen_ai.tool.name": "refund", "gen_ai.tool.call.id": first.id}),
        (
            "llm_core.tool.denied",
            {"gen_ai.tool.name": "refund", "gen_ai.tool.call.id": second.id, "llm_core.tool.reason": "not ours"},
        ),
    ]
