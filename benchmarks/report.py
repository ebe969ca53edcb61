"""Machine facts, target checks and the Markdown report of a benchmark run."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import batch_local
from benchmarks.coldstart import ROOT

#: The targets (checked here, never by timed tests). Ratios are llm-core over the bare SDK called
#: as its README calls it (the user's view), per provider, sync and async.
CALL_RATIO = 1.05
FIRST_DELTA_RATIO = 1.05
STREAM_TOTAL_RATIO = 1.02
THROUGHPUT_RATIO = 0.95
#: Start-up (import + discovery + select) over a fresh interpreter's entry-point scan alone.
STARTUP_RATIO = 1.0
#: Ready to call (both providers and SDK clients built) over the bare SDKs' import and clients.
READY_OVER_MS = 40.0
#: "Flat memory": over the measured calls, live objects may not grow by more than this many
#: (a handful of lazily built caches), and RSS not by more than the bare SDK's own drift + 1 MiB.
OBJECT_SLACK = 200
RSS_SLACK_MIB = 1.0

_DISTRIBUTIONS = (
    "llm-core",
    "core-gemini-plugin",
    "core-openai-plugin",
    "google-genai",
    "openai",
    "httpx2",
    "pydantic",
    "pluggy",
    "tenacity",
)


def machine_facts() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    for name in _DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "load_average_start": os.getloadavg(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--", "core", "plugins", "benchmarks")),
        "versions": versions,
    }


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def _target(
    name: str,
    value: float | None,
    limit: float,
    unit: str,
    *,
    at_least: bool = False,
    interval: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """One target: met when ``value`` is within ``limit``. With the value's 95 % confidence
    ``interval``, ``clear`` says whether the interval is on the same side of the limit as the value
    (False: sampling alone could have put it on the other side)."""
    met = None if value is None or math.isnan(value) else (value >= limit if at_least else value <= limit)
    clear = None
    if interval is not None and met is not None:
        low, high = interval
        clear = (low >= limit if at_least else high <= limit) if met else (high < limit if at_least else low > limit)
    return {
        "name": name,
        "value": value,
        "limit": limit,
        "unit": unit,
        "at_least": at_least,
        "met": met,
        "interval": list(interval) if interval is not None else None,
        "clear": clear,
    }


def _interval(stats: dict[str, float]) -> tuple[float, float] | None:
    if "ci95_low" not in stats or math.isnan(stats["ci95_low"]):
        return None
    return stats["ci95_low"], stats["ci95_high"]


def check_targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    results = data["results"]
    out: list[dict[str, Any]] = []
    startup = results["cold"].get("startup")
    if startup:
        ratio = startup["vs_scan"]["ratio"]
        out.append(
            _target(
                "start-up (import + discovery + select) over the entry-point scan alone",
                ratio["median"],
                STARTUP_RATIO,
                "x",
                interval=_interval(ratio),
            )
        )
        out.append(_target("SDK modules imported by start-up", float(len(startup["sdk_modules"])), 0, ""))
    ready = results["cold"].get("ready")
    if ready:
        over = ready["overhead"]
        out.append(
            _target("ready to call, over the bare SDKs", over["median"], READY_OVER_MS, "ms", interval=_interval(over))
        )
    for provider, res in results["providers"].items():
        for kind in ("chat", "stream"):
            same = res["requests"]["payload"][kind]
            ok = same["same_target"] and same["same_body"] and same["same_headers"]
            out.append(
                _target(f"{provider}: same-payload {kind} request identical on the wire", 0.0 if ok else 1.0, 0, "")
            )
        user = res.get("user", {})
        for mode in ("sync", "async"):
            calls = user.get(f"calls_{mode}")
            if calls:
                out.append(_ratio_target(f"{provider}: per call ({mode})", calls, CALL_RATIO))
            streams = user.get(f"streams_{mode}")
            if streams:
                out.append(
                    _ratio_target(f"{provider}: first delta ({mode})", streams["first_event_us"], FIRST_DELTA_RATIO)
                )
                deltas = streams["deltas"]["core"]
                out.append(
                    _ratio_target(
                        f"{provider}: {deltas}-delta stream total ({mode})", streams["total_us"], STREAM_TOTAL_RATIO
                    )
                )
        conc = user.get("concurrency")
        if conc:
            out.append(_ratio_target(f"{provider}: async throughput", conc, THROUGHPUT_RATIO, at_least=True))
        mem = res.get("memory")
        if mem:
            core, sdk = mem["core"], mem["sdk"]
            out.append(
                _target(
                    f"{provider}: live-object growth over {core['calls']:,} calls",
                    float(core["objects_growth"]),
                    OBJECT_SLACK,
                    "objects",
                )
            )
            out.append(
                _target(
                    f"{provider}: RSS growth over {core['calls']:,} calls",
                    core["rss_growth_mib"],
                    max(sdk["rss_growth_mib"], 0.0) + RSS_SLACK_MIB,
                    "MiB",
                )
            )
    batch = results.get("batch")
    if batch:
        out += batch_targets(batch)
    return out


def batch_targets(batch: dict[str, Any]) -> list[dict[str, Any]]:
    """The batch runner's targets (:mod:`benchmarks.batch_local`): throughput, flat memory, every id once."""
    name = f"batch runner, local mode ({batch['provider']}, {batch['requests']:,} at {batch['concurrency']})"
    growth = batch_local.worst_growth(batch)
    return [
        _ratio_target(
            f"{name}: throughput over the bare SDK", batch["throughput"], batch_local.THROUGHPUT_RATIO, at_least=True
        ),
        _target(
            f"{name}: live-object growth, first to last quarter", growth["objects"], batch_local.OBJECT_SLACK, "objects"
        ),
        _target(f"{name}: RSS growth, first to last quarter", growth["rss_mib"], batch_local.RSS_SLACK_MIB, "MiB"),
        _target(f"{name}: every id exactly once, every result ok", 0.0 if batch["all_ok"] else 1.0, 0, ""),
    ]


