"""One input line far over the limit, in a process of its own: ``big_line_child.py IN OUT``
prints the error and how much the peak memory (VmHWM) grew while the runner refused it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from llm_core.batch import run
from llm_core.errors import InvalidInputError
from llm_core.testing import FakeProvider


def peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/self/status")


if __name__ == "__main__":
    source, output = sys.argv[1:3]
    provider = FakeProvider()
    before = peak_kib()
    try:
        run(source, output=output, provider=provider, mode="local")
        error, message = None, ""
    except InvalidInputError as exc:
        error, message = type(exc).__name__, str(exc)
    print(json.dumps({"error": error, "message": message, "growth_kib": peak_kib() - before}))
