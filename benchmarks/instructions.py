"""What llm-core costs in instructions: ``python -m benchmarks.instructions`` (needs valgrind).

Wall and CPU time on a shared machine move with its load; the number of instructions a process
executes does not. Each measure runs a fresh interpreter under valgrind's callgrind twice, doing
the measured thing ``low`` and then ``high`` times after a warm-up, and divides the difference of
the two instruction counts (Ir, user space only) by ``high - low``: what one call or event costs,
with start-up and warm-up cancelled out. The loopback server runs in a process of its own, not
under valgrind; hash randomisation is fixed, so a repeat gives the same count to within a few
hundred instructions.

Per provider it measures a call over the loopback server as the user's view makes it (the bare
SDK, and llm-core: :mod:`benchmarks.sides`), llm-core's SDK call alone (the send: its guarded
client, its payload) and every part of :mod:`benchmarks.layers` (llm-core's own path, the send
replaced by the SDK's answer). The gap between llm-core and the SDK is then accounted for: the
own path plus what the send costs beyond the SDK's call.

An instruction is not a unit of time (a cache miss costs more than an add, and system calls are
not counted), so these counts complement the timed benchmark; they do not replace it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from benchmarks.coldstart import ROOT, bench_env
from benchmarks.sides import PROMPT, PROVIDERS

#: The measures of a call over the loopback server (the others are the parts of benchmarks.layers).
SDK_CALL = "bare SDK call (user's view)"
CORE_CALL = "llm-core call (user's view)"
CORE_SEND = "llm-core's send alone (SDK call through its guarded client)"
ASYNC_SDK_CALL = "bare SDK async call (user's view)"
ASYNC_CORE_CALL = "llm-core async call (user's view)"
CALLS = (SDK_CALL, CORE_CALL, CORE_SEND, ASYNC_SDK_CALL, ASYNC_CORE_CALL)
OWN_PATH = "whole call (llm-core only)"
WARM_UP = 20
_COLLECTED = re.compile(rb"Collected : (\d+)")


@dataclass(frozen=True)
class Counts:
    """How many times each run does the measured thing (after :data:`WARM_UP` more)."""

    call_low: int = 20
    call_high: int = 1020
    part_low: int = 100
    part_high: int = 1100

    def of(self, measure: str) -> tuple[int, int]:
        return (self.call_low, self.call_high) if measure in CALLS else (self.part_low, self.part_high)


QUICK = Counts(call_low=10, call_high=40, part_low=50, part_high=250)


# -- the child: one measure, done a number of times ----------------------------------------------


def _workload(provider: str, measure: str) -> Callable[[], object]:
    if measure not in CALLS:
        from benchmarks import layers

        return layers.parts(provider, deltas=50)[measure]
    from benchmarks.server import LoopbackServer
    from benchmarks.sides import build, core_provider

    server = LoopbackServer(deltas=50).__enter__()  # lives as long as the child
    if measure == CORE_SEND:
        p = core_provider(provider, server.url)
        payload = p.map_chat_request(p.builder.chat(PROMPT))
        return lambda: p._send_chat(payload)
    side = build(provider, "sdk" if measure in (SDK_CALL, ASYNC_SDK_CALL) else "core", server.url)
    if measure in (ASYNC_SDK_CALL, ASYNC_CORE_CALL):  # one call awaited at a time, on one loop
        loop = asyncio.new_event_loop()
        return lambda: loop.run_until_complete(side.acall())
    return side.call


def child(provider: str, measure: str, count: int) -> None:
    work = _workload(provider, measure)
    for _ in range(WARM_UP + count):
        work()


# -- the parent: each measure under valgrind, twice ---------------------------------------------


def instructions(run: subprocess.CompletedProcess[bytes]) -> int:
    """The instruction count callgrind reports at the end of a run."""
    found = _COLLECTED.search(run.stderr)
    if run.returncode != 0 or found is None:
        tail = run.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"the measured process failed (exit {run.returncode}):\n{tail}")
    return int(found.group(1))


def _run(provider: str, measure: str, count: int) -> int:
    env = bench_env()
    env["PYTHONHASHSEED"] = "0"
    if "PYTHONPATH" in os.environ:  # a work tree measured with the installed environment
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "benchmarks.instructions",
        "--child",
        provider,
        measure,
        str(count),
    ]
    return instructions(subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=1800, check=False))


def per_unit(provider: str, measure: str, counts: Counts) -> float:
    """Instructions per call (or event) of ``measure``: the difference of two runs."""
    low, high = counts.of(measure)
    return (_run(provider, measure, high) - _run(provider, measure, low)) / (high - low)


def account(results: dict[str, float]) -> dict[str, float]:
    """The gap between llm-core's call and the SDK's, and what it is made of: llm-core's own path
    and its send beyond the SDK's call; ``unaccounted`` is what the two leave (the measures' own
    difference, a few per cent of the gap)."""
    gap = results[CORE_CALL] - results[SDK_CALL]
    send = results[CORE_SEND] - results[SDK_CALL]
    return {
        "ratio": results[CORE_CALL] / results[SDK_CALL],
        "gap": gap,
        "own path": results[OWN_PATH],
        "send beyond the SDK's": send,
        "unaccounted": gap - results[OWN_PATH] - send,
    }


def measure_all(providers: list[str], measures: list[str], counts: Counts, jobs: int) -> dict[str, dict[str, float]]:
    tasks = [(provider, m) for provider in providers for m in measures]
    with ThreadPoolExecutor(jobs) as pool:  # each task is two valgrind processes, one after the other
        done = list(pool.map(lambda task: per_unit(task[0], task[1], counts), tasks))
    results: dict[str, dict[str, float]] = {provider: {} for provider in providers}
    for (provider, m), value in zip(tasks, done, strict=True):
        results[provider][m] = value
    return results


def markdown(results: dict[str, dict[str, float]]) -> str:
    providers = list(results)
    lines = [f"| instructions (thousands) | {' | '.join(providers)} |", f"|---|{'---|' * len(providers)}"]
    for m in results[providers[0]]:
        lines.append(f"| {m} | " + " | ".join(f"{results[p][m] / 1000:,.1f}" for p in providers) + " |")
    if all({SDK_CALL, CORE_CALL, CORE_SEND, OWN_PATH} <= set(results[p]) for p in providers):
        accounts = {p: account(results[p]) for p in providers}
        ratios = " | ".join(f"{accounts[p]['ratio']:.3f}x" for p in providers)
        lines.append(f"| **llm-core / bare SDK** | {ratios} |")
        for row in ("gap", "own path", "send beyond the SDK's", "unaccounted"):
            cells = " | ".join(f"{accounts[p][row] / 1000:+,.1f}" for p in providers)
            lines.append(f"| {'gap' if row == 'gap' else '  ' + row} | {cells} |")
    if all({ASYNC_SDK_CALL, ASYNC_CORE_CALL} <= set(results[p]) for p in providers):
        ratios = " | ".join(f"{results[p][ASYNC_CORE_CALL] / results[p][ASYNC_SDK_CALL]:.3f}x" for p in providers)
        lines.append(f"| **llm-core / bare SDK, async** | {ratios} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--providers", default=",".join(PROVIDERS), help="comma-separated (default: all)")
    parser.add_argument("--measures", help="comma-separated measure names (default: every one)")
    parser.add_argument("--quick", action="store_true", help="tiny counts: checks the harness")
    parser.add_argument("--jobs", type=int, default=2, help="measures run at once (default 2)")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--child", nargs=3, metavar=("PROVIDER", "MEASURE", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        provider, measure, count = args.child
        child(provider, measure, int(count))
        return 0
    if shutil.which("valgrind") is None:
        print("benchmarks.instructions needs valgrind (apt install valgrind)", file=sys.stderr)
        return 2
    from benchmarks import layers

    providers = [p for p in args.providers.split(",") if p]
    # the parts' names as benchmarks.layers builds them (one real exchange with a loopback server)
    measures = args.measures.split(",") if args.measures else [*CALLS, *layers.parts(providers[0], deltas=5)]
    results = measure_all(providers, measures, QUICK if args.quick else Counts(), args.jobs)
    print(markdown(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
