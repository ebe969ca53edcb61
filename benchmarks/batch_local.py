"""The batch job runner in local mode against a hand-written ``asyncio.gather`` over the bare SDK.

    python -m benchmarks.batch_local                  # 10,000 requests at 100 in flight, 3 rounds
    python -m benchmarks.batch_local --requests 500 --rounds 1 --check

Both sides send the same requests (one chat question per input line, read from the same JSONL
file) to the same loopback server (:mod:`benchmarks.server`: the Responses API body or the
GenerateContentResponse of :mod:`benchmarks.bodies`, modelled on the recorded traffic of the real
services) with at most ``concurrency`` requests in flight, and write one JSONL line per result:

- **the runner**: ``llm_core.batch.run(input.jsonl, output=..., provider=..., mode="local",
  concurrency=100, progress=...)``, the provider built through the registry with the core's
  defaults (so the core retry policy runs); it validates every line into its SQLite job record
  first, then streams the items from there, and syncs output and record every 200 results;
- **the bare SDK**, as a user would write it: ``AsyncOpenAI()`` (or ``genai.Client().aio``)
  with only the key and the base URL, ``asyncio.gather`` over one coroutine per input line and an
  ``asyncio.Semaphore(concurrency)`` around each ``responses.create(model=..., input=question)``
  (``models.generate_content(model=..., contents=question)``), each result written as it comes.

Each run is a fresh process (so its memory is its own), timed from the first line read to the
last result written, after one warm-up request through the same path (interpreter start, imports
and lazily built schemas out of the clock; the timed run opens its own connections); the sides
alternate run by run, in rounds that swap which goes first. Throughput is requests per second;
the ratio (runner over bare) comes with its 95 % interval (:func:`benchmarks.measure.compare`).
Memory: in the middle of each quarter of the results, after ``gc.collect()``, the process records its RSS and
the number of live objects the garbage collector tracks; growth is the last quarter's mark over
the first one's, and ``VmHWM`` gives the peak. The runner's must be flat (it never holds the
input); the bare side holds one coroutine per line, so its memory grows with the input.

Run one side: ``python -m benchmarks.batch_local --side runner --url URL --input IN --output OUT``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import measure
from benchmarks.coldstart import ROOT, bench_env
from benchmarks.memory import peak_rss_bytes, rss_bytes
from benchmarks.sides import API_KEY, MODELS

SIDES = ("runner", "bare")
#: Throughput target: the runner at least this fraction of the bare SDK's requests per second.
THROUGHPUT_RATIO = 0.9
#: "Flat memory" for the runner, first quarter's mark to the last one's: live objects may grow by
#: this many at most (lazily built caches), RSS by this many MiB: SQLite's page cache of the job
#: record fills up to its bound (``PRAGMA cache_size`` default, 2,000 KiB) as the run goes, plus
#: 1 MiB for allocator arenas, which move in steps. Neither bound depends on the input's size.
OBJECT_SLACK = 200
RSS_SLACK_MIB = 3.0


def question(number: int) -> str:
    return f"Question {number}: in two sentences, what does a provider registry for LLMs do?"


def write_input(path: Path, requests: int) -> None:
    """``requests`` chat items, one JSONL line each (``kind`` omitted: a line without it is a chat)."""
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(1, requests + 1):
            handle.write(json.dumps({"custom_id": f"q{number:06d}", "messages": question(number)}) + "\n")


class Probe:
    """RSS and live objects in the middle of each quarter of ``total`` results (at 1/8, 3/8, 5/8
    and 7/8: while the calls are in full flight, not after the last one drained)."""

    def __init__(self, total: int) -> None:
        self.marks = [max(total * eighth // 8, 1) for eighth in (1, 3, 5, 7)]
        self.points: list[dict[str, float]] = []

    def seen(self, done: int) -> None:
        while self.marks and done >= self.marks[0]:
            self.marks.pop(0)
            gc.collect()
            self.points.append({"done": done, "rss_mib": rss_bytes() / 2**20, "objects": len(gc.get_objects())})


# -- the two sides (each in its own process) ----------------------------------------------------


#: A side: ``(warm_up, go)``. The warm-up sends one request through the same path (imports and
#: lazily built schemas out of the clock); ``go`` is the timed run, on an event loop of its own.
Side = tuple[Callable[[], Any], Callable[[], Any]]


def _runner(provider: str, url: str, source: Path, output: Path, concurrency: int, probe: Probe) -> Side:
    import llm_core.batch
    from benchmarks.sides import core_provider

    target = core_provider(provider, url)

    def warm_up() -> Any:
        item = {"custom_id": "warm-up", "messages": question(0)}
        return llm_core.batch.run(
            [item], output=output.with_name("warm-up-" + output.name), provider=target, mode="local"
        )

    def go() -> Any:
        return llm_core.batch.run(
            source,
            output=output,
            provider=target,
            mode="local",
            concurrency=concurrency,
            progress=lambda summary: probe.seen(summary.done),
        )

    return warm_up, go


def _bare_call(provider: str, url: str) -> tuple[Callable[[str], Any], Callable[[Any], dict[str, Any]]]:
    """The README client and call on a question, and what a result line keeps of the answer (the
    client is built on the running loop: its connection pool belongs to that loop)."""
    model = MODELS[provider]
    if provider == "openai":
        import openai

        client = openai.AsyncOpenAI(api_key=API_KEY, base_url=url + "/v1")

        def line(response: Any) -> dict[str, Any]:
            return {"text": response.output_text, "total_tokens": response.usage.total_tokens}

        return lambda text: client.responses.create(model=model, input=text), line
    from google import genai

    aio = genai.Client(api_key=API_KEY, http_options={"base_url": url}).aio

    def gemini_line(response: Any) -> dict[str, Any]:
        return {"text": response.text, "total_tokens": response.usage_metadata.total_token_count}

    return lambda text: aio.models.generate_content(model=model, contents=text), gemini_line


def _bare(provider: str, url: str, source: Path, output: Path, concurrency: int, probe: Probe) -> Side:
    async def warm_up() -> None:
        call, keep = _bare_call(provider, url)
        keep(await call(question(0)))

    async def main() -> None:
        call, keep = _bare_call(provider, url)
        limit = asyncio.Semaphore(concurrency)
        done = 0
        with open(source, encoding="utf-8") as lines, open(output, "w", encoding="utf-8") as out:

            async def one(item: dict[str, Any]) -> None:
                nonlocal done
                async with limit:
                    try:
                        found = {"ok": True, **keep(await call(item["messages"]))}
                    except Exception as exc:  # a failed request is that line's result
                        found = {"ok": False, "error": repr(exc)}
                out.write(json.dumps({"custom_id": item["custom_id"], **found}) + "\n")
                done += 1
                probe.seen(done)

            await asyncio.gather(*(one(json.loads(line)) for line in lines))

    return lambda: asyncio.run(warm_up()), lambda: asyncio.run(main())


def one_run(side: str, provider: str, url: str, source: Path, output: Path, concurrency: int) -> dict[str, Any]:
    """One timed run of ``side`` in this process, and a check of its output."""
    requests = sum(1 for _ in open(source, encoding="utf-8"))  # noqa: SIM115 - counted before the clock
    probe = Probe(requests)
    build = _runner if side == "runner" else _bare
    warm_up, go = build(provider, url, source, output, concurrency, probe)
    warm_up()
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    go()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    ids: dict[str, int] = {}
    ok = 0
    with open(output, encoding="utf-8") as results:
        for line in results:
            found = json.loads(line)
            ids[found["custom_id"]] = ids.get(found["custom_id"], 0) + 1
            ok += bool(found["ok"])
    return {
        "side": side,
        "requests": requests,
        "seconds": seconds,
        "throughput": requests / seconds,
        "cpu_us_per_request": cpu_seconds / requests * 1e6,
        "results": sum(ids.values()),
        "ok": ok,
        "each_id_once": len(ids) == requests and all(count == 1 for count in ids.values()),
        "checkpoints": probe.points,
        "peak_rss_mib": peak_rss_bytes() / 2**20,
    }


# -- the comparison -----------------------------------------------------------------------------


def _child_env() -> dict[str, str]:
    """The benchmark environment, importing the llm-core the harness imported (a worktree's copy
    when the harness runs with one on its path) in the child too."""
    import importlib.util

    roots = []
    for name in ("llm_core", "core_openai_plugin", "core_gemini_plugin", "core_otel_plugin"):
        found = importlib.util.find_spec(name)
        if found is not None and found.origin is not None:
            roots.append(Path(found.origin).resolve().parents[1])
    return {**bench_env(), "PYTHONPATH": os.pathsep.join(dict.fromkeys(str(r) for r in roots))}


def _spawn(side: str, provider: str, url: str, source: Path, output: Path, concurrency: int) -> dict[str, Any]:
    args = ["--side", side, "--provider", provider, "--url", url, "--input", str(source), "--output", str(output)]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.batch_local", *args, "--concurrency", str(concurrency)],
        cwd=ROOT,
        env=_child_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"batch run ({side}) failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _growth(run: dict[str, Any]) -> dict[str, float]:
    first, last = run["checkpoints"][0], run["checkpoints"][-1]
    return {"rss_mib": last["rss_mib"] - first["rss_mib"], "objects": last["objects"] - first["objects"]}


def run(
    url: str,
    *,
    provider: str = "openai",
    requests: int = 10_000,
    concurrency: int = 100,
    rounds: int = 3,
    log: Callable[[str], None] = lambda _message: None,
) -> dict[str, Any]:
    """``rounds`` runs of each side against the loopback server at ``url``; the throughput
    comparison, every run's figures and the memory growth of each side."""
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    rates = {side: measure.Series() for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="llm-core-batch-bench-") as folder:
        source = Path(folder) / "input.jsonl"
        write_input(source, requests)
        for round_no in range(rounds):
            for side in SIDES if round_no % 2 == 0 else SIDES[::-1]:
                log(f"batch ({provider}): {side}, round {round_no + 1} of {rounds}, {requests:,} requests")
                output = Path(folder) / f"{side}-{round_no}.jsonl"
                found = _spawn(side, provider, url, source, output, concurrency)
                runs[side].append(found)
                rates[side].add_round([found["throughput"]])
    growth = {side: [_growth(r) for r in runs[side]] for side in SIDES}
    return {
        "provider": provider,
        "requests": requests,
        "concurrency": concurrency,
        "rounds": rounds,
        "throughput": measure.compare(rates["runner"], rates["bare"]),
        "runs": runs,
        "growth": growth,
        "all_ok": all(r["each_id_once"] and r["ok"] == requests for side in SIDES for r in runs[side]),
    }


