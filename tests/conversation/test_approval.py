"""Deferred approval: calls that wait for a person (``ToolDecision.defer()`` or a tool that
requires approval), approve / deny, and each tool run at most once across save and resume
(started / finished per call, interrupted calls reported, idempotency keys)."""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from llm_core import (
    InvalidInputError,
    Registry,
    ServerError,
    StreamEventType,
    ToolCall,
    ToolDecision,
    ToolInterruptedError,
    hookimpl,
)
from llm_core.conversation import Conversation, tool_from_function
from llm_core.testing import FakeProvider, FakeReply

Register = Callable[..., FakeProvider]
PAID: list[tuple[int, str]] = []


def pay(amount: int, idempotency_key: str) -> str:
    """Pay an amount."""
    PAID.append((amount, idempotency_key))
    return f"paid {amount}"


def look(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


PAY = tool_from_function(pay, requires_approval=True)


@pytest.fixture(autouse=True)
def _paid() -> None:
    PAID.clear()


def calls(*items: tuple[str, str, dict[str, Any]]) -> FakeReply:
    return FakeReply(tool_calls=[ToolCall(id=i, name=n, arguments=a) for i, n, a in items])


def sent(fake: FakeProvider, request: int) -> list[dict[str, Any]]:
    return fake.requests[request]["messages"]


def test_a_deferred_call_waits_while_the_others_of_its_turn_run(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5}), ("l1", "look", {"order": "7"})), FakeReply(content="Paid."))
    chat = fake.conversation(tools=[PAY, look])
    response = chat.send("Pay 5 and look up order 7")
    assert [c.id for c in chat.pending_approvals] == ["p1"] and PAID == []
    assert response.tool_calls is not None and len(fake.requests) == 1
    assert [m.role.value for m in chat.messages] == ["user", "assistant", "tool"]  # look ran
    chat.approve("p1")
    assert chat.send().content == "Paid."
    assert [amount for amount, _ in PAID] == [5]
    assert sent(fake, 1)[-1]["content"] == "paid 5" and chat.pending_approvals == []
    with pytest.raises(InvalidInputError, match="nothing to continue"):
        chat.send()  # the call is done: nothing runs twice
    assert len(PAID) == 1


def test_the_idempotency_key_is_not_shown_to_the_model_and_stays_with_the_call(fake: FakeProvider) -> None:
    assert "idempotency_key" not in PAY.spec.parameters["properties"]
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[PAY])
    chat.send("Pay")
    saved = json.loads(chat.to_json())["tool_calls"]["p1"]
    resumed = Conversation.from_json(chat.to_json(), provider=fake, tools=[PAY])
    resumed.approve("p1")
    resumed.send()
    assert [(5, saved["key"])] == PAID and len(saved["key"]) >= 32


def test_before_tool_call_defers_and_is_not_asked_again_after_approval(fake: FakeProvider) -> None:
    asked: list[str] = []

    def hook(call: ToolCall) -> ToolDecision:
        asked.append(call.id)
        return ToolDecision.defer() if call.arguments["amount"] > 100 else ToolDecision.allow()

    fake.script(calls(("p1", "pay", {"amount": 500}), ("p2", "pay", {"amount": 5})), FakeReply(content="done"))
    chat = fake.conversation(tools=[pay], before_tool_call=hook)
    chat.send("Pay both")
    assert [c.id for c in chat.pending_approvals] == ["p1"] and [a for a, _ in PAID] == [5]
    chat.approve("p1", arguments={"amount": 400})  # a person may change the arguments
    chat.send()
    assert [a for a, _ in PAID] == [5, 400] and asked == ["p1", "p2"]


def test_a_denial_is_told_to_the_model_and_nothing_runs(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="Not paid."))
    chat = fake.conversation(tools=[PAY])
    chat.send("Pay")
    chat.deny("p1", "over budget")
    assert chat.send().content == "Not paid."
    assert PAID == [] and "over budget" in sent(fake, 1)[-1]["content"]


def test_a_hook_that_denies_a_tool_requiring_approval_wins(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="no"))
    chat = fake.conversation(tools=[PAY], before_tool_call=lambda call: False)
    assert chat.send("Pay").content == "no" and chat.pending_approvals == [] and PAID == []


