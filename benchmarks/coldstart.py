"""Start-up: each sample is a fresh interpreter (``python -c``), the programs interleaved.

- ``startup``: ``import llm_core`` + plugin discovery + ``select("chat", "streaming")``, against
  what every entry-point plugin system pays (a fresh interpreter that imports
  ``importlib.metadata``, reads ``entry_points(group="llm_core")`` and loads each) and against the
  scan alone; llm-core with its discovery cache (warm: an earlier run filled it) and without it
  (``LLM_CORE_DISCOVERY_CACHE=0``), and ``python -c pass`` for the floor. Also which modules the
  llm-core program imported (no provider SDK may be among them) and its own timings in process.
- ``ready``: "ready to call", both providers built through the registry with their SDK clients,
  against the bare SDKs' own import and client construction.

Times are process wall times, start to exit, as a user waiting for a command sees them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import measure

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
                  "scanned": "importlib.metadata" in sys.modules, "modules": new}))
"""

#: The programs of the start-up comparison (``llm-core, no cache`` runs ``_SELECT`` with the cache off).
STARTUP = {
    "interpreter": "pass",
    "scan": "import importlib.metadata\nimportlib.metadata.entry_points(group='llm_core')\n",
    "entry points": "import importlib.metadata\nfor ep in importlib.metadata.entry_points(group='llm_core'):\n"
    "    ep.load()\n",
    "llm-core": _SELECT,
    "llm-core, no cache": _SELECT,
}

_READY = {
    "core": """
import llm_core
registry = llm_core.get_registry()
for name, suffix in (("gemini", ""), ("openai", "/v1")):
    registry.get(name, api_key="bench-key", base_url={url!r} + suffix).client
""",
    "bare": """
import openai
from google import genai
openai.OpenAI(api_key="bench-key", base_url={url!r} + "/v1")
genai.Client(api_key="bench-key", http_options={{"base_url": {url!r}}})
""",
}


def bench_env() -> dict[str, str]:
    """The environment of every benchmark process: no user config, only the provider plugins, no
    base URL overrides (nothing may leave the loopback), the benchmark's fake keys, and a
    discovery cache of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_CORE_", "OPENAI_", "GOOGLE_", "GEMINI_"))
        and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    }
    home = Path(tempfile.gettempdir())
    for variable, name in (("XDG_CONFIG_HOME", "llm-core-bench-config"), ("XDG_CACHE_HOME", "llm-core-bench-cache")):
        (home / name).mkdir(exist_ok=True)
        env[variable] = str(home / name)
    env["GEMINI_API_KEY"] = "bench-key"
    env["OPENAI_API_KEY"] = "bench-key"
    # llm-core with its two provider plugins: an installed core-otel-plugin would observe every
    # call (its cost is benchmarks.otel_overhead's measure, not this one's)
    env["LLM_CORE_PLUGINS"] = "core-gemini-plugin,core-openai-plugin"
    return env


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    """Run ``code`` in a fresh interpreter; its last line of output (JSON) and the wall time (ms)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args, "-c", code],
        cwd=ROOT,
        env=env or bench_env(),
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


def _environments() -> dict[str, dict[str, str]]:
    uncached = {**bench_env(), "LLM_CORE_DISCOVERY_CACHE": "0"}
    return {name: uncached if name == "llm-core, no cache" else bench_env() for name in STARTUP}


def startup(runs: int) -> dict[str, Any]:
    """The :data:`STARTUP` programs, ``runs`` fresh interpreters each, interleaved (after one
    discarded round that warms the bytecode, file and discovery caches)."""
    envs = _environments()
    for name, code in STARTUP.items():
        _run(code, env=envs[name])
    time.sleep(0.1)
    walls: dict[str, measure.Series] = {name: measure.Series() for name in STARTUP}
    parts: dict[str, list[float]] = {"import_ms": [], "discover_ms": [], "select_ms": []}
    last: dict[str, Any] = {}
    scanned: dict[str, bool] = {}
    for round_no in range(runs):
        names = list(STARTUP) if round_no % 2 == 0 else list(STARTUP)[::-1]
        for name in names:
            result, wall = _run(STARTUP[name], env=envs[name])
            walls[name].add_round([wall])
            if name.startswith("llm-core"):
                scanned[name] = result["scanned"]
            if name == "llm-core":
                last = result
                for key, values in parts.items():
                    values.append(result[key])
    modules: list[str] = last["modules"]
    tops = {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)
    ours = walls["llm-core"]
    return {
        "wall_ms": {name: series.summary() for name, series in walls.items()},
        "vs_scan": measure.compare(ours, walls["scan"]),
        "vs_entry_points": measure.compare(ours, walls["entry points"]),
        "uncached_vs_scan": measure.compare(walls["llm-core, no cache"], walls["scan"]),
        "uncached_vs_entry_points": measure.compare(walls["llm-core, no cache"], walls["entry points"]),
        "scanned": scanned,
        "parts_ms": {k: measure.Series(samples=v).median for k, v in parts.items()},
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


def ready(url: str, runs: int) -> dict[str, Any]:
    """Ready to call: both providers and their SDK clients built through llm-core, against the
    bare SDKs' import and client construction; fresh interpreters, alternating."""
    programs = {side: code.format(url=url) for side, code in _READY.items()}
    for code in programs.values():  # warm bytecode and file caches
        _run(code)
    walls = {side: measure.Series() for side in programs}
    for round_no in range(runs):
        for side in programs if round_no % 2 == 0 else list(programs)[::-1]:
            walls[side].add_round([_run(programs[side])[1]])
    return measure.compare(walls["core"], walls["bare"])
