"""How far a reader must follow one call: ``python -m benchmarks.callpath [--check]``.

One ``chat_completion`` on each plugin (and one router stream of three text deltas) runs against
the loopback server under :func:`sys.setprofile`. Every Python function entered is attributed to
its source file; the project's own files (``core/src``, ``plugins/*/src``) are kept in the order
they are entered. Two figures come out of that sequence: how many project files the call runs in,
and how often the next function entered is in another project file than the last one (functions
of the SDK, httpx2 or the standard library in between do not count). The first call of each
side is a warm-up (lazy imports, clients built); the second is counted.

Only the provider plugins are loaded (``LLM_CORE_PLUGINS``): an installed observer plugin adds
a path of its own. ``--check`` fails when a figure exceeds its limit in :data:`LIMITS`, so the path cannot drift
back to a long one unnoticed (``tests/benchmarks/test_callpath.py`` runs the same check).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

from benchmarks.sides import API_KEY, MODELS, PROMPT, TIMEOUT_S

ROOT = Path(__file__).resolve().parent.parent
#: The source folders whose files count: the core and every plugin (observer plugins excluded:
#: they run only when installed observers listen).
SOURCES = (ROOT / "core" / "src", ROOT / "plugins" / "gemini" / "src", ROOT / "plugins" / "openai" / "src")

#: The project files the HTTP library drives: how often it enters the guarded transport (once per
#: piece of body it reads) is that library's choice, and changes from one of its releases to the
#: next; the limits below leave these files out.
HTTP_DRIVEN = "llm_core/transport/"
#: Measure → (most project files, most changes of file) outside :data:`HTTP_DRIVEN`: what the path
#: measures now with a little room (in a full test run one call entered a module more than on its
#: own: state other tests left behind), so that it cannot grow back unnoticed. With the transport counted, the whole
#: paths were 25/67, 21/67, 23/74 and 34/192 before the provider was composed, and are printed
#: beside these; the aim is 12/24 per call and 18 files for a router stream.
LIMITS: dict[str, tuple[int, int]] = {
    "gemini chat_completion": (25, 47),
    "openai chat_completion": (22, 45),
    "openai-chat chat_completion": (24, 53),
    "openai router stream": (35, 161),
}


@dataclass(frozen=True)
class Path_:
    """The project files one call entered, in order (a file entered again after another is
    listed again): its files and its changes of file."""

    sequence: tuple[str, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.sequence))

    @property
    def changes(self) -> int:
        return max(len(self.sequence) - 1, 0)

    def without(self, prefix: str) -> Path_:
        """The same path with the files under ``prefix`` left out."""
        kept: list[str] = []
        for name in self.sequence:
            if not name.startswith(prefix) and kept[-1:] != [name]:
                kept.append(name)
        return Path_(tuple(kept))

    def as_dict(self) -> dict[str, Any]:
        return {"files": len(self.files), "changes": self.changes, "paths": list(self.files)}


def _project_file(filename: str) -> str | None:
    for source in SOURCES:
        if filename.startswith(str(source)):
            return str(Path(filename).relative_to(source))
    return None


@contextmanager
def traced() -> Iterator[list[str]]:
    """The project files of every Python call and return while inside, in order."""
    seen: list[str] = []
    cache: dict[str, str | None] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        if filename not in cache:
            cache[filename] = _project_file(filename)
        name = cache[filename]
        if name is not None and (not seen or seen[-1] != name):
            seen.append(name)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def measure(run: Callable[[], object]) -> Path_:
    """The path of ``run()`` (run once before, untraced)."""
    run()
    with traced() as seen:
        run()
    return Path_(tuple(seen))


@contextmanager
def quiet_calls() -> Iterator[None]:
    """Logging below WARNING off, as it is by default: a caller (a test run, an application)
    may have turned DEBUG on, and then the built-in logging observer and the redaction filters
    on the SDKs' loggers run on every call; the measure is of the call, not of its logging."""
    previous = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        yield
    finally:
        logging.disable(previous)


def measures(url: str) -> dict[str, Path_]:
    """Every measure of :data:`LIMITS` against the loopback server at ``url``."""
    with quiet_calls():
        return _measures(url)


def _measures(url: str) -> dict[str, Path_]:
    from benchmarks.sides import core_provider
    from llm_core.registry import get_registry

    found: dict[str, Path_] = {}
    for provider in MODELS:
        p: Any = core_provider(provider, url)
        found[f"{provider} chat_completion"] = measure(partial(p.chat_completion, PROMPT))
    # a router whose first choice is the Responses API on the loopback server (it answers: no
    # fallback); the registry's own "openai" provider would go to api.openai.com
    registry = get_registry()
    registry.add_endpoint(
        "loopback-responses", plugin="openai", api="responses", base_url=url + "/v1", api_key=API_KEY,
        models=[MODELS["openai"]], timeout=TIMEOUT_S,
    )  # fmt: skip
    router = registry.router(prefer=["loopback-responses"])

    def router_stream() -> object:
        return list(router.stream_chat_completion(PROMPT, model=MODELS["openai"]))

    found["openai router stream"] = measure(router_stream)
    return found


def over_limits(found: dict[str, Path_]) -> list[str]:
    """The measures beyond their limits (the files the HTTP library drives left out), in words."""
    problems = []
    for name, whole in found.items():
        path = whole.without(HTTP_DRIVEN)
        most_files, most_changes = LIMITS[name]
        if len(path.files) > most_files or path.changes > most_changes:
            problems.append(
                f"{name}: {len(path.files)} files (at most {most_files}), "
                f"{path.changes} changes of file (at most {most_changes})"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail when a measure exceeds its limit")
    parser.add_argument("--json", action="store_true", help="print the files of each path as JSON")
    args = parser.parse_args(argv)
    # the provider plugins only: an installed observer plugin (OpenTelemetry) adds its own path
    os.environ["LLM_CORE_PLUGINS"] = "core-gemini-plugin,core-openai-plugin"
    from benchmarks.server import LoopbackServer

    with LoopbackServer(deltas=3) as server:
        found = measures(server.url)
    if args.json:
        print(json.dumps({name: path.as_dict() for name, path in found.items()}, indent=2))
    else:
        for name, path in found.items():
            own = path.without(HTTP_DRIVEN)
            print(
                f"{name:32} {len(path.files):3} files {path.changes:4} changes of file"
                f" ({len(own.files)} / {own.changes} without the transport)"
            )
    problems = over_limits(found)
    for problem in problems:
        print(f"over the limit: {problem}", file=sys.stderr)
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
