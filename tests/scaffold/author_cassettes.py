"""Author the conformance cassettes that ``llm-core new-plugin`` ships.

    python -m tests.scaffold.author_cassettes [OUT_DIR]   # from the repository root

Renders the scaffold under a placeholder name, runs every conformance scenario it claims through
the generated provider (real httpx2 client, real request bodies), answers each request with a
response in the shape of the OpenAI Chat Completions / Embeddings / Models API (see
``openai/types/chat/chat_completion.py``, ``chat_completion_chunk.py``,
``create_embedding_response.py``, ``model.py`` in the installed SDK), records the traffic with
llm-core's own recorder (vcrpy, readable JSON, key headers filtered), and writes the cassettes
back into ``templates/plugin/cassettes/conformance/`` with the placeholder turned into template
tokens. Re-run it whenever the generated request mapper or the kit's scenario inputs change.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

PLACEHOLDER = "zzauthorzz"
ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "core" / "src" / "llm_core" / "cli" / "templates" / "plugin" / "cassettes" / "conformance"
CREATED = 1764460800
SCENARIOS = (
    "models", "chat", "error", "stream", "stream_error", "tools", "tool_loop", "json", "vision", "embeddings",
    "decision",
)
CHAT_MODEL = f"{PLACEHOLDER}-chat"
EMBED_MODEL = f"{PLACEHOLDER}-embed"

ANSWERS = {
    "chat": "Hello there, reader, and welcome!",
    "json": '{"name":"Paris","country":"France","population":2102650}',
    "vision": "Red.",
    "decision": '{"needs_human":"yes","category":"billing","urgency":1}',
    "tools": "It is sunny in Paris right now, at 18 °C.",
    "tool_loop": "It is sunny in Paris right now, at 18 °C.",
}
STREAM_PIECES = ["One", ",", " two", ",", " three", ",", " four", ",", " five", "."]
#: (prompt, visible completion[, reasoning]) tokens. The chat answer comes from a reasoning model:
#: its ``completion_tokens`` include the reasoning tokens, as OpenAI reports them (the o3-mini
#: answer in the reference recording test_openai/test_max_completion_tokens[o3-mini].yaml:
#: completion 87 with reasoning 64, total 94 = prompt + completion).
TOKENS: dict[str, tuple[int, ...]] = {
    "chat": (21, 9, 64), "json": (96, 19), "vision": (97, 2), "decision": (268, 17), "tools": (118, 15),
    "tool_loop": (121, 15),
}


def _id(prefix: str, seed: str, length: int = 29) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(alphabet[int(digest[i : i + 2], 16) % len(alphabet)] for i in range(0, 2 * length, 2))


def _usage(prompt: int, completion: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion + reasoning,
        "total_tokens": prompt + completion + reasoning,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def completion(seed: str, message: dict[str, Any], finish: str, tokens: tuple[int, ...]) -> dict[str, Any]:
    return {
        "id": _id("chatcmpl-", seed),
        "object": "chat.completion",
        "created": CREATED,
        "model": CHAT_MODEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(*tokens),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def text_message(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def stream_body(seed: str) -> str:
    base = {
        "id": _id("chatcmpl-", seed),
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": CHAT_MODEL,
        "service_tier": "default",
        "system_fingerprint": None,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
        }

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chunk({"content": piece}) for piece in STREAM_PIECES]
    chunks.append(chunk({}, "stop"))
    chunks.append({**base, "choices": [], "usage": _usage(17, len(STREAM_PIECES))})
    return "".join(f"data: {json.dumps(c, separators=(',', ':'), ensure_ascii=False)}\n\n" for c in chunks) + (
        "data: [DONE]\n\n"
    )


def respond(scenario: str, request: httpx2.Request) -> tuple[int, dict[str, Any] | str]:
    """The authored answer to ``request`` in ``scenario``: status and JSON body (or SSE text)."""
    path = request.url.path
    if scenario in ("error", "stream_error"):
        return 401, {
            "error": {
                "message": "Incorrect API key provided. Check the key and try again.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    if path.endswith("/models"):
        model = {"object": "model", "created": CREATED, "owned_by": PLACEHOLDER}
        return 200, {"object": "list", "data": [{"id": CHAT_MODEL, **model}, {"id": EMBED_MODEL, **model}]}
    body = json.loads(request.content)
    if path.endswith("/embeddings"):
        vectors = [
            [
                round(((int(c, 16) * 37 + i * 11) % 200) / 1000 - 0.1, 6)
                for c in hashlib.sha256(text.encode()).hexdigest()[:16]
            ]
            for i, text in enumerate(body["input"])
        ]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        return 200, {
            "object": "list",
            "data": data,
            "model": EMBED_MODEL,
            "usage": {"prompt_tokens": 14, "total_tokens": 14},
        }
    if body.get("stream"):
        return 200, stream_body(scenario)
    if scenario in ("tools", "tool_loop") and not any(m["role"] == "tool" for m in body["messages"]):
        call = {
            "id": _id("call_", scenario, 24),
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
        seed = "tools-call" if scenario == "tools" else "tool_loop-call"
        return 200, completion(seed, text_message(None, [call]), "tool_calls", (71, 16))
    return 200, completion(scenario, text_message(ANSWERS[scenario]), "stop", TOKENS[scenario])


def answering(scenario: Callable[[], str]) -> Callable[..., httpx2.Response]:
    def handle_request(self: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
        status, body = respond(scenario(), request)
        if isinstance(body, str):
            headers = {"content-type": "text/event-stream; charset=utf-8"}
            content = body.encode()
        else:
            headers = {"content-type": "application/json"}
            content = json.dumps(body, ensure_ascii=False, indent=2).encode()
        headers["x-request-id"] = _id("req_", f"{scenario()}{request.content!r}", 32)
        return httpx2.Response(status, headers=headers, content=content, request=request)

    return handle_request


#: Headers a shipped template must not carry: content-length changes with the rendered plugin name,
#: user-agent with the installed httpx2 (so the templates would go stale with each release of it).
VOLATILE_HEADERS = ("content-length", "user-agent")


def without_volatile_headers(text: str) -> str:
    """Drop the headers that depend on the rendered name or on a dependency's version."""
    cassette = json.loads(text)
    for interaction in cassette["interactions"]:
        for side in ("request", "response"):
            for name in VOLATILE_HEADERS:
                interaction[side]["headers"].pop(name, None)
    return json.dumps(cassette, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else TEMPLATES
    current = {"scenario": ""}
    # vcrpy wraps the transport method it finds when it is first imported: install the authored
    # answers first, so that recording captures them as if they came from the network.
    assert "vcr" not in sys.modules
    httpx2.HTTPTransport.handle_request = answering(lambda: current["scenario"])  # type: ignore[method-assign]

    from llm_core.cli.scaffold import write_plugin
    from llm_core.testing.cassettes import use_cassette
    from llm_core.testing.scenarios import run_scenario

    with tempfile.TemporaryDirectory() as tmp:
        project = write_plugin(PLACEHOLDER, Path(tmp))
        shutil.rmtree(project / "cassettes", ignore_errors=True)
        sys.path.insert(0, str(project / "src"))  # the generated plugin: not installed, only written
        provider_module = __import__(f"llm_core_{PLACEHOLDER}.provider", fromlist=["x"])
        provider_class = getattr(provider_module, f"{PLACEHOLDER.capitalize()}Provider")
        recorded = Path(tmp) / "recorded"
        for scenario in SCENARIOS:
            current["scenario"] = scenario
            provider = provider_class(api_key="test-key")
            with use_cassette(recorded / f"{scenario}.json", mode="all"):
                results = run_scenario(provider, scenario)
            print(f"{scenario}: {[type(r).__name__ for r in results]}")
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.json.tmpl"):
            old.unlink()
        for path in sorted(recorded.glob("*.json")):
            text = without_volatile_headers(path.read_text(encoding="utf-8"))
            text = text.replace(f"api.{PLACEHOLDER}.example", "api.{{ host }}.example").replace(
                PLACEHOLDER, "{{ identifier }}"
            )
            (out / f"{path.name}.tmpl").write_text(text, encoding="utf-8")
    print(f"wrote {len(SCENARIOS)} cassettes to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
