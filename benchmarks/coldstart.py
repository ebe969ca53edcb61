"""Cold start: each sample is a fresh interpreter (``python -c``), sides interleaved.

- ``select``: ``import llm_core`` + plugin discovery + ``select("chat", "streaming")``, timed
  inside the process; also the process wall time, and which modules got imported (no provider
  SDK may be among them, and ideally no Pydantic).
- ``first_call``: import + build + the first request (llm-core through the registry and plugin;
  bare: import the SDK, build the client, send), timed inside the process.
- ``interpreter``: ``python -c pass``, for context (the floor of any process wall time).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Modules that must not be imported by import + discovery + select.
SDK_MODULES = ("google.genai", "openai", "httpx2", "httpx", "httpcore2", "httpcore")
LIGHT_MODULES = ("pydantic", "pydantic_core", "tenacity")

_SELECT = """
import sys, time, json
before = set(sys.modules)
t0 = time.perf_counter()
import llm_core
t1 = time.perf_counter()
registry = llm_core.get_registry()
t2 = time.perf_counter()
selection = registry.select("chat", "streaming")
t3 = time.perf_counter()
new = sorted(set(sys.modules) - before)
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "discover_ms": (t2 - t1) * 1e3,
                  "select_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3,
                  "selected": selection.identifier, "providers": [s.identifier for s in registry.providers()],
                  "modules": new}))
"""

_FIRST_CALL = """
import sys, time, json
from benchmarks.sides import build
before = set(sys.modules)
t0 = time.perf_counter()
side = build({provider!r}, {side!r}, {url!r})
t1 = time.perf_counter()
text = side.call()
t2 = time.perf_counter()
assert text, "empty answer"
print(json.dumps({{"build_ms": (t1 - t0) * 1e3, "call_ms": (t2 - t1) * 1e3, "total_ms": (t2 - t0) * 1e3,
                  "modules": len(set(sys.modules) - before)}}))
"""


def bench_env() -> dict[str, str]:
    """The environment of every benchmark process: no user config, no plugin filters, no base
    URL overrides (nothing may leave the loopback), the benchmark's fake keys."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_CORE_", "OPENAI_", "GOOGLE_", "GEMINI_"))
        and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    }
    config_home = Path(tempfile.gettempdir()) / "llm-core-bench-config"
    config_home.mkdir(exist_ok=True)
    env["XDG_CONFIG_HOME"] = str(config_home)
    env["GEMINI_API_KEY"] = "bench-key"
    env["OPENAI_API_KEY"] = "bench-key"
    return env


def _run(code: str, *args: str) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args, "-c", code],
        cwd=ROOT,
        env=bench_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    wall = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        raise RuntimeError(f"cold-start process failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if lines else {}), wall


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": float(len(values))}


def select_cost(runs: int) -> dict[str, Any]:
    """import + discovery + select in ``runs`` fresh interpreters (after one discarded run that
    warms the bytecode and file caches), interleaved with bare interpreter starts."""
    _run(_SELECT)
    totals: list[float] = []
    walls: list[float] = []
    floors: list[float] = []
    parts: dict[str, list[float]] = {"import_ms": [], "discover_ms": [], "select_ms": []}
    last: dict[str, Any] = {}
    for _ in range(runs):
        _, floor = _run("pass")
        last, wall = _run(_SELECT)
        floors.append(floor)
        walls.append(wall)
        totals.append(last["total_ms"])
        for key, values in parts.items():
            values.append(last[key])
    modules: list[str] = last["modules"]
    tops = {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)
    return {
        "in_process_ms": _spread(totals),
        "parts_ms": {k: statistics.median(v) for k, v in parts.items()},
        "process_wall_ms": _spread(walls),
        "interpreter_wall_ms": _spread(floors),
        "selected": last["selected"],
        "providers": last["providers"],
        "modules_imported": len(modules),
        "top_level_packages": sorted(tops),
        "sdk_modules": sorted(m for m in modules if m.startswith(SDK_MODULES)),
        "heavy_modules": sorted(m for m in modules if m.split(".")[0] in LIGHT_MODULES),
        "heaviest_imports": heaviest_imports(),
    }


def heaviest_imports(top: int = 8) -> list[tuple[str, float]]:
    """The modules with the largest self time under ``-X importtime`` (for profiling)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _SELECT],
        cwd=ROOT,
        env=bench_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        fields = line.split("|")
        try:
            rows.append((fields[2].strip(), int(fields[0].split(":")[1]) / 1000))
        except (IndexError, ValueError):
            continue
    return sorted(rows, key=lambda r: -r[1])[:top]


def first_call(provider: str, url: str, runs: int) -> dict[str, Any]:
    """Import + build + first request, llm-core vs bare, alternating fresh interpreters."""
    sides = ("core", "bare")
    for side in sides:  # warm bytecode and file caches
        _run(_FIRST_CALL.format(provider=provider, side=side, url=url))
    samples: dict[str, list[float]] = {s: [] for s in sides}
    modules: dict[str, int] = {}
    for _ in range(runs):
        for side in sides:
            result, _ = _run(_FIRST_CALL.format(provider=provider, side=side, url=url))
            samples[side].append(result["total_ms"])
            modules[side] = result["modules"]
    core, bare = statistics.median(samples["core"]), statistics.median(samples["bare"])
    return {
        "core_ms": _spread(samples["core"]),
        "bare_ms": _spread(samples["bare"]),
        "overhead_ms": core - bare,
        "ratio": core / bare,
        "modules": modules,
    }
