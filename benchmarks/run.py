"""Run the benchmark: llm-core against the bare SDKs over a loopback server, in one run.

    python -m benchmarks                      # the full run (a few minutes), Markdown on stdout
    python -m benchmarks --json out.json --markdown out.md
    python -m benchmarks --quick              # tiny counts: checks the harness end to end
    python -m benchmarks --sections calls,streams --providers openai

Sections: ``cold`` (fresh interpreters), ``calls`` (per-call overhead, sync and async), ``own``
(llm-core's own work per call, with the send stubbed: see :mod:`benchmarks.own`),
``streams`` (time to first event, per-delta cost, sync and async), ``concurrency`` (async
throughput), ``memory`` (RSS and live objects over many calls). ``--check`` exits 1 when a target
is missed (the numbers are noisy: re-run before believing a miss).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import coldstart, measure, memory, own, report
from benchmarks.server import LoopbackServer
from benchmarks.sides import PROVIDERS, Side, build

SECTIONS = ("cold", "calls", "own", "streams", "concurrency", "memory")


@dataclass(frozen=True)
class Counts:
    """How much to run. The defaults are the full benchmark; :meth:`quick` only checks the harness."""

    call_warmup: int = 200
    call_rounds: int = 10
    calls_per_round: int = 400  # 10 x 400 = 4,000 timed calls per side: ±2-4 µs on the difference
    own_blocks: int = 4
    own_per_block: int = 300
    deltas: int = 500
    stream_warmup: int = 3
    stream_rounds: int = 10
    streams_per_round: int = 20  # 200 streams per side
    concurrent_total: int = 1000
    in_flight: int = 50
    concurrency_rounds: int = 15
    memory_calls: int = 10_000
    memory_warmup: int = 500
    cold_runs: int = 7
    first_call_runs: int = 5

    @classmethod
    def quick(cls) -> Counts:
        return cls(
            call_warmup=3,
            call_rounds=2,
            calls_per_round=5,
            own_blocks=1,
            own_per_block=3,
            deltas=20,
            stream_warmup=1,
            stream_rounds=2,
            streams_per_round=1,
            concurrent_total=20,
            in_flight=5,
            concurrency_rounds=1,
            memory_calls=40,
            memory_warmup=5,
            cold_runs=1,
            first_call_runs=1,
        )


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _same_request(server: LoopbackServer, sides: dict[str, Side]) -> dict[str, Any]:
    """Send one chat and one stream request from each side; compare what the server received."""
    seen: dict[str, dict[str, Any]] = {}
    for name, side in sides.items():
        side.call()
        seen[name + ":chat"] = server.get("/_bench/last")
        measure.drain(iter(side.stream()))
        seen[name + ":stream"] = server.get("/_bench/last")
    out: dict[str, Any] = {}
    for kind in ("chat", "stream"):
        core, bare = seen["core:" + kind], seen["bare:" + kind]
        core_headers = sorted(tuple(h) for h in core["headers"] if h[0] != "host")
        bare_headers = sorted(tuple(h) for h in bare["headers"] if h[0] != "host")
        out[kind] = {
            "target": core["target"],
            "same_target": core["target"] == bare["target"],
            "same_body": core["body"] == bare["body"],
            "same_headers": core_headers == bare_headers,
            "body": core["body"],
            "header_differences": sorted(set(core_headers) ^ set(bare_headers)),
        }
    return out


async def _async_sections(
    pairs: dict[str, dict[str, Side]], counts: Counts, sections: set[str]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {p: {} for p in pairs}
    for provider, sides in pairs.items():
        if "calls" in sections:
            _log(f"{provider}: async calls")
            series = await measure.acalls(
                {n: s.acall for n, s in sides.items()},
                warmup=counts.call_warmup,
                rounds=counts.call_rounds,
                per_round=counts.calls_per_round,
            )
            out[provider]["calls_async"] = measure.compare(series["core"], series["bare"])
        if "streams" in sections:
            _log(f"{provider}: async streams")
            streamed = await measure.astreams(
                {n: s.astream for n, s in sides.items()},
                warmup=counts.stream_warmup,
                rounds=counts.stream_rounds,
                per_round=counts.streams_per_round,
            )
            out[provider]["streams_async"] = _stream_result(streamed)
        if "concurrency" in sections:
            _log(f"{provider}: concurrency {counts.concurrent_total} requests at {counts.in_flight} in flight")
            rates = await measure.throughput(
                {n: s.acall for n, s in sides.items()},
                total=counts.concurrent_total,
                in_flight=counts.in_flight,
                rounds=counts.concurrency_rounds,
                warmup=counts.in_flight * 2,
            )
            out[provider]["concurrency"] = measure.compare(rates["core"], rates["bare"])
    return out


def _stream_result(streamed: dict[str, measure.StreamSeries]) -> dict[str, Any]:
    core, bare = streamed["core"], streamed["bare"]
    return {
        "deltas": {"core": core.deltas, "bare": bare.deltas},
        "first_event_us": measure.compare(core.first, bare.first),
        "per_delta_us": measure.compare(core.per_delta, bare.per_delta),
    }


def run(counts: Counts, sections: set[str], providers: tuple[str, ...]) -> dict[str, Any]:
    os.environ.clear()
    os.environ.update(coldstart.bench_env())
    started = time.time()
    results: dict[str, Any] = {"providers": {}, "cold": {}}
    facts = report.machine_facts()
    with LoopbackServer(deltas=counts.deltas) as server:
        _log(f"loopback server on {server.url}")
        pairs = {p: {s: build(p, s, server.url) for s in ("core", "bare")} for p in providers}
        for provider, sides in pairs.items():
            results["providers"][provider] = {"same_request": _same_request(server, sides)}
        if "cold" in sections:
            _log("cold start: import + discovery + select")
            results["cold"]["select"] = coldstart.select_cost(counts.cold_runs)
            for provider in providers:
                _log(f"cold start: {provider} first call")
                results["cold"].setdefault("first_call", {})[provider] = coldstart.first_call(
                    provider, server.url, counts.first_call_runs
                )
        for provider, sides in pairs.items():
            res = results["providers"][provider]
            if "calls" in sections:
                _log(f"{provider}: sync calls")
                series = measure.calls(
                    {n: s.call for n, s in sides.items()},
                    warmup=counts.call_warmup,
                    rounds=counts.call_rounds,
                    per_round=counts.calls_per_round,
                )
                res["calls_sync"] = measure.compare(series["core"], series["bare"])
            if "own" in sections:
                _log(f"{provider}: llm-core's own work per call (send stubbed)")
                res["own"] = own.measure(
                    provider, server.url, {"main": None}, blocks=counts.own_blocks, per_block=counts.own_per_block
                )["main"]
            if "streams" in sections:
                _log(f"{provider}: sync streams of {counts.deltas} deltas")
                streamed = measure.streams(
                    {n: s.stream for n, s in sides.items()},
                    warmup=counts.stream_warmup,
                    rounds=counts.stream_rounds,
                    per_round=counts.streams_per_round,
                )
                res["streams_sync"] = _stream_result(streamed)
        for provider, found in asyncio.run(_async_sections(pairs, counts, sections)).items():
            results["providers"][provider].update(found)
        if "memory" in sections:
            for provider in providers:
                for side in ("core", "bare"):
                    _log(f"{provider}: memory over {counts.memory_calls} calls ({side})")
                    results["providers"][provider].setdefault("memory", {})[side] = memory.run(
                        provider, side, server.url, counts.memory_calls, counts.memory_warmup
                    )
        results["server"] = server.get("/_bench/stats")
    facts["load_average_end"] = os.getloadavg()
    facts["duration_s"] = time.time() - started
    return {"machine": facts, "counts": asdict(counts), "sections": sorted(sections), "results": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--quick", action="store_true", help="tiny counts: check that the harness works")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma list of {', '.join(SECTIONS)}")
    parser.add_argument("--providers", default=",".join(PROVIDERS), help="comma list of gemini, openai")
    parser.add_argument("--json", type=Path, help="write the full results (every median and range) here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown report here (also printed)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    providers = tuple(p.strip() for p in args.providers.split(",") if p.strip())
    unknown = (sections - set(SECTIONS)) | (set(providers) - set(PROVIDERS))
    if unknown:
        parser.error(f"unknown section or provider: {', '.join(sorted(unknown))}")
    counts = Counts.quick() if args.quick else Counts()
    data = run(counts, sections, providers)
    data["targets"] = report.check_targets(data)
    text = report.markdown(data)
    if args.json:
        report.write_json(args.json, data)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    print(text)
    missed = [t for t in data["targets"] if t["met"] is False]
    if missed:
        _log(
            f"{len(missed)} target(s) missed: "
            + "; ".join(t["name"] + (" (within noise)" if t.get("clear") is False else "") for t in missed)
        )
    return 1 if (args.check and missed) else 0
