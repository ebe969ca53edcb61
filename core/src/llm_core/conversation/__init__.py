"""Conversations with automatic tool loops, over one provider or a fallback router.

>>> from llm_core.testing import FakeProvider, FakeReply
>>> def add(a: int, b: int) -> int:
...     "Add two numbers."
...     return a + b
>>> fake = FakeProvider(replies=[FakeReply.calling(("add", {"a": 2, "b": 3})), FakeReply(content="5")])
>>> chat = fake.conversation(tools=[add])
>>> chat.send("What is 2 + 3?").content
'5'
>>> [m.role.value for m in chat.messages]
['user', 'assistant', 'tool', 'assistant']

See ``docs/conversations.md``.
"""

from llm_core.conversation.backends import ChatAPI, FallbackRouter, ProviderBackend, RouterBackend
from llm_core.conversation.calls import CallRecord, ToolDecision
from llm_core.conversation.conversation import AsyncConversation, Conversation
from llm_core.conversation.errors import (
    ConversationError,
    MaxStepsError,
    ToolExecutionError,
    ToolInterruptedError,
    ToolServerError,
)
from llm_core.conversation.state import OUTPUT_TOOL, ConversationResponse
from llm_core.conversation.tools import Tool, ToolSource, tool_from_function

__all__ = [
    "OUTPUT_TOOL",
    "AsyncConversation",
    "CallRecord",
    "ChatAPI",
    "Conversation",
    "ConversationError",
    "ConversationResponse",
    "FallbackRouter",
    "MaxStepsError",
    "ProviderBackend",
    "RouterBackend",
    "Tool",
    "ToolDecision",
    "ToolExecutionError",
    "ToolInterruptedError",
    "ToolServerError",
    "ToolSource",
    "tool_from_function",
]
