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

from benchmarks.coldstart import ROOT

#: The issue's targets (checked here, never by timed tests).
SELECT_MS = 60.0
CALL_OVERHEAD_US = 30.0
DELTA_OVERHEAD_US = 2.0
FIRST_EVENT_OVERHEAD_US = 100.0
THROUGHPUT_RATIO = 0.95
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
    select = results["cold"].get("select")
    if select:
        out.append(
            _target("import + discovery + select (in-process wall)", select["in_process_ms"]["median"], SELECT_MS, "ms")
        )
        out.append(
            _target("SDK modules imported by import + discovery + select", float(len(select["sdk_modules"])), 0, "")
        )
    for provider, res in results["providers"].items():
        for kind in ("chat", "stream"):
            same = res["same_request"][kind]
            ok = same["same_target"] and same["same_body"] and same["same_headers"]
            out.append(_target(f"{provider}: identical {kind} request on the wire", 0.0 if ok else 1.0, 0, ""))
        for mode in ("sync", "async"):
            calls = res.get(f"calls_{mode}")
            if calls:
                out.append(
                    _target(
                        f"{provider}: per-call overhead ({mode})",
                        calls["overhead"]["median"],
                        CALL_OVERHEAD_US,
                        "µs",
                        interval=_interval(calls["overhead"]),
                    )
                )
        for mode in ("sync", "async"):
            streams = res.get(f"streams_{mode}")
            if streams:
                out.append(
                    _target(
                        f"{provider}: per-delta overhead ({mode})",
                        streams["per_delta_us"]["overhead"]["median"],
                        DELTA_OVERHEAD_US,
                        "µs",
                        interval=_interval(streams["per_delta_us"]["overhead"]),
                    )
                )
                out.append(
                    _target(
                        f"{provider}: first-event overhead ({mode})",
                        streams["first_event_us"]["overhead"]["median"],
                        FIRST_EVENT_OVERHEAD_US,
                        "µs",
                        interval=_interval(streams["first_event_us"]["overhead"]),
                    )
                )
        conc = res.get("concurrency")
        if conc:
            out.append(
                _target(
                    f"{provider}: async throughput ratio",
                    conc["ratio"]["median"],
                    THROUGHPUT_RATIO,
                    "x",
                    at_least=True,
                    interval=_interval(conc["ratio"]),
                )
            )
        mem = res.get("memory")
        if mem:
            core, bare = mem["core"], mem["bare"]
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
                    max(bare["rss_growth_mib"], 0.0) + RSS_SLACK_MIB,
                    "MiB",
                )
            )
    return out


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
    return (
        f"| {label} | {provider} | {_range(cmp['core'], digits)} | {_range(cmp['bare'], digits)} | "
        f"{_range(cmp['overhead'], digits)} | {_between(_interval(cmp['overhead']), digits)} | "
        f"{_range(cmp['ratio'], ratio_digits)} |"
    )


