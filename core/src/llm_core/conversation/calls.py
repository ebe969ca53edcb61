"""What a conversation remembers of each tool call of the current turn, so that a call runs at
most once even across processes: whether it waits for a person's approval (and what was
decided), whether it has started and finished, and the idempotency key it is run with.

The records are saved with the conversation (``to_json``, key ``tool_calls``). A call is marked
started, and the conversation saved through its ``checkpoint`` when it has one, before its tool
runs; finished when its result is in the history. A call found started and not finished when
the loop goes on was interrupted: it raises
:class:`~llm_core.conversation.errors.ToolInterruptedError` instead of running again.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llm_core.errors import InvalidInputError
from llm_core.observe import observers, scopes
from llm_core.tools import ToolCall

Approval = Literal["pending", "approved", "denied"]


class CallRecord(BaseModel):
    """One tool call's state. ``approval`` is None for a call nobody had to approve;
    ``arguments`` are those to run it with when they are not the model's (approved or replaced
    ones); ``reason`` is a denial's."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=200)
    approval: Approval | None = None
    arguments: dict[str, Any] | None = None
    reason: str = ""
    started: bool = False
    finished: bool = False

    @property
    def interrupted(self) -> bool:
        return self.started and not self.finished


@dataclass(frozen=True)
class ToolDecision:
    """What ``before_tool_call`` decides: run the call, deny it (the model is told), run it
    with other arguments, or defer it to a person (``send`` returns with it in
    ``chat.pending_approvals``). The hook may also return ``True``/``None`` (allow), ``False``
    (deny) or a dict (the arguments to use)."""

    action: Literal["allow", "deny", "replace", "defer"]
    reason: str = ""
    arguments: dict[str, Any] | None = None

    @classmethod
    def allow(cls) -> ToolDecision:
        return cls("allow")

    @classmethod
    def deny(cls, reason: str = "") -> ToolDecision:
        return cls("deny", reason=reason)

    @classmethod
    def replace(cls, arguments: Mapping[str, Any]) -> ToolDecision:
        return cls("replace", arguments=dict(arguments))

    @classmethod
    def defer(cls) -> ToolDecision:
        return cls("defer")


def as_decision(value: Any) -> ToolDecision:
    if value is None or value is True:
        return ToolDecision.allow()
    if value is False:
        return ToolDecision.deny()
    if isinstance(value, ToolDecision):
        return value
    if isinstance(value, Mapping):
        return ToolDecision.replace(value)
    raise InvalidInputError(
        f"before_tool_call returned {type(value).__name__}: return a ToolDecision, True/False/None or a dict"
    )


def announce(decision: Literal["deferred", "approved", "denied"], call: ToolCall, reason: str = "") -> None:
    """Tell observers what was decided about ``call`` (``llm_core_tool_approval``)."""
    if not observers.active():
        return
    observers.emit(
        "llm_core_tool_approval",
        {
            "parent_id": scopes.current(),
            "decision": decision,
            "tool_name": call.name,
            "tool_call_id": call.id,
            "reason": reason,
            "call": call,
        },
    )


#: What a call nobody recorded counts as (no approval asked, not started).
NO_RECORD = CallRecord(key="-")


class CallBook:
    """The part of a conversation that keeps the records: approving, denying, marking calls
    started (a mixin of :class:`~llm_core.conversation.state.ConversationState`)."""

    _calls: dict[str, CallRecord]
    checkpoint: Callable[[str], Any] | None

    @property
    def pending_calls(self) -> list[ToolCall]:
        raise NotImplementedError

    def to_json(self) -> str:
        raise NotImplementedError

    @property
    def pending_approvals(self) -> list[ToolCall]:
        """Tool calls that wait for :meth:`approve` or :meth:`deny` (then ``send()``)."""
        return [c for c in self.pending_calls if self._calls.get(c.id, NO_RECORD).approval == "pending"]

    def approve(self, call_id: str, *, arguments: Mapping[str, Any] | None = None) -> None:
        """Let a deferred call run (with ``arguments`` instead of the model's, when given) at
        the next ``send()``; or run an interrupted call once more."""
        call, record = self._awaiting(call_id, "approve")
        if arguments is not None:
            try:
                record.arguments = json.loads(json.dumps(dict(arguments)))
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"approve: the arguments are not JSON: {exc}") from None
        record.approval, record.started = "approved", False
        announce("approved", call)

    def deny(self, call_id: str, reason: str = "") -> None:
        """Refuse a deferred (or interrupted) call: the next ``send()`` tells the model it was
        denied, with ``reason``."""
        call, record = self._awaiting(call_id, "deny")
        record.approval, record.reason, record.started = "denied", str(reason), False
        announce("denied", call, record.reason)

    def _awaiting(self, call_id: str, verb: str) -> tuple[ToolCall, CallRecord]:
        call = next((c for c in self.pending_calls if c.id == call_id), None)
        record = self._calls.get(call_id)
        if call is None or record is None or not (record.approval == "pending" or record.interrupted):
            waiting = [c.id for c in self.pending_approvals] or "none"
            raise InvalidInputError(f"{verb}: no tool call {call_id!r} waits for approval (waiting: {waiting})")
        return call, record

    def _recorded_decision(self, call: ToolCall) -> ToolDecision | None:
        """What a person decided about ``call`` (approve / deny), which ``before_tool_call`` is
        not asked to decide again; None when nobody did."""
        record = self._calls.get(call.id)
        if record is None or record.approval not in ("approved", "denied"):
            return None
        if record.approval == "denied":
            return ToolDecision.deny(record.reason)
        return ToolDecision.allow() if record.arguments is None else ToolDecision.replace(record.arguments)

    def _starting(self, calls: Sequence[ToolCall]) -> None:
        """Mark ``calls`` (about to run) started, saved through ``checkpoint`` before any of
        them runs; a checkpoint that fails leaves them unstarted, and raises."""
        started = [self._calls[call.id] for call in calls if call.id in self._calls]
        for record in started:
            record.started = True
        try:
            self._save_checkpoint()
        except BaseException:
            for record in started:
                record.started = False
            raise

    def _save_checkpoint(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint(self.to_json())