def _ratio_target(name: str, cmp: dict[str, Any], limit: float, *, at_least: bool = False) -> dict[str, Any]:
    ratio = cmp["ratio"]
    return _target(name, ratio["median"], limit, "x", at_least=at_least, interval=_interval(ratio))


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


# -- Markdown ---------------------------------------------------------------------------------------


def _n(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def _range(stats: dict[str, float], digits: int = 1) -> str:
    return f"{_n(stats['median'], digits)} [{_n(stats['min'], digits)}, {_n(stats['max'], digits)}]"


def _between(interval: tuple[float, float] | list[float] | None, digits: int) -> str:
    return "" if interval is None else f"{_n(interval[0], digits)} to {_n(interval[1], digits)}"


def _cmp_row(label: str, provider: str, cmp: dict[str, Any], digits: int = 1, ratio_digits: int = 3) -> str:
    ratio = cmp["ratio"]
    return (
        f"| {label} | {provider} | {_range(cmp['core'], digits)} | {_range(cmp['bare'], digits)} | "
        f"**{_n(ratio['median'], ratio_digits)}** | {_between(_interval(ratio), ratio_digits)} | "
        f"{_n(cmp['overhead']['median'], digits)} ({_between(_interval(cmp['overhead']), digits)}) |"
    )


_HEADER = [
    "| measure | provider | llm-core | bare SDK | ratio | its 95 % interval | difference (its 95 % interval) |",
    "|---|---|---|---|---|---|---|",
]


def _pair_rows(results: dict[str, Any], pair: str, counts: dict[str, Any]) -> list[str]:
    rows: list[str] = []
    for provider, res in results["providers"].items():
        found = res.get(pair, {})
        for mode in ("sync", "async"):
            if f"calls_{mode}" in found:
                rows.append(_cmp_row(f"per call, {mode} (µs)", provider, found[f"calls_{mode}"]))
        for mode in ("sync", "async"):
            if f"streams_{mode}" in found:
                s = found[f"streams_{mode}"]
                rows.append(_cmp_row(f"first delta, {mode} (µs)", provider, s["first_event_us"], 0))
                rows.append(
                    _cmp_row(f"{s['deltas']['core']}-delta stream total, {mode} (µs)", provider, s["total_us"], 0)
                )
                rows.append(_cmp_row(f"per delta, {mode} (µs)", provider, s["per_delta_us"], 2))
        if "concurrency" in found:
            rows.append(
                _cmp_row(
                    f"async throughput, {counts['concurrent_total']:,} requests at {counts['in_flight']} "
                    "in flight (req/s)",
                    provider,
                    found["concurrency"],
                    0,
                )
            )
    return rows


def _body(value: Any) -> str:
    return "`" + json.dumps(value, separators=(",", ":"))[:300] + "`"


def _ratio_cell(cmp: dict[str, Any] | None) -> str:
    if not cmp:
        return "—"
    ratio = cmp["ratio"]
    return f"{_n(ratio['median'], 3)}x ({_between(_interval(ratio), 3)})"


def summary(data: dict[str, Any]) -> list[str]:
    """One table of every ratio: per measure, each provider's user's view and same payload."""
    results, counts = data["results"], data["counts"]
    providers = list(results["providers"])
    rows = [
        ("per call, sync", "calls_sync", None, f"≤ {CALL_RATIO}x"),
        ("per call, async", "calls_async", None, f"≤ {CALL_RATIO}x"),
        ("first delta, sync", "streams_sync", "first_event_us", f"≤ {FIRST_DELTA_RATIO}x"),
        ("first delta, async", "streams_async", "first_event_us", f"≤ {FIRST_DELTA_RATIO}x"),
        (f"{counts['deltas']}-delta stream, sync", "streams_sync", "total_us", f"≤ {STREAM_TOTAL_RATIO}x"),
        (f"{counts['deltas']}-delta stream, async", "streams_async", "total_us", f"≤ {STREAM_TOTAL_RATIO}x"),
        (
            f"async throughput, {counts['concurrent_total']} at {counts['in_flight']}",
            "concurrency",
            None,
            f"≥ {THROUGHPUT_RATIO}x",
        ),
    ]
    lines = [
        "| ratio to the bare SDK (95 % interval) | "
        + " | ".join(f"{p}, user's view | {p}, same payload" for p in providers)
        + " | target (user's view) |",
        "|---|" + "---|---|" * len(providers) + "---|",
    ]
    for label, section, measure_name, target in rows:
        cells = []
        for provider in providers:
            for pair in ("user", "payload"):
                found = results["providers"][provider].get(pair, {}).get(section)
                cells.append(_ratio_cell(found[measure_name] if found and measure_name else found))
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target} |")
    return lines


