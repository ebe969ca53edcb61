"""Every provider operation once, as a (sync, async) pair of calls with valid inputs that the
loopback upstreams answer. The calls are written out (not made from llm_core's examples) so that
each input fits what upstreams.py emulates; test_every_operation.py checks that every operation
llm_core declares is either here or in NOT_HERE with the reason."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from llm_core.messages import ImagePart
from tests.reliability.upstreams import PNG_1X1

QUESTIONS = [{"key": "relevant", "kind": "yes_no", "instructions": "Is the candidate relevant?"}]
TOOLS = [{"name": "get_weather", "description": "Weather for a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]

#: operation → (sync call, async call)
OPERATIONS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Awaitable[Any]]]] = {
    "chat_completion": (lambda p: p.chat_completion("hi"), lambda p: p.aio.chat_completion("hi")),
    "complete": (lambda p: p.complete("hi"), lambda p: p.aio.complete("hi")),
    "generate_text": (lambda p: p.generate_text("hi"), lambda p: p.aio.generate_text("hi")),
    "chat_completion_with_tools": (
        lambda p: p.chat_completion_with_tools("Weather in Paris?", TOOLS),
        lambda p: p.aio.chat_completion_with_tools("Weather in Paris?", TOOLS),
    ),
    "analyze_image": (
        lambda p: p.analyze_image(ImagePart(data=PNG_1X1, mime_type="image/png")),
        lambda p: p.aio.analyze_image(ImagePart(data=PNG_1X1, mime_type="image/png")),
    ),
    "generate_json": (lambda p: p.generate_json("a JSON object"), lambda p: p.aio.generate_json("a JSON object")),
    "embeddings": (lambda p: p.embeddings(["one", "two"]), lambda p: p.aio.embeddings(["one", "two"])),
    "generate_image": (lambda p: p.generate_image("a red dot"), lambda p: p.aio.generate_image("a red dot")),
    "generate_image_bytes": (
        lambda p: p.generate_image_bytes("a red dot"),
        lambda p: p.aio.generate_image_bytes("a red dot"),
    ),
    "decide": (
        lambda p: p.decide({"task": "triage", "candidate": "a bug report"}, QUESTIONS),
        lambda p: p.aio.decide({"task": "triage", "candidate": "a bug report"}, QUESTIONS),
    ),
    "available_models": (lambda p: p.available_models(), lambda p: p.aio.available_models()),
}

#: operation → why it is not in OPERATIONS
NOT_HERE = {
    "stream_chat_completion": "a stream; the fault matrix (test_fault_matrix.py) and STREAMS of the security tests",
    "stream_text": "a stream; the fault matrix (test_fault_matrix.py) and STREAMS of the security tests",
    "count_tokens": "upstreams.py does not emulate the token-counting endpoints",
}