def worst_growth(result: dict[str, Any], side: str = "runner") -> dict[str, float]:
    """The largest first-to-last-quarter growth of ``side`` over its runs."""
    found = result["growth"][side]
    return {key: max(g[key] for g in found) for key in ("rss_mib", "objects")}


def markdown_lines(result: dict[str, Any]) -> list[str]:
    """The report's section for the batch comparison."""
    cmp = result["throughput"]
    ratio = cmp["ratio"]
    lines = [
        "",
        f"### Batch runner, local mode: {result['requests']:,} requests at {result['concurrency']} in flight "
        f"({result['provider']}, {result['rounds']} rounds, a fresh process per run)",
        "",
        '`llm_core.batch.run(input.jsonl, mode="local", concurrency=...)` against `asyncio.gather` + '
        "`asyncio.Semaphore` over the bare SDK, the same JSONL input and server. Every id came back exactly "
        f"once on both sides: {'yes' if result['all_ok'] else '**no**'}.",
        "",
        "| | runner | bare SDK | ratio | its 95 % interval |",
        "|---|---|---|---|---|",
        f"| throughput (req/s), median [min, max] | {_range(cmp['core'])} | {_range(cmp['bare'])} | "
        f"**{ratio['median']:.3f}** | {ratio['ci95_low']:.3f} to {ratio['ci95_high']:.3f} |",
    ]
    by_side = {side: result["runs"][side] for side in SIDES}
    cpu = {side: sorted(r["cpu_us_per_request"] for r in by_side[side]) for side in SIDES}
    lines.append(
        f"| client CPU per request (µs), median | {cpu['runner'][len(cpu['runner']) // 2]:,.0f} | "
        f"{cpu['bare'][len(cpu['bare']) // 2]:,.0f} | | |"
    )
    lines += [
        "",
        "| side | run | RSS at each quarter of the results (MiB) | live objects at each quarter | "
        "growth, first to last quarter | peak RSS (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    for side in SIDES:
        for number, found in enumerate(by_side[side], 1):
            marks = found["checkpoints"]
            growth = _growth(found)
            lines.append(
                f"| {'runner' if side == 'runner' else 'bare SDK'} | {number} | "
                + ", ".join(f"{m['rss_mib']:.1f}" for m in marks)
                + " | "
                + ", ".join(f"{m['objects']:,}" for m in marks)
                + f" | {growth['rss_mib']:+.2f} MiB, {growth['objects']:+,} objects | {found['peak_rss_mib']:.1f} |"
            )
    return lines


def _range(stats: dict[str, float]) -> str:
    return f"{stats['median']:,.0f} [{stats['min']:,.0f}, {stats['max']:,.0f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_local", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side (python -m benchmarks: 2)")
    parser.add_argument("--provider", choices=tuple(MODELS), default="openai")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--side", choices=SIDES, help="(internal) one timed run of one side, JSON on stdout")
    parser.add_argument("--url", help="(with --side) the loopback server")
    parser.add_argument("--input", type=Path, help="(with --side) the JSONL input")
    parser.add_argument("--output", type=Path, help="(with --side) the JSONL output")
    args = parser.parse_args(argv)
    if args.side:
        found = one_run(args.side, args.provider, args.url, args.input, args.output, args.concurrency)
        print(json.dumps(found))
        return 0
    from benchmarks.server import LoopbackServer

    with LoopbackServer() as server:
        result = run(
            server.url,
            provider=args.provider,
            requests=args.requests,
            concurrency=args.concurrency,
            rounds=args.rounds,
            log=lambda message: print(message, file=sys.stderr, flush=True),
        )
    from benchmarks.report import batch_targets

    print("\n".join(markdown_lines(result)))
    missed = [t["name"] for t in batch_targets(result) if t["met"] is False]
    for name in missed:
        print(f"target missed: {name}", file=sys.stderr)
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