def markdown(data: dict[str, Any]) -> str:
    facts, results, counts = data["machine"], data["results"], data["counts"]
    lines = [
        "## Results",
        "",
        f"Run {facts['date']} on commit `{facts['commit']}`{' (with local changes)' if facts['dirty'] else ''}, "
        f"{facts['duration_s']:.0f} s; load average at start "
        f"{', '.join(f'{x:.2f}' for x in facts['load_average_start'])}, at end "
        f"{', '.join(f'{x:.2f}' for x in facts['load_average_end'])} ({facts['cpus']} CPUs). "
        "Medians, with [min, max] of the per-round medians. Ratio: llm-core over the bare SDK; its "
        "95 % interval is how far sampling alone could move it (order-statistic intervals of the two "
        "medians, combined).",
        "",
        "### Summary",
        "",
        *summary(data),
        "",
        "### The user's view: llm-core as its docs call it, the SDK as its README calls it",
        "",
        '`provider.chat_completion("question")` (and `aio.`, `stream_chat_completion`) against '
        '`client.responses.create(model=..., input="question")` / '
        '`client.models.generate_content(model=..., contents="question")` (and their streaming and async forms).',
        "",
        *_HEADER,
        *_pair_rows(results, "user", counts),
        "",
        "### The same payload: a system and a user message, the bare SDK sending the identical request",
        "",
        *_HEADER,
        *_pair_rows(results, "payload", counts),
    ]
    startup = results["cold"].get("startup")
    if startup:
        walls = startup["wall_ms"]
        lines += [
            "",
            "### Start-up: fresh interpreters, process wall time (ms)",
            "",
            "| program | median [min, max] |",
            "|---|---|",
            *(f"| {name} | {_range(stats)} |" for name, stats in walls.items()),
            "",
            "| comparison | ratio | its 95 % interval | difference (ms) |",
            "|---|---|---|---|",
        ]
        for key, label in (
            ("vs_scan", "llm-core over the scan alone"),
            ("vs_entry_points", "llm-core over scan + load each entry point"),
            ("uncached_vs_scan", "llm-core without its cache over the scan alone"),
            ("uncached_vs_entry_points", "llm-core without its cache over scan + load"),
        ):
            cmp = startup[key]
            lines.append(
                f"| {label} | **{_n(cmp['ratio']['median'], 3)}** | {_between(_interval(cmp['ratio']), 3)} | "
                f"{_n(cmp['overhead']['median'])} |"
            )
        lines += [
            "",
            'llm-core\'s program: `import llm_core` / discovery / `select("chat", "streaming")` '
            + " / ".join(_n(startup["parts_ms"][k]) for k in ("import_ms", "discover_ms", "select_ms"))
            + f" ms in process; scanned entry points: {startup['scanned']}. Selected `{startup['selected']}` among "
            f"{', '.join(startup['providers'])}. {startup['modules_imported']} modules imported; beyond the "
            f"standard library, from {', '.join(f'`{p}`' for p in startup['top_level_packages'])}. "
            f"Provider SDK modules: {', '.join(startup['sdk_modules']) or 'none'}; "
            f"Pydantic/tenacity modules: {', '.join(startup['heavy_modules']) or 'none'}.",
            "Heaviest imports (self time, ms): "
            + ", ".join(f"`{m}` {_n(t, 2)}" for m, t in startup["heaviest_imports"])
            + ".",
        ]
    ready = results["cold"].get("ready")
    if ready:
        lines += [
            "",
            "### Ready to call: both providers and their SDK clients built (fresh interpreters, ms)",
            "",
            "| llm-core (registry, both providers, `.client`) | bare SDKs (import, `OpenAI()`, `genai.Client()`) "
            "| difference (its 95 % interval) | ratio |",
            "|---|---|---|---|",
            f"| {_range(ready['core'])} | {_range(ready['bare'])} | {_n(ready['overhead']['median'])} "
            f"({_between(_interval(ready['overhead']), 1)}) | {_n(ready['ratio']['median'], 3)} |",
        ]
    mem_rows = [
        (provider, side, m)
        for provider, res in results["providers"].items()
        for side, m in res.get("memory", {}).items()
    ]
    if mem_rows:
        lines += [
            "",
            f"### Memory over {mem_rows[0][2]['calls']:,} sync calls, user's view (fresh process per row)",
            "",
            "| provider | side | RSS start, end (MiB) | growth (MiB) | peak RSS (MiB) "
            "| live objects start, end | growth |",
            "|---|---|---|---|---|---|---|",
        ]
        for provider, side, m in mem_rows:
            who = "llm-core" if side == "core" else "bare SDK"
            lines.append(
                f"| {provider} | {who} | {_n(m['rss_start_mib'])}, {_n(m['rss_end_mib'])} | "
                f"{_n(m['rss_growth_mib'], 2)} | {_n(m['peak_rss_mib'])} | "
                f"{m['objects_start']:,}, {m['objects_end']:,} | {m['objects_growth']:+,} |"
            )
    if results.get("batch"):
        lines += batch_local.markdown_lines(results["batch"])
    lines += [
        "",
        "### Targets",
        "",
        "Met or not by the median; *within noise* where the value's 95 % interval reaches past the limit.",
        "",
        "| target | value | 95 % interval | limit | met |",
        "|---|---|---|---|---|",
    ]
    for t in data["targets"]:
        value = "n/a" if t["value"] is None else _n(t["value"], 3 if t["unit"] == "x" else 2)
        bound = "≥" if t["at_least"] else "≤"
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        if t.get("clear") is False:
            met += " (within noise)"
        lines.append(
            f"| {t['name']} | {value} {t['unit']} | {_between(t.get('interval'), 3 if t['unit'] == 'x' else 2)} | "
            f"{bound} {_n(t['limit'], 2)} {t['unit']} | {met} |"
        )
    lines += ["", "### What was sent", ""]
    for provider, res in results["providers"].items():
        for kind, user in res["requests"]["user"].items():
            same = "the same body" if user["same_body"] else "a different body"
            lines.append(
                f"- {provider} {kind}, user's view: llm-core `{user['target']}` {_body(user['body'])}; "
                f"the README form `{user['sdk_target']}` {_body(user['sdk_body'])} ({same})."
            )
        for kind, same_payload in res["requests"]["payload"].items():
            ok = same_payload["same_target"] and same_payload["same_body"] and same_payload["same_headers"]
            lines.append(
                f"- {provider} {kind}, same payload: `{same_payload['target']}` "
                + ("identical path, body and headers on both sides." if ok else "**the two sides differed**.")
            )
    lines += [
        "",
        "### Machine",
        "",
        f"{facts['cpu']}, {facts['cpus']} CPUs, {facts['memory_gib']} GiB; {facts['platform']}; "
        f"{facts['implementation']} {facts['python']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in facts["versions"].items() if v) + ".",
        "",
    ]
    return "\n".join(lines)
