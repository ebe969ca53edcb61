"""In-situ A/B of a code change: two llm-core providers and the bare SDK in one process.

    python -m benchmarks.ab openai async                         # A/A: the noise floor
    python -m benchmarks.ab openai async --patch mymod:candidate # A/B: candidate against main
    python -m benchmarks.ab gemini sync --runs 8 --iterations 2000

Both providers are built from the registry exactly like the benchmark's llm-core side. With
``--patch module:function`` the function is called once with the *candidate* provider and may
replace its methods (``provider.parse_chat_response = ...``); the other provider runs the code as
it is. Without it both run the same code (an A/A run), which shows how far two identical sides
drift apart on this machine.

Every iteration makes one call on each of the three sides, taking the six orders of the sides in
turn (no side always follows the same one). Per run the median per-call time of each llm-core
side minus the bare SDK's is printed, and the candidate's saving (positive: the candidate is
faster). Pieces of code measured on their own, or after a sleep, mislead: measure changes here,
repeat the run, and believe only a saving that holds across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import itertools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks import coldstart
from benchmarks.server import LoopbackServer
from benchmarks.sides import PROVIDERS, build, core_provider, core_side

WARMUP = 300


@dataclass(frozen=True)
class Comparison:
    """Median per-call µs over the bare SDK of the candidate and of main, in one run."""

    candidate: float
    main: float

    @property
    def saved(self) -> float:
        return self.main - self.candidate


def load_patch(spec: str | None) -> Callable[[Any], None] | None:
    """``module:function`` → the function (``None`` for an A/A run)."""
    if not spec:
        return None
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SystemExit(f"--patch takes module:function, not {spec!r}")
    patch: Callable[[Any], None] = getattr(importlib.import_module(module), name)
    return patch


async def _one_run(calls: dict[str, Callable[[], Any]], iterations: int, *, warmup: int, awaited: bool) -> Comparison:
    clock = time.perf_counter_ns
    samples: dict[str, list[float]] = {name: [] for name in calls}
    orders = list(itertools.permutations(calls))
    for i in range(warmup + iterations):
        for name in orders[i % len(orders)]:
            start = clock()
            result = calls[name]()
            if awaited:
                await result
            elapsed = (clock() - start) / 1000
            if i >= warmup:
                samples[name].append(elapsed)
    bare = statistics.median(samples["bare"])
    return Comparison(
        candidate=statistics.median(samples["candidate"]) - bare, main=statistics.median(samples["main"]) - bare
    )


def run(
    provider: str,
    mode: str,
    patch: Callable[[Any], None] | None,
    *,
    runs: int,
    iterations: int,
    warmup: int = WARMUP,
) -> list[Comparison]:
    """``runs`` A/B runs of ``iterations`` calls per side (after ``warmup`` calls) against a
    loopback server, in the benchmark's clean environment (restored afterwards)."""
    saved_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(coldstart.bench_env())
    try:
        return _runs(provider, mode, patch, runs=runs, iterations=iterations, warmup=warmup)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)


def _runs(
    provider: str, mode: str, patch: Callable[[Any], None] | None, *, runs: int, iterations: int, warmup: int
) -> list[Comparison]:
    results: list[Comparison] = []
    with LoopbackServer(deltas=20) as server:
        candidate = core_provider(provider, server.url)
        if patch is not None:
            patch(candidate)
        sides = {
            "candidate": core_side(provider, candidate),
            "main": build(provider, "core", server.url),
            "bare": build(provider, "bare", server.url),
        }
        calls: dict[str, Callable[[], Any]] = {
            name: side.call if mode == "sync" else side.acall for name, side in sides.items()
        }

        async def every_run() -> None:  # one event loop: the bare SDK's async client is bound to it
            for number in range(1, runs + 1):
                result = await _one_run(calls, iterations, warmup=warmup, awaited=mode == "async")
                results.append(result)
                print(
                    f"run {number}: candidate {result.candidate:+.1f} µs, main {result.main:+.1f} µs"
                    f" over the bare SDK; saved {result.saved:+.1f} µs",
                    flush=True,
                )

        asyncio.run(every_run())
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("provider", choices=PROVIDERS)
    parser.add_argument("mode", choices=("sync", "async"))
    parser.add_argument("--patch", help="module:function applied to the candidate provider (none: an A/A run)")
    parser.add_argument("--runs", type=int, default=5, help="A/B runs (default 5)")
    parser.add_argument("--iterations", type=int, default=2000, help="timed calls per side and run (default 2000)")
    args = parser.parse_args(argv)
    patch = load_patch(args.patch)
    results = run(args.provider, args.mode, patch, runs=args.runs, iterations=args.iterations)
    saved = [r.saved for r in results]
    label = "A/B" if patch is not None else "A/A (no patch)"
    print(
        f"{label}, {args.provider} {args.mode}: saved per call, median {statistics.median(saved):+.1f} µs,"
        f" range [{min(saved):+.1f}, {max(saved):+.1f}] over {len(saved)} run(s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