def test_waiting_calls_must_be_decided_before_the_loop_goes_on(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})))
    chat = fake.conversation(tools=[PAY])
    chat.send("Pay")
    for attempt in (chat.send, lambda: chat.send("something else")):
        with pytest.raises(InvalidInputError, match=r"wait for approval"):
            attempt()
    with pytest.raises(InvalidInputError, match="no tool call 'nope' waits"):
        chat.approve("nope")
    with pytest.raises(InvalidInputError, match="not JSON"):
        chat.approve("p1", arguments={"amount": object()})
    assert len(fake.requests) == 1


def test_stream_says_a_call_waits_then_goes_on(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5}), ("l1", "look", {"order": "7"})), FakeReply(content="Paid."))
    chat = fake.conversation(tools=[PAY, look])
    kinds = [(e.type, e.tool_call.id if e.tool_call else None) for e in chat.stream("Pay")]
    assert kinds[1:] == [
        (StreamEventType.TOOL_CALL, "p1"),
        (StreamEventType.TOOL_CALL, "l1"),
        (StreamEventType.TOOL_RESULT, "l1"),
        (StreamEventType.TOOL_APPROVAL, "p1"),
        (StreamEventType.END, None),
    ]
    chat.approve("p1")
    after = [e.type for e in chat.stream()]
    assert after[0] is StreamEventType.TOOL_RESULT and after[-1] is StreamEventType.END
    assert len(PAID) == 1


def test_async_conversations_defer_and_resume(fake: FakeProvider) -> None:
    async def decide(call: ToolCall) -> ToolDecision:
        return ToolDecision.defer()

    fake.script(calls(("p1", "pay", {"amount": 5}), ("p2", "pay", {"amount": 6})), FakeReply(content="both"))

    async def run() -> str:
        async with fake.aio.conversation(tools=[pay], before_tool_call=decide) as chat:
            await chat.send("Pay both")
            assert [c.id for c in chat.pending_approvals] == ["p1", "p2"]
            chat.approve("p1")
            chat.deny("p2")
            return (await chat.send()).content

    assert asyncio.run(run()) == "both" and [a for a, _ in PAID] == [5]


def test_approval_through_a_router_that_fell_back(registry: Registry, register_fake: Register) -> None:
    register_fake(registry, "alpha", FakeReply(error=ServerError("down", provider="alpha")), FakeReply(content="ok"))
    beta = register_fake(registry, "beta", calls(("b1", "pay", {"amount": 5})))
    chat = registry.router("chat", prefer=["alpha", "beta"]).conversation(tools=[PAY])
    response = chat.send("Pay")
    assert response.provider == "beta" and [c.id for c in chat.pending_approvals] == ["b1"]
    chat.approve("b1")
    assert chat.send().content == "ok" and len(PAID) == 1 and len(beta.requests) == 1


def test_a_call_started_and_never_finished_is_reported_not_run_again(fake: FakeProvider) -> None:
    saved: list[str] = []
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[PAY], checkpoint=saved.append)
    chat.send("Pay")
    chat.approve("p1")
    chat.send()
    started = next(s for s in saved if json.loads(s)["tool_calls"].get("p1", {}).get("started"))
    assert json.loads(started)["tool_calls"]["p1"]["finished"] is False  # saved before pay ran
    # the process died right after that checkpoint: resume from it
    crashed = Conversation.from_json(started, provider=fake, tools=[PAY])
    with pytest.raises(ToolInterruptedError) as caught:
        crashed.send()
    assert caught.value.call.id == "p1" and caught.value.conversation is crashed and len(PAID) == 1
    crashed.add_tool_result("p1", "paid 5 (checked by hand)")
    fake.script(FakeReply(content="resumed"))
    assert crashed.send().content == "resumed" and len(PAID) == 1


def test_an_interrupted_call_runs_again_only_when_approved(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[pay])
    chat.send("Pay")  # p1 ran: make the document say it was interrupted
    document = json.loads(chat.to_json())
    document["messages"] = document["messages"][:2]
    document["tool_calls"]["p1"]["finished"] = False
    resumed = Conversation.from_json(document, provider=fake, tools=[pay])
    resumed.approve("p1")
    fake.script(FakeReply(content="again"))
    assert resumed.send().content == "again" and len(PAID) == 2


