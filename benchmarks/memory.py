"""Memory over many calls, one fresh process per (provider, side).

After a warm-up, the process records its resident set size (``/proc/self/statm``) and the number
of live objects tracked by the garbage collector every ``calls / 10`` calls, then reports the
growth from the first checkpoint to the last and the peak RSS (``VmHWM``). Objects are the
sharper leak signal (allocator arenas make RSS move in steps); both must stay flat.

Run one: ``python -m benchmarks.memory gemini core http://127.0.0.1:PORT 10000``.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.coldstart import ROOT, bench_env

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * _PAGE


def peak_rss_bytes() -> int:
    """``VmHWM``: the peak RSS of this process image (``ru_maxrss`` would report the parent's
    peak when that was higher, since Linux carries it across fork and exec)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def measure(provider: str, side: str, url: str, calls: int, warmup: int) -> dict[str, Any]:
    from benchmarks.sides import build

    call = build(provider, side, url).call
    for _ in range(warmup):
        call()
    step = max(calls // 10, 1)
    checkpoints: list[tuple[int, int, int]] = []
    for done in range(calls + 1):
        if done % step == 0:
            gc.collect()
            checkpoints.append((done, rss_bytes(), len(gc.get_objects())))
        if done < calls:
            call()
    first, last = checkpoints[0], checkpoints[-1]
    return {
        "calls": calls,
        "rss_start_mib": first[1] / 2**20,
        "rss_end_mib": last[1] / 2**20,
        "rss_growth_mib": (last[1] - first[1]) / 2**20,
        "peak_rss_mib": peak_rss_bytes() / 2**20,
        "objects_start": first[2],
        "objects_end": last[2],
        "objects_growth": last[2] - first[2],
        "checkpoints": [{"calls": c, "rss_mib": r / 2**20, "objects": o} for c, r, o in checkpoints],
    }


def run(provider: str, side: str, url: str, calls: int, warmup: int) -> dict[str, Any]:
    """Measure in a fresh process (so the sides do not share a heap)."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", provider, side, url, str(calls), str(warmup)],
        cwd=ROOT,
        env=bench_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"memory run {provider}/{side} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    name, which, base, count, warm = sys.argv[1:6]
    print(json.dumps(measure(name, which, base, int(count), int(warm))))
