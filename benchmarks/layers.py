"""Where llm-core's own time goes, part by part: ``python -m benchmarks.layers``.

Each provider's send is replaced by the SDK object it returned for the loopback server's answer
(one real call first), so what is timed is llm-core alone. Each part is timed in process CPU
time (``time.process_time``, the best of 5 repeats), which a shared machine disturbs far less
than wall time; the whole call is timed the same way, so the parts can be read against it. Per
stream event: the SSE framing of the transport, the plugin's stream parser and the event object
the caller gets.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import timeit
from collections.abc import Callable
from typing import Any

from benchmarks import bodies
from benchmarks.sides import MODELS, PROMPT, PROVIDERS

REPEATS = 5


def cpu_us(fn: Callable[[], object], number: int) -> float:
    """The best of :data:`REPEATS` runs of ``number`` calls, in CPU µs per call."""
    runs = timeit.Timer(fn, timer=time.process_time).repeat(number=number, repeat=REPEATS)
    return min(runs) / number * 1e6


def _provider_and_sdk_objects(provider: str, deltas: int) -> tuple[Any, Any, bytes, Any]:
    """The provider, and what its SDK hands it, taken from one real call and one real stream
    against the loopback server: the chat answer, one text delta's SSE bytes (one chunk per
    event, as the server sends them) and that delta as an SDK event."""
    from benchmarks.server import LoopbackServer
    from benchmarks.sides import core_provider

    with LoopbackServer(deltas=deltas) as server:
        p = core_provider(provider, server.url)
        payload = p.map_chat_request(p.builder.chat(PROMPT))
        answer = p._send_chat(payload)
        events = list(p._send_stream(payload))
    middle = len(events) // 2  # a delta: neither the opening nor the closing events
    raw = (bodies.gemini_stream_events if provider == "gemini" else bodies.openai_stream_events)(
        MODELS[provider], deltas
    )
    return p, answer, raw[middle], events[middle]


def parts(provider: str, deltas: int) -> dict[str, Callable[[], object]]:
    """Each part of a chat call and of a stream event for ``provider``, as a callable doing it
    once (also measured in instructions by :mod:`benchmarks.instructions`)."""
    from llm_core.operation import Cost
    from llm_core.operations import find
    from llm_core.streaming import StreamEvent, TokenType
    from llm_core.transport.body_meter import BodyMeter

    p, answer, chunk, event = _provider_and_sdk_objects(provider, deltas)
    request = p.builder.chat(PROMPT)
    p._send_chat = lambda payload: answer  # the one send of a chat call: the SDK's answer at once
    chat = find("chat_completion")
    meter = BodyMeter(_limits(), time.monotonic(), [], sse=True)
    parser = p.new_stream_parser(request)

    return {
        "whole call (llm-core only)": lambda: p.chat_completion(PROMPT),
        "plan: build and check the request": lambda: p._plan(chat, (PROMPT,), {}),
        "  of which the lone-surrogate check": lambda: _check_surrogates(request, provider),
        "map to the SDK's arguments": lambda: p.map_chat_request(request),
        "retry policy (tenacity loop around one attempt)": lambda: p.retry_policy.call(lambda: None),
        "parse the answer": lambda: p.parse_chat_response(answer, request),
        "parse and price the answer": lambda: p.executor.costed(
            p.parse_chat_response(answer, request), request, Cost.TOKENS
        ),
        "per event: SSE framing and limits": lambda: list(meter.feed(chunk)),
        "per event: stream parser (with its event)": lambda: parser.feed(event),
        "per event: the StreamEvent alone": lambda: StreamEvent.token("word ", TokenType.LLM_RESPONSE),
    }


def measure(provider: str, number: int, deltas: int) -> dict[str, float]:
    """CPU µs of each part of a chat call and of a stream event for ``provider``."""
    return {name: cpu_us(fn, number) for name, fn in parts(provider, deltas).items()}


def _check_surrogates(request: Any, provider: str) -> None:
    from llm_core.requests import refuse_surrogates

    for name in ("messages", "tools", "stop"):  # as RequestBuilder.chat checks them
        refuse_surrogates(getattr(request, name), name, provider)


def _limits() -> Any:
    from llm_core.transport.limits import Limits

    return Limits(
        provider="bench",
        timeout=60.0,
        first_event_timeout=60.0,
        idle_timeout=60.0,
        stream_deadline=None,
        max_response_bytes=64 * 2**20,
        max_event_bytes=2**20,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=5000, help="calls per repeat (default 5000)")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("LLM_CORE_PLUGINS", "core-gemini-plugin,core-openai-plugin")
    results = {provider: measure(provider, args.number, deltas=50) for provider in PROVIDERS}
    load = os.getloadavg()
    print(
        f"CPU µs per call or event, best of {REPEATS} x {args.number}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"| part | {' | '.join(PROVIDERS)} |\n|---|{'---|' * len(PROVIDERS)}")
    for part in results[PROVIDERS[0]]:
        print(f"| {part} | " + " | ".join(f"{results[p][part]:.1f}" for p in PROVIDERS) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"load": load, "results": results}, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
