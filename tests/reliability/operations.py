"""Every provider operation once, as a (sync, async) pair of calls with valid inputs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from upstreams import PNG_1X1

from llm_core.messages import ImagePart

QUESTIONS = [{"key": "relevant", "kind": "yes_no", "instructions": "Is the candidate relevant?"}]
TOOLS = [{"name": "get_weather", "description": "Weather for a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]

#: operation → (sync call, async call)
OPERATIONS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Awaitable[Any]]]] = {
    "chat_completion": (lambda p: p.chat_completion("hi"), lambda p: p.aio.chat_completion("hi")),
    "complete": (lambda p: p.complete("hi"), lambda p: p.aio.complete("hi")),
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
