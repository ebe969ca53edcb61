"""Errors of a conversation's tool loop. Each carries the conversation as it stood, so that an
application can inspect it, save it (``to_json``) or go on with it."""

from __future__ import annotations

from typing import Any

from llm_core.errors import LLMError
from llm_core.tools import ToolCall


class ConversationError(LLMError):
    """A conversation could not go on. ``conversation`` is the conversation so far.

    A pickled copy has ``conversation=None``: a conversation holds its provider (whose key
    refuses to be pickled) and its tool functions (often not picklable); save it with
    ``error.conversation.to_json()`` to carry it to another process."""

    def __init__(self, message: str, *, conversation: Any = None, provider: str | None = None) -> None:
        super().__init__(message, provider=provider)
        self.conversation = conversation

    def __reduce__(self) -> tuple[Any, ...]:
        rebuild, (cls, args, state) = super().__reduce__()
        return (rebuild, (cls, args, {**state, "conversation": None}))


class MaxStepsError(ConversationError):
    """The model still asked for tools after ``max_steps`` model calls. The last calls were run
    and their results are in the history: ``send()`` without a message goes on from there."""


class ToolExecutionError(ConversationError):
    """A tool failed (invalid arguments, an exception, a denial) and the conversation was told
    to raise (``raise_tool_errors=True``) or the tool ran out of retries. The tool's own
    exception is the ``__cause__``; ``call`` is the model's call."""

    def __init__(self, message: str, *, call: ToolCall, conversation: Any = None) -> None:
        super().__init__(message, conversation=conversation)
        self.call = call


class ToolInterruptedError(ConversationError):
    """A tool call was started and never finished (the process stopped, or its server died or
    hung while it ran): it is not run again silently. ``call`` is the model's call; answer it
    with ``chat.add_tool_result(call.id, ...)``, tell the model with ``chat.deny(call.id,
    reason)``, or run it once more with ``chat.approve(call.id)``; then ``send()``."""

    def __init__(self, message: str, *, call: ToolCall, conversation: Any = None) -> None:
        super().__init__(message, conversation=conversation)
        self.call = call


class ToolServerError(LLMError):
    """A server that runs tools failed (an MCP server could not start, died, hung past its
    timeout, or answered with something that is not a result). The conversation stops and
    raises it instead of telling the model: whether a call that was running had its effect is
    unknown, so that call is left started (the next ``send()`` raises
    :class:`ToolInterruptedError`). ``server`` is the server's name."""

    def __init__(self, message: str, *, server: str) -> None:
        super().__init__(message)
        self.server = server
