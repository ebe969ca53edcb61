"""Run the benchmark: llm-core against the bare SDKs over a loopback server, in one run.

    python -m benchmarks                      # the full run (several minutes), Markdown on stdout
    python -m benchmarks --json out.json --markdown out.md
    python -m benchmarks --quick              # tiny counts: checks the harness end to end
    python -m benchmarks --sections calls,streams --providers openai

Every operation is compared twice: with the bare SDK called as its README calls it (the user's
view, the headline) and with the bare SDK sending the identical payload (see
:mod:`benchmarks.sides`). Sections: ``cold`` (fresh interpreters: start-up against the
entry-point scan, and ready to call), ``calls`` (per call, sync and async), ``streams`` (first
delta and whole stream, sync and async), ``concurrency`` (async throughput, user's view),
``memory`` (RSS and live objects over many calls, user's view), ``batch`` (the batch job runner in
local mode against ``asyncio.gather`` over the bare SDK: :mod:`benchmarks.batch_local`). ``--check``
exits 1 when a target is missed (the numbers are noisy: re-run before believing a miss).
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

from benchmarks import batch_local, coldstart, measure, memory, report
from benchmarks.server import LoopbackServer
from benchmarks.sides import PROVIDERS, SAME_PAYLOAD, USER_VIEW, Side, build

SECTIONS = ("cold", "calls", "streams", "concurrency", "memory", "batch")
#: The two comparisons: (llm-core side, SDK side).
PAIRS = {"user": USER_VIEW, "payload": SAME_PAYLOAD}


@dataclass(frozen=True)
class Counts:
    """How much to run. The defaults are the full benchmark; :meth:`quick` only checks the harness."""

    call_warmup: int = 200
    call_rounds: int = 10
    calls_per_round: int = 300  # 10 x 300 = 3,000 timed calls per side
    deltas: int = 200
    stream_warmup: int = 3
    stream_rounds: int = 10
    streams_per_round: int = 20  # 200 streams per side
    concurrent_total: int = 500
    in_flight: int = 50
    concurrency_rounds: int = 15
    memory_calls: int = 10_000
    memory_warmup: int = 500
    cold_runs: int = 21
    ready_runs: int = 21
    batch_requests: int = 10_000
    batch_concurrency: int = 100
    batch_rounds: int = 2  # 2 x 2 runs of 10,000: about 1.5 minutes on a quiet machine

    def calls(self) -> dict[str, int]:
        return {"warmup": self.call_warmup, "rounds": self.call_rounds, "per_round": self.calls_per_round}

    def streams(self) -> dict[str, int]:
        return {"warmup": self.stream_warmup, "rounds": self.stream_rounds, "per_round": self.streams_per_round}

    @classmethod
    def quick(cls) -> Counts:
        return cls(
            call_warmup=3,
            call_rounds=2,
            calls_per_round=5,
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
            ready_runs=1,
            batch_requests=60,
            batch_concurrency=10,
            batch_rounds=1,
        )


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _requests(server: LoopbackServer, sides: dict[str, Side]) -> dict[str, Any]:
    """Send one chat and one stream request from each side of each pair; compare what the server
    received (the same-payload pair must match exactly; the user's view shows what llm-core sends
    for a plain question next to the README form)."""
    out: dict[str, Any] = {}
    for pair, (core_name, sdk_name) in PAIRS.items():
        seen: dict[str, dict[str, Any]] = {}
        for name in (core_name, sdk_name):
            sides[name].call()
            seen[name + ":chat"] = server.get("/_bench/last")
            measure.drain(iter(sides[name].stream()))
            seen[name + ":stream"] = server.get("/_bench/last")
        for kind in ("chat", "stream"):
            core, sdk = seen[f"{core_name}:{kind}"], seen[f"{sdk_name}:{kind}"]
            core_headers = sorted(tuple(h) for h in core["headers"] if h[0] != "host")
            sdk_headers = sorted(tuple(h) for h in sdk["headers"] if h[0] != "host")
            out.setdefault(pair, {})[kind] = {
                "target": core["target"],
                "sdk_target": sdk["target"],
                "same_target": core["target"] == sdk["target"],
                "same_body": core["body"] == sdk["body"],
                "same_headers": core_headers == sdk_headers,
                "body": core["body"],
                "sdk_body": sdk["body"],
                "header_differences": sorted(set(core_headers) ^ set(sdk_headers)),
            }
    return out


def _stream_result(streamed: dict[str, measure.StreamSeries], core: str, sdk: str) -> dict[str, Any]:
    a, b = streamed[core], streamed[sdk]
    return {
        "deltas": {"core": a.deltas, "sdk": b.deltas},
        "first_event_us": measure.compare(a.first, b.first),
        "total_us": measure.compare(a.total, b.total),
        "per_delta_us": measure.compare(a.per_delta, b.per_delta),
    }


def _sync_sections(sides: dict[str, Side], counts: Counts, sections: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair, (core, sdk) in PAIRS.items():
        if "calls" in sections:
            series = measure.calls({core: sides[core].call, sdk: sides[sdk].call}, **counts.calls())
            out.setdefault(pair, {})["calls_sync"] = measure.compare(series[core], series[sdk])
        if "streams" in sections:
            streamed = measure.streams({core: sides[core].stream, sdk: sides[sdk].stream}, **counts.streams())
            out.setdefault(pair, {})["streams_sync"] = _stream_result(streamed, core, sdk)
    return out


async def _async_sections(
    pairs: dict[str, dict[str, Side]], counts: Counts, sections: set[str]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {p: {} for p in pairs}
    for provider, sides in pairs.items():
        for pair, (core, sdk) in PAIRS.items():
            found = out[provider].setdefault(pair, {})
            if "calls" in sections:
                _log(f"{provider}: async calls ({pair})")
                series = await measure.acalls({core: sides[core].acall, sdk: sides[sdk].acall}, **counts.calls())
                found["calls_async"] = measure.compare(series[core], series[sdk])
            if "streams" in sections:
                _log(f"{provider}: async streams ({pair})")
                streamed = await measure.astreams(
                    {core: sides[core].astream, sdk: sides[sdk].astream}, **counts.streams()
                )
                found["streams_async"] = _stream_result(streamed, core, sdk)
        if "concurrency" in sections:
            core, sdk = USER_VIEW
            _log(f"{provider}: concurrency {counts.concurrent_total} requests at {counts.in_flight} in flight")
            rates = await measure.throughput(
                {core: sides[core].acall, sdk: sides[sdk].acall},
                total=counts.concurrent_total,
                in_flight=counts.in_flight,
                rounds=counts.concurrency_rounds,
                warmup=counts.in_flight * 2,
            )
            out[provider]["user"]["concurrency"] = measure.compare(rates[core], rates[sdk])
    return out


def run(counts: Counts, sections: set[str], providers: tuple[str, ...]) -> dict[str, Any]:
    os.environ.clear()
    os.environ.update(coldstart.bench_env())
    started = time.time()
    results: dict[str, Any] = {"providers": {}, "cold": {}}
    facts = report.machine_facts()
    with LoopbackServer(deltas=counts.deltas) as server:
        _log(f"loopback server on {server.url}")
        names = (*USER_VIEW, *SAME_PAYLOAD)
        pairs = {p: {s: build(p, s, server.url) for s in names} for p in providers}
        for provider, sides in pairs.items():
            results["providers"][provider] = {"requests": _requests(server, sides)}
        if "cold" in sections:
            _log("cold start: import + discovery + select against the entry-point scan")
            results["cold"]["startup"] = coldstart.startup(counts.cold_runs)
            _log("cold start: ready to call")
            results["cold"]["ready"] = coldstart.ready(server.url, counts.ready_runs)
        for provider, sides in pairs.items():
            _log(f"{provider}: sync calls and streams")
            for pair, found in _sync_sections(sides, counts, sections).items():
                results["providers"][provider].setdefault(pair, {}).update(found)
        for provider, by_pair in asyncio.run(_async_sections(pairs, counts, sections)).items():
            for pair, found in by_pair.items():
                results["providers"][provider].setdefault(pair, {}).update(found)
        if "memory" in sections:
            for provider in providers:
                for side in USER_VIEW:
                    _log(f"{provider}: memory over {counts.memory_calls} calls ({side})")
                    results["providers"][provider].setdefault("memory", {})[side] = memory.run(
                        provider, side, server.url, counts.memory_calls, counts.memory_warmup
                    )
        if "batch" in sections:
            results["batch"] = batch_local.run(
                server.url,
                provider="openai" if "openai" in providers else providers[0],
                requests=counts.batch_requests,
                concurrency=counts.batch_concurrency,
                rounds=counts.batch_rounds,
                log=_log,
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
    parser.add_argument("--providers", default=",".join(PROVIDERS), help="comma list of gemini, openai, openai-chat")
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
