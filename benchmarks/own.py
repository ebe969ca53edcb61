"""llm-core's own work per call, as cold as in the benchmark: the precise measure of a code change.

    python -m benchmarks.own openai                                # main, and its noise floor
    python -m benchmarks.own openai --patch mymod:candidate        # candidate against main
    python -m benchmarks.own gemini --patch a:one --patch b:other --blocks 8

The difference of two noisy medians (a call through llm-core minus a bare SDK call, ~1 ms each)
moves by 5 to 10 µs from run to run, which hides changes of a few µs. This measures llm-core's side
alone: ``chat_completion`` and ``aio.chat_completion`` with the plugin's send replaced by one that
returns a real SDK response (captured once from the loopback server), and the build, map and parse
steps on their own. Each timing follows a real bare SDK call, as every llm-core call does in the
benchmark's A B A B interleave, so caches are as cold as there. Two providers running the same
code agree within a few tenths of a µs.

Each ``--patch module:function`` is called with its own provider and may replace its methods
(``provider.parse_chat_response = ...``); "main" runs the code as it is. Variants take turns in
blocks (one variant's code at a time, as in a benchmark run), and the medians over all blocks are
printed with each variant's saving over main.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from benchmarks import coldstart
from benchmarks.server import LoopbackServer
from benchmarks.sides import MESSAGES, PROVIDERS, build, core_provider

#: What each variant reports (medians, µs): the whole call, sync and async, and its three steps.
MEASURES = ("sync", "async", "build", "map", "parse")
Patch = Callable[[Any], None]


def load_patch(spec: str) -> Patch:
    """``module:function`` → the function."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SystemExit(f"--patch takes module:function, not {spec!r}")
    patch: Patch = getattr(importlib.import_module(module), name)
    return patch


def _stubbed(provider: str, base_url: str, patch: Patch | None, captured: Any) -> Any:
    """A provider like the benchmark's llm-core side whose sends return ``captured`` at once."""
    p = core_provider(provider, base_url)
    if patch is not None:
        patch(p)

    def send(payload: dict[str, Any]) -> Any:
        return captured

    async def asend(payload: dict[str, Any]) -> Any:
        return captured

    p._send_chat = send
    p._asend_chat = asend
    return p


def _finish(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (its send is stubbed) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the call suspended: its send is not stubbed")


def measure(
    provider: str,
    base_url: str,
    patches: Mapping[str, Patch | None],
    *,
    blocks: int = 6,
    per_block: int = 300,
    warmup: int = 50,
) -> dict[str, dict[str, float]]:
    """Medians (µs) of :data:`MEASURES` per variant: ``blocks`` turns of each variant, each of
    ``warmup`` + ``per_block`` iterations, every timing right after a bare SDK call."""
    bare = build(provider, "bare", base_url).call
    probe = core_provider(provider, base_url)
    request = probe.build_chat_request(MESSAGES)
    captured = probe._send_chat(probe.map_chat_request(request))  # a real SDK response, once
    variants = {name: _stubbed(provider, base_url, patch, captured) for name, patch in patches.items()}
    samples: dict[str, dict[str, list[float]]] = {name: {m: [] for m in MEASURES} for name in variants}
    clock = time.perf_counter_ns
    for turn in range(blocks):
        order = list(variants.items())
        for name, p in order if turn % 2 == 0 else order[::-1]:
            aio, kept = p.aio, samples[name]
            for i in range(warmup + per_block):
                bare()
                start = clock()
                p.chat_completion(MESSAGES)
                sync = clock() - start
                bare()
                start = clock()
                _finish(aio.chat_completion(MESSAGES))
                asynchronous = clock() - start
                bare()
                start = clock()
                built = p.build_chat_request(MESSAGES)
                mapped_at = clock()
                p.map_chat_request(built)
                parsed_at = clock()
                p.parse_chat_response(captured, built)
                done = clock()
                if i >= warmup:
                    for measure_name, ns in zip(
                        MEASURES,
                        (sync, asynchronous, mapped_at - start, parsed_at - mapped_at, done - parsed_at),
                        strict=True,
                    ):
                        kept[measure_name].append(ns / 1000)
    return {name: {m: statistics.median(v) for m, v in kept.items()} for name, kept in samples.items()}


def run(provider: str, patches: Mapping[str, Patch | None], **counts: int) -> dict[str, dict[str, float]]:
    """:func:`measure` against a loopback server, in the benchmark's clean environment (restored
    afterwards)."""
    saved_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(coldstart.bench_env())
    try:
        with LoopbackServer(deltas=20) as server:
            return measure(provider, server.url, patches, **counts)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)


def render(medians: Mapping[str, Mapping[str, float]]) -> str:
    """One line per variant: its medians, and (for candidates) what each saves against main."""
    main = medians["main"]
    lines = []
    for name, values in medians.items():
        line = f"{name:>24}  " + "  ".join(f"{m} {values[m]:6.2f}" for m in MEASURES)
        if name != "main":
            line += "   saved " + " ".join(f"{main[m] - values[m]:+.2f}" for m in MEASURES)
        lines.append(line)
    return "\n".join(lines) + "\n(µs, medians; saved: main minus the variant, in the same order)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.own", description=__doc__.split("\n\n")[0])
    parser.add_argument("provider", choices=PROVIDERS)
    parser.add_argument("--patch", action="append", default=[], help="module:function of a candidate (repeatable)")
    parser.add_argument("--blocks", type=int, default=6, help="turns of each variant (default 6)")
    parser.add_argument("--per-block", type=int, default=300, help="timed iterations per turn (default 300)")
    args = parser.parse_args(argv)
    patches: dict[str, Patch | None] = {"main": None, "main again": None} if not args.patch else {"main": None}
    patches.update({spec: load_patch(spec) for spec in args.patch})
    print(render(run(args.provider, patches, blocks=args.blocks, per_block=args.per_block)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
