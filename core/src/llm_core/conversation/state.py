"""What a conversation is, apart from how it waits: history, tools, options, usage, the
bookkeeping of one tool-loop step, saving and resuming. :class:`Conversation` and
:class:`AsyncConversation` (``conversation.py``) add the sync and async calls on top."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from llm_core.conversation import calls as records
from llm_core.conversation.calls import NO_RECORD, CallBook, CallRecord, ToolDecision
from llm_core.conversation.errors import MaxStepsError, ToolExecutionError, ToolInterruptedError, ToolServerError
from llm_core.conversation.history import (
    UserInput,
    add_usage,
    assistant_turn,
    for_provider,
    needed_features,
    unanswered_calls,
    user_turn,
)
from llm_core.conversation.saved import SAVE_FORMAT, without_credentials
from llm_core.conversation.tools import (
    Tool,
    ToolArgumentsError,
    ToolLike,
    ToolOutputError,
    build_tools,
    describe,
    error_output,
    tool_output,
    validation_summary,
    with_served,
)
from llm_core.errors import InvalidInputError, InvalidResponseError
from llm_core.features import Feature
from llm_core.messages import ChatMessage, Role
from llm_core.responses import CompletionResponse, Usage
from llm_core.routing.fallback import ANSWERED_BY
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.tools import ToolCall, ToolSpec

#: The name of the tool that carries a structured answer (``send(..., output=Model)``).
OUTPUT_TOOL = "final_result"


class ConversationResponse(CompletionResponse):
    """The answer of :meth:`Conversation.send`: the last model call's response, plus ``output``
    (the structured answer when ``output=`` was given) and ``steps`` (every model call of this
    send, each naming the provider that answered it)."""

    output: Any = None
    steps: list[CompletionResponse] = Field(default_factory=list)


@dataclass
class ToolRun:
    """One call, ready to run (``kwargs``) or already answered (``output``, with ``error``)."""

    call: ToolCall
    tool: Tool | None = None
    kwargs: dict[str, Any] | None = None
    output: str | None = None
    error: BaseException | None = None
    deferred: bool = False  # waits for chat.approve / chat.deny
    stopped_by: ToolServerError | None = None  # its server failed: the loop stops after settling the rest


class ConversationState(CallBook):
    """The shared part of :class:`Conversation` and :class:`AsyncConversation`."""

    def __init__(
        self,
        backend: Any,
        *,
        system: str | None = None,
        tools: Sequence[ToolLike] = (),
        model: str | None = None,
        max_steps: int = 10,
        tool_retries: int = 2,
        raise_tool_errors: bool = False,
        before_tool_call: Callable[[ToolCall], Any] | None = None,
        checkpoint: Callable[[str], Any] | None = None,
        messages: Sequence[ChatMessage] = (),
        usage: Usage | None = None,
        tool_calls: Mapping[str, CallRecord] | None = None,
        **call_options: Any,
    ) -> None:
        if not isinstance(max_steps, int) or max_steps < 1:
            raise InvalidInputError(f"max_steps must be a positive integer, got {max_steps!r}")
        if not isinstance(tool_retries, int) or tool_retries < 0:
            raise InvalidInputError(f"tool_retries must be 0 or more, got {tool_retries!r}")
        if before_tool_call is not None and not callable(before_tool_call):
            raise InvalidInputError("before_tool_call must be a function of the tool call")
        if checkpoint is not None and not callable(checkpoint):
            raise InvalidInputError("checkpoint must be a function of the saved conversation (a str)")
        for reserved in ("tools", "messages", "tool_choice"):
            if reserved in call_options:
                raise InvalidInputError(f"{reserved}= is not a call option of a conversation")
        self._backend = backend
        self._own_tools, self._sources = build_tools(tools)
        #: the tools by name: the conversation's own, and those its servers serve (once listed)
        self.tools: dict[str, Tool] = dict(self._own_tools)
        if OUTPUT_TOOL in self.tools:
            raise InvalidInputError(f"tools: the name {OUTPUT_TOOL!r} is reserved for structured answers")
        self.system = system
        self.model = model
        self.max_steps = max_steps
        self.tool_retries = tool_retries
        self.raise_tool_errors = raise_tool_errors
        self.before_tool_call = before_tool_call
        self.checkpoint = checkpoint
        self._calls: dict[str, CallRecord] = {k: v.model_copy() for k, v in (tool_calls or {}).items()}
        self.options: dict[str, Any] = dict(call_options)
        self._messages: list[ChatMessage] = list(messages)
        if system and not (self._messages and self._messages[0].role is Role.SYSTEM):
            self._messages.insert(0, ChatMessage.system(system))
        self.usage: Usage = usage or Usage()
        self.responses: list[CompletionResponse] = []
        self._failures: dict[str, int] = {}
        backend.check(self.features(), model)

    # -- what the application reads -------------------------------------------------------

    @property
    def messages(self) -> list[ChatMessage]:
        """The full history (system, user, assistant with replay data, tool results)."""
        return list(self._messages)

    @property
    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the last model turn that have no result yet."""
        return unanswered_calls(self._messages)

    def add_tool_result(self, call_id: str, output: Any) -> None:
        """Answer a pending call yourself (a ToolSpec without handler, or an interrupted call);
        then ``send()``."""
        call = next((c for c in self.pending_calls if c.id == call_id), None)
        if call is None:
            raise InvalidInputError(f"no pending tool call has the id {call_id!r}")
        try:
            text = tool_output(output)
        except ToolOutputError as exc:
            raise InvalidInputError(f"add_tool_result: {exc}") from exc
        self._messages.append(ChatMessage.tool(call.id, text, name=call.name))

    def features(self) -> set[Feature]:
        return needed_features(self._messages, tools=bool(self.tools or self._sources), options=self.options)

    def close(self) -> None:
        """Close the servers this conversation's tools come from (they start again when used)."""
        for source in self._sources:
            source.close()

    def _load_tools(self) -> None:
        """The tools of the servers, merged with the conversation's own (servers start here,
        on first use, and list their tools again only when they changed). Blocks."""
        if self._sources:
            tools = with_served(self._own_tools, self._sources)
            if OUTPUT_TOOL in tools:
                raise InvalidInputError(f"tools: the name {OUTPUT_TOOL!r} is reserved for structured answers")
            self.tools = tools

    # -- one send: the user turn, the request of each step ----------------------------------

    def _begin(self, message: UserInput | None) -> None:
        pending = self.pending_calls
        for call in pending:
            if self._calls.get(call.id, NO_RECORD).interrupted:
                raise ToolInterruptedError(
                    f"the call {call.id!r} of tool {call.name!r} was started and never finished: it is not run "
                    "again by itself (add_tool_result answers it, approve runs it again, deny tells the model)",
                    call=call,
                    conversation=self,
                )
        waiting = self.pending_approvals
        if waiting:
            raise InvalidInputError(
                f"the tool calls {[c.id for c in waiting]} wait for approval: chat.approve(call_id) or "
                "chat.deny(call_id, reason) each, then send()"
            )
        if message is None:
            if not pending and (not self._messages or self._messages[-1].role is Role.ASSISTANT):
                raise InvalidInputError("send() without a message continues a tool loop: there is nothing to continue")
        else:
            if pending:
                raise InvalidInputError(
                    f"the model's tool calls {[c.id for c in pending]} are unanswered: send() without a message "
                    "runs them (add_tool_result answers one yourself)"
                )
            self._messages.append(user_turn(message))
            self._calls = {}  # every call was answered: their records are done with
        self._failures = {}
        self._backend.begin_turn()

    def _request(self, output: type[BaseModel] | None) -> tuple[list[ToolSpec], dict[str, Any]]:
        specs = [tool.spec for tool in self.tools.values()]
        options = dict(self.options)
        if self.model is not None:
            options["model"] = self.model
        if output is not None:
            specs.append(output_spec(output))
            options["tool_choice"] = "required"
        return specs, options

    def _prepare(self, identifier: str) -> list[ChatMessage]:
        return for_provider(self._messages, identifier)

    def _record(self, response: CompletionResponse) -> list[ToolCall]:
        """Put a model turn into the history; its tool calls (to run)."""
        self._messages.append(assistant_turn(response))
        self.responses.append(response)
        self.usage = add_usage(self.usage, response.usage)
        return list(response.tool_calls or ())

    def _too_many_steps(self, calls: list[ToolCall]) -> MaxStepsError:
        names = ", ".join(sorted({c.name for c in calls}))
        return MaxStepsError(
            f"the model still calls tools ({names}) after max_steps={self.max_steps} model calls", conversation=self
        )

    def _final(
        self, response: CompletionResponse, steps: list[CompletionResponse], output: type[BaseModel] | None
    ) -> ConversationResponse:
        value = None
        if output is not None:
            value = self._output_value(response, output)
        return ConversationResponse(**dict(response), output=value, steps=steps)

    def _paused(self) -> ConversationResponse:
        """The answer of a ``send`` that ran the waiting calls and stopped before calling the
        model, because a call still waits: the model turn that made the calls."""
        turn = next(m for m in reversed(self._messages) if m.role is Role.ASSISTANT)
        answered = turn.metadata.get(ANSWERED_BY)
        return ConversationResponse(
            content=turn.text,
            model=self.model or "",
            provider=answered if isinstance(answered, str) else self._backend.name,
            tool_calls=turn.tool_calls,
            finish_reason="tool_calls",
        )

    def _output_value(self, response: CompletionResponse, output: type[BaseModel]) -> BaseModel:
        for call in response.tool_calls or ():
            if call.name == OUTPUT_TOOL:
                return output.model_validate(call.arguments)  # validated when it ran
        try:
            return output.model_validate_json(response.content)
        except ValidationError as exc:
            raise InvalidResponseError(
                f"the model answered without calling {OUTPUT_TOOL}, and its text is no {output.__name__}",
                provider=response.provider,
            ) from exc

    # -- running the calls of a step ------------------------------------------------------------

    def _plan(self, call: ToolCall, decision: ToolDecision, output: type[BaseModel] | None) -> ToolRun:
        """Check one call (name, decision, arguments) before anything runs."""
        if call.name == OUTPUT_TOOL and output is not None:
            try:
                output.model_validate(call.arguments)
            except ValidationError as exc:
                return ToolRun(
                    call, output=error_output(f"invalid {OUTPUT_TOOL}: {validation_summary(exc)}"), error=exc
                )
            return ToolRun(call, output="Final result received.")
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            error = ToolArgumentsError(f"there is no tool named {call.name!r} (tools: {known})")
            return ToolRun(call, output=error_output(str(error)), error=error)
        record = self._calls.setdefault(call.id, CallRecord())
        if decision.action == "deny":
            reason = f"the call was denied{': ' + decision.reason if decision.reason else ''}"
            return ToolRun(call, tool, output=error_output(reason), error=PermissionError(reason))
        if decision.action == "replace":
            call = call.model_copy(update={"arguments": dict(decision.arguments or {})})
            record.arguments = dict(call.arguments)  # what it runs with, also when approved or run again
        if record.approval != "approved" and (decision.action == "defer" or tool.requires_approval):
            record.approval = "pending"
            records.announce("deferred", call)
            return ToolRun(call, tool, deferred=True)
        if tool.handler is None:
            return ToolRun(call, tool)
        try:
            return ToolRun(call, tool, kwargs=tool.bind(call, record.key))
        except ToolArgumentsError as exc:
            return ToolRun(call, tool, output=error_output(f"invalid arguments: {exc}"), error=exc)

    def _finished(self, run: ToolRun, value: Any = None, error: BaseException | None = None) -> ToolRun:
        if error is None:
            try:
                run.output = tool_output(value)
                return run
            except ToolOutputError as exc:  # the tool's failure, as if it had raised
                error = exc
        run.output, run.error = error_output(f"{type(error).__name__}: {describe(error)}"), error
        return run

    def _settle(self, runs: list[ToolRun]) -> list[StreamEvent]:
        """Results into the history in call order; failures counted (or raised)."""
        events = []
        for run in runs:
            if run.output is None:  # deferred, stopped, or a ToolSpec without handler (the application answers it)
                continue
            if run.call.id in self._calls:
                self._calls[run.call.id].finished = True
            failure = None
            if run.error is not None and not isinstance(run.error, PermissionError):
                name = run.call.name
                self._failures[name] = self._failures.get(name, 0) + 1
                if self.raise_tool_errors or self._failures[name] > self.tool_retries:
                    why = "failed" if self.raise_tool_errors else f"failed {self._failures[name]} times"
                    raise ToolExecutionError(
                        f"tool {name!r} {why}: {describe(run.error)}", call=run.call, conversation=self
                    ) from run.error
            if run.error is not None:
                failure = ToolExecutionError(f"tool {run.call.name!r}: {describe(run.error)}", call=run.call)
            self._messages.append(ChatMessage.tool(run.call.id, run.output, name=run.call.name))
            events.append(
                StreamEvent.model_construct(
                    type=StreamEventType.TOOL_RESULT, text=run.output, tool_call=run.call, error=failure
                )
            )
        events.extend(
            StreamEvent.model_construct(type=StreamEventType.TOOL_APPROVAL, tool_call=run.call)
            for run in runs
            if run.deferred
        )
        self._save_checkpoint()
        stopped = next((run.stopped_by for run in runs if run.stopped_by is not None), None)
        if stopped is not None:
            raise stopped
        return events

    # -- saving ---------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The conversation as JSON (history with replay data, usage, settings, and the state of
        the last turn's tool calls: approvals, started, finished); tools are functions and
        servers and are given again to :meth:`from_json`, and so are credentials: options and
        headers named like one (``api_key``, ``x-goog-api-key``, ``authorization``, ...) are left out."""
        try:
            options = without_credentials(json.loads(json.dumps(self.options, default=_plain)))
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidInputError(f"a call option cannot be saved as JSON: {exc}") from None
        return json.dumps(
            {
                "format": SAVE_FORMAT,
                "system": self.system,
                "model": self.model,
                "max_steps": self.max_steps,
                "options": options,
                "tools": list(self.tools),
                "usage": self.usage.model_dump(mode="json"),
                "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in self._messages],
                "tool_calls": {call_id: record.model_dump(mode="json") for call_id, record in self._calls.items()},
            },
            ensure_ascii=False,
        )


def output_spec(output: type[BaseModel]) -> ToolSpec:
    if not (isinstance(output, type) and issubclass(output, BaseModel)):
        raise InvalidInputError("output must be a Pydantic model class")
    schema = output.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(name=OUTPUT_TOOL, description=f"Give the final answer as {output.__name__}.", parameters=schema)


def tool_call_event(call: ToolCall) -> StreamEvent:
    return StreamEvent.model_construct(type=StreamEventType.TOOL_CALL, tool_call=call)


def _plain(value: Any) -> Any:
    """A call option that is a model (a built-in tool, thinking options) as the mapping it is
    given back as."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