def test_a_failing_checkpoint_keeps_the_tool_from_running(fake: FakeProvider) -> None:
    def refuse(saved: str) -> None:
        if json.loads(saved)["tool_calls"].get("p1", {}).get("started"):
            raise OSError("disk full")

    fake.script(calls(("p1", "pay", {"amount": 5})))
    chat = fake.conversation(tools=[pay], checkpoint=refuse)
    with pytest.raises(OSError, match="disk full"):
        chat.send("Pay")
    assert PAID == [] and json.loads(chat.to_json())["tool_calls"]["p1"]["started"] is False


@pytest.mark.parametrize(
    ("tool_calls", "message"),
    [
        ([], "tool_calls must be an object"),
        ({"p1": []}, r"tool_calls\['p1'\] must be an object"),
        ({"p1": {"approval": "maybe"}}, r"tool_calls\['p1'\]: approval"),
        ({"p1": {"surprise": 1}}, r"tool_calls\['p1'\]: surprise"),
    ],
)
def test_from_json_refuses_bad_call_records(fake: FakeProvider, tool_calls: Any, message: str) -> None:
    document = json.loads(fake.conversation().to_json())
    document["tool_calls"] = tool_calls
    with pytest.raises(InvalidInputError, match=message):
        Conversation.from_json(document, provider=fake)


class ApprovalEvents:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @hookimpl
    def llm_core_tool_approval(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def test_observers_hear_each_decision(registry: Registry, fake: FakeProvider) -> None:
    heard = ApprovalEvents()
    registry.add_observer(heard)
    fake.script(calls(("p1", "pay", {"amount": 5}), ("p2", "pay", {"amount": 6})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[PAY])
    chat.send("Pay both")
    chat.approve("p1")
    chat.deny("p2", "twice is too much")
    assert [(e["decision"], e["tool_call_id"], e["reason"]) for e in heard.events] == [
        ("deferred", "p1", ""),
        ("deferred", "p2", ""),
        ("approved", "p1", ""),
        ("denied", "p2", "twice is too much"),
    ]
    assert heard.events[0]["parent_id"] != 0 and heard.events[2]["parent_id"] == 0  # in the turn, then not


def test_a_call_deferred_when_the_loop_goes_on_pauses_it_before_the_model_is_called(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})))
    chat = fake.conversation(tools=[pay])  # no approval asked: the tool is not marked here
    chat.send("Pay")
    document = json.loads(chat.to_json())
    document["messages"], document["tool_calls"] = document["messages"][:2], {}  # saved before it ran
    PAID.clear()
    asked = len(fake.requests)
    resumed = Conversation.from_json(document, provider=fake, tools=[PAY])  # now it needs approval
    paused = resumed.send()
    assert paused.tool_calls is not None and paused.provider == "fake" and len(fake.requests) == asked
    assert [c.id for c in resumed.pending_approvals] == ["p1"]
    streamed = Conversation.from_json(document, provider=fake, tools=[PAY])
    assert [e.type for e in streamed.stream()] == [StreamEventType.TOOL_APPROVAL, StreamEventType.END]
    assert len(fake.requests) == asked and PAID == []


def test_errors_of_the_loop_pickle_with_their_call(fake: FakeProvider) -> None:
    error = ToolInterruptedError("interrupted", call=ToolCall(id="c1", name="pay"), conversation=object())
    copy = pickle.loads(pickle.dumps(error))
    assert copy.call.id == "c1" and copy.conversation is None


def test_an_interrupted_call_runs_again_with_the_arguments_it_was_given(fake: FakeProvider) -> None:
    fake.script(calls(("p1", "pay", {"amount": 5})), FakeReply(content="ok"))
    chat = fake.conversation(tools=[pay], before_tool_call=lambda call: {"amount": 1})  # the hook caps it
    chat.send("Pay")
    document = json.loads(chat.to_json())
    document["messages"] = document["messages"][:2]
    document["tool_calls"]["p1"]["finished"] = False
    resumed = Conversation.from_json(document, provider=fake, tools=[pay])  # no hook here
    resumed.approve("p1")
    fake.script(FakeReply(content="again"))
    resumed.send()
    assert [amount for amount, _ in PAID] == [1, 1]
