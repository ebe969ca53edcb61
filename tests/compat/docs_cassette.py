"""Author ``cassettes/openai/compatible_chat_completions.json``, the cassette that answers the
named-endpoint samples of docs/openai.md: the samples' own calls run through the real provider and
SDK, answered by an Ollama-shaped server (``message.reasoning`` and ``delta.reasoning`` as Ollama
sends them, reference recording 14; the stream laid out as recording 2), and the exchange is
written as a readable cassette. Run from the repository root:

    python -m tests.compat.docs_cassette
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from llm_core.registry import Registry
from llm_core.testing.cassettes import ReadableJSONSerializer
from tests.compat.chat_upstream import CREATED, usage
from tests.openai.cassette_author import Wire, wired
from tests.openai.openai_scenarios import CASSETTES

PATH = CASSETTES / "compatible_chat_completions.json"
REASONING = "The user wants the capital of France. That is Paris."


def chunk(choices: list[dict[str, Any]], **more: Any) -> str:
    data = {"id": "chatcmpl-412", "object": "chat.completion.chunk", "created": CREATED, "model": "qwen3:0.6b",
            "system_fingerprint": "fp_ollama", "choices": choices, **more}  # fmt: skip
    return f"data: {json.dumps(data)}\n\n"


def chat(body: Any, _: httpx2.Request) -> tuple[int, Any, dict[str, str]]:
    message = {"role": "assistant", "content": "Paris.", "reasoning": REASONING}
    return 200, {
        "id": "chatcmpl-411", "object": "chat.completion", "created": CREATED, "model": body["model"],
        "system_fingerprint": "fp_ollama", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage(18, 31),
    }, {}  # fmt: skip


def stream(body: Any, _: httpx2.Request) -> tuple[int, Any, dict[str, str]]:
    deltas = [{"role": "assistant", "content": "", "reasoning": "Count: "}, {"content": "", "reasoning": "1, 2, 3."},
              {"content": "One,"}, {"content": " two,"}, {"content": " three."}]  # fmt: skip
    events = [chunk([{"index": 0, "delta": delta, "finish_reason": None}]) for delta in deltas]
    events.append(chunk([{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]))
    events.append(chunk([], usage=usage(14, 22)))
    return 200, "".join(events) + "data: [DONE]\n\n", {}


def main() -> None:
    wire = Wire([chat, stream])
    registry = Registry.discover()
    with wired(wire):
        # the calls of the docs sample, as written there
        registry.add_endpoint("local", plugin="openai", preset="ollama", models=["qwen3:0.6b"])
        local = registry.get("local")
        local.chat_completion("What is the capital of France? One word.")
        list(local.stream_text("Count to three in words."))
    for interaction in wire.interactions:  # the Wire adds OpenAI's own response headers: Ollama sends none of them
        headers = interaction["response"]["headers"]
        for name in ("openai-processing-ms", "openai-version", "x-request-id"):
            headers.pop(name, None)
    PATH.write_text(ReadableJSONSerializer.serialize({"interactions": wire.interactions, "version": 1}))
    print(PATH)


if __name__ == "__main__":
    main()
