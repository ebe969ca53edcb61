"""Calls against a loopback server that answers a gzip bomb, in a process of their own, so that
the peak memory measured is theirs: ``python -m tests.transport.bomb_child '<json list>'`` (from the
repository root) prints one JSON line
of figures per case. The peak (VmHWM) is reset before each case.

Each case: ``target`` (gemini/openai), ``mode`` (sync/async), ``kind`` (call/stream), ``bomb``
(path of the gzip body), ``options`` (provider options, e.g. ``max_response_bytes``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.reliability.fault_server import FaultServer, respond
from tests.reliability.fault_targets import HTTP_TARGETS
from tests.transport.helpers import error_of, run, warm


def status(field: str) -> int:
    """A figure of /proc/self/status, in KiB."""
    with open("/proc/self/status", encoding="ascii") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))


def main() -> None:
    for case in json.loads(sys.argv[1]):
        measure(case)


def measure(args: dict[str, Any]) -> None:
    http = next(t for t in HTTP_TARGETS if t.name == args["target"])
    bomb = Path(args["bomb"]).read_bytes()
    kind, mode = args["kind"], args["mode"]
    with FaultServer() as server:
        server.fallback = http.upstream
        provider = http.build(server.url, **args["options"])
        warm(provider, kind, mode)
        server.clear()
        content_type = "text/event-stream" if kind == "stream" else "application/json"
        server.script(respond(200, bomb, headers={"Content-Encoding": "gzip"}, content_type=content_type))
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")  # the peak (VmHWM) starts again from here
        before = status("VmRSS")
        result, elapsed = run(provider, kind, mode)
        peak = status("VmHWM")
        error = error_of(result)
        print(
            json.dumps(
                {
                    "case": args,
                    "error": type(error).__name__ if error else None,
                    "message": error.message if error else None,
                    "growth_kib": peak - before,
                    "requests": server.count,
                    "seconds": round(elapsed, 3),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