def markdown(data: dict[str, Any]) -> str:
    facts, results, counts = data["machine"], data["results"], data["counts"]
    lines = [
        "## Results",
        "",
        f"Run {facts['date']} on commit `{facts['commit']}`{' (with local changes)' if facts['dirty'] else ''}, "
        f"{facts['duration_s']:.0f} s. Medians, with [min, max] of the per-round medians "
        "(for cold starts: of the runs). The 95 % interval is how far sampling alone could move the "
        "difference of the medians (order-statistic intervals of the two medians, combined).",
        "",
        "| measure | provider | llm-core | bare SDK | difference | its 95 % interval | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for provider, res in results["providers"].items():
        for mode in ("sync", "async"):
            if f"calls_{mode}" in res:
                lines.append(_cmp_row(f"per call, {mode} (µs)", provider, res[f"calls_{mode}"]))
    for provider, res in results["providers"].items():
        for mode in ("sync", "async"):
            if f"streams_{mode}" in res:
                s = res[f"streams_{mode}"]
                lines.append(_cmp_row(f"stream first event, {mode} (µs)", provider, s["first_event_us"], 0))
                lines.append(_cmp_row(f"stream per delta, {mode} (µs)", provider, s["per_delta_us"], 2))
    for provider, res in results["providers"].items():
        if "concurrency" in res:
            lines.append(
                _cmp_row(
                    f"async throughput, {counts['concurrent_total']:,} requests, "
                    f"{counts['in_flight']} in flight (req/s)",
                    provider,
                    res["concurrency"],
                    0,
                )
            )
    first = results["cold"].get("first_call", {})
    for provider, fc in first.items():
        lines.append(
            f"| cold first call: import + build + first request (ms) | {provider} | {_range(fc['core_ms'])} | "
            f"{_range(fc['bare_ms'])} | {_n(fc['overhead_ms'])} | | {_n(fc['ratio'], 3)} |"
        )
    owned = {provider: res["own"] for provider, res in results["providers"].items() if "own" in res}
    if owned:
        lines += [
            "",
            "### llm-core's own work per call (µs, medians)",
            "",
            "The llm-core side alone: the call with the plugin's send returning a captured SDK response, "
            "each timed right after a bare SDK call (as cold as in the interleave above); then its "
            "steps one by one. Two providers running the same code agree within a few tenths of a µs; "
            "from run to run it follows the machine's state by a µs or two, where the difference above "
            "moves by 5 to 10 µs.",
            "",
            "| provider | call, sync | call, async | build the request | map it | parse the answer |",
            "|---|---|---|---|---|---|",
        ]
        for provider, o in owned.items():
            lines.append(
                f"| {provider} | {_n(o['sync'])} | {_n(o['async'])} | {_n(o['build'])} | {_n(o['map'])} "
                f"| {_n(o['parse'])} |"
            )
    select = results["cold"].get("select")
    if select:
        lines += [
            "",
            '### Cold start: `import llm_core` + discovery + `select("chat", "streaming")`',
            "",
            "| fresh interpreter | median [min, max] |",
            "|---|---|",
            f"| in-process wall time (ms) | {_range(select['in_process_ms'])} |",
            "| ... of which import / discovery / select (ms) | "
            + " / ".join(_n(select["parts_ms"][k]) for k in ("import_ms", "discover_ms", "select_ms"))
            + " |",
            f"| process wall time, start to exit (ms) | {_range(select['process_wall_ms'])} |",
            f"| bare interpreter, `python -c pass` (ms) | {_range(select['interpreter_wall_ms'])} |",
            "",
            f"Selected `{select['selected']}` among {', '.join(select['providers'])}. "
            f"{select['modules_imported']} modules imported; beyond the standard library, from "
            f"{', '.join(f'`{p}`' for p in select['top_level_packages'])}. "
            f"Provider SDK modules: {', '.join(select['sdk_modules']) or 'none'}; "
            f"Pydantic/tenacity modules: {', '.join(select['heavy_modules']) or 'none'}.",
            "Heaviest imports (self time, ms): "
            + ", ".join(f"`{m}` {_n(t, 2)}" for m, t in select["heaviest_imports"])
            + ".",
        ]
    mem_rows = [
        (provider, side, m)
        for provider, res in results["providers"].items()
        for side, m in res.get("memory", {}).items()
    ]
    if mem_rows:
        lines += [
            "",
            f"### Memory over {mem_rows[0][2]['calls']:,} sync calls (fresh process per row)",
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
        value = "n/a" if t["value"] is None else _n(t["value"], 2)
        bound = "≥" if t["at_least"] else "≤"
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        if t.get("clear") is False:
            met += " (within noise)"
        lines.append(
            f"| {t['name']} | {value} {t['unit']} | {_between(t.get('interval'), 3 if t['unit'] == 'x' else 2)} | "
            f"{bound} {_n(t['limit'], 2)} {t['unit']} | {met} |"
        )
    same = [
        f"{provider} {kind}: `{v['target']}`"
        for provider, res in results["providers"].items()
        for kind, v in res["same_request"].items()
    ]
    lines += [
        "",
        "Both sides sent equal JSON bodies and the same headers to the same paths "
        "(checked on the server) — " + "; ".join(same) + "."
        if all(
            v["same_target"] and v["same_body"] and v["same_headers"]
            for res in results["providers"].values()
            for v in res["same_request"].values()
        )
        else "**The two sides did not send the same requests** (see the JSON results).",
        "",
        "### Machine",
        "",
        f"{facts['cpu']}, {facts['cpus']} CPUs, {facts['memory_gib']} GiB; {facts['platform']}; "
        f"{facts['implementation']} {facts['python']}. Load average at start "
        f"{', '.join(f'{x:.2f}' for x in facts['load_average_start'])}, at end "
        f"{', '.join(f'{x:.2f}' for x in facts['load_average_end'])}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in facts["versions"].items() if v) + ".",
        "",
    ]
    return "\n".join(lines)
