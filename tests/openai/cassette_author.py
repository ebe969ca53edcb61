"""Author the OpenAI cassettes offline: run every scenario of ``openai_scenarios`` through the
real provider and the real ``openai`` SDK, with the HTTP transport answering from the scenario's
canned replies, and write the captured exchange as a readable cassette.

The requests in the cassettes are therefore exactly what the current SDK sends for our calls;
the replies are modelled on the SDK types and on real traffic recorded against the API.

Run from the repository root:

    python -m tests.openai.cassette_author                   # every scenario
    python -m tests.openai.cassette_author chat_basic ...    # some of them
    python -m tests.openai.cassette_author conformance/chat  # a conformance-kit cassette

To record from the real API instead, run the tests with ``LLM_CORE_RECORD=all`` and a real
``OPENAI_API_KEY`` (see docs/openai.md); authored-only scenarios (failures) are never re-recorded.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from llm_core.testing.cassettes import FILTERED, SECRET_HEADERS, ReadableJSONSerializer
from tests.openai.openai_scenarios import (
    CASSETTES,
    CONFORMANCE,
    CONFORMANCE_REPLIES,
    SCENARIOS,
    Reply,
    Scenario,
    make_provider,
)

#: Request headers that describe the authoring machine, not the request.
NOISY_HEADERS = ("x-stainless-os", "x-stainless-arch", "x-stainless-runtime-version", "x-stainless-read-timeout")
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


class Wire:
    """Answers requests from a list of replies and records every exchange."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)  # consumed in order
        self.interactions: list[dict[str, Any]] = []

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        if not self.replies:
            raise AssertionError(f"no reply left for {request.method} {request.url}")
        body = request.read()
        decoded: Any = None
        if request.headers.get("content-type", "").startswith("application/json") and body:
            decoded = json.loads(body)
        status, payload, headers = self.replies.pop(0)(decoded, request)
        if isinstance(payload, dict | list):
            content = json.dumps(payload, ensure_ascii=False).encode()
            headers = {"content-type": "application/json", **headers}
        else:
            content = payload.encode() if isinstance(payload, str) else payload
            headers = {"content-type": "text/event-stream; charset=utf-8", **headers}
        headers = {"openai-processing-ms": "321", "openai-version": "2020-10-01",
                   "x-request-id": f"req_{len(self.interactions):02d}" + "0" * 30, **headers}
        self.interactions.append(self._interaction(request, body, status, headers, content))
        return httpx2.Response(status, headers=headers, content=content, request=request)

    @staticmethod
    def _interaction(request: httpx2.Request, body: bytes, status: int, headers: dict[str, str],
                     content: bytes) -> dict[str, Any]:
        sent = {}
        for name, value in request.headers.items():
            lowered = name.lower()
            if lowered in NOISY_HEADERS:
                continue
            sent[lowered] = [FILTERED if lowered in SECRET_HEADERS else value]
        return {
            "request": {"method": request.method, "uri": str(request.url), "body": body, "headers": sent},
            "response": {
                "status": {"code": status, "message": REASONS.get(status, "")},
                "headers": {k: [v] for k, v in headers.items()},
                "body": {"string": content.decode("utf-8")},
            },
        }


@contextmanager
def wired(wire: Wire) -> Iterator[None]:
    """Route the SDK's (sync) HTTP transport to ``wire``."""
    original = httpx2.HTTPTransport.handle_request

    def handle(self: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
        return wire.answer(request)

    httpx2.HTTPTransport.handle_request = handle  # type: ignore[method-assign]
    try:
        yield
    finally:
        httpx2.HTTPTransport.handle_request = original  # type: ignore[method-assign]


def author(scenario: Scenario) -> Path:
    wire = Wire(scenario.replies)
    provider = make_provider(**scenario.options)
    with wired(wire):
        try:
            result = scenario.call(provider)
            for event in list(result) if hasattr(result, "__next__") else ():
                if getattr(event, "error", None) is not None:
                    print(f"  {scenario.name}: stream ERROR {type(event.error).__name__}: {event.error}")
        except Exception as exc:  # failures are part of many scenarios
            print(f"  {scenario.name}: {type(exc).__name__}: {exc}")
    if len(wire.interactions) != len(scenario.replies):
        raise AssertionError(f"{scenario.name}: {len(scenario.replies)} replies, "
                             f"{len(wire.interactions)} exchanges recorded")
    path = CASSETTES / f"{scenario.name}.json"
    path.write_text(ReadableJSONSerializer.serialize({"interactions": wire.interactions, "version": 1}))
    return path


def author_conformance(name: str) -> Path:
    """A cassette of the llm-core conformance kit: the kit's own calls (``run_scenario``)."""
    from llm_core.testing.scenarios import run_scenario

    replies = CONFORMANCE_REPLIES[name]
    wire = Wire(replies)
    with wired(wire):
        for result in run_scenario(make_provider(), name):
            if isinstance(result, Exception):
                print(f"  conformance/{name}: {type(result).__name__}: {result}")
    if len(wire.interactions) != len(replies):
        raise AssertionError(f"conformance/{name}: {len(replies)} replies, {len(wire.interactions)} exchanges")
    CONFORMANCE.mkdir(exist_ok=True)
    path = CONFORMANCE / f"{name}.json"
    path.write_text(ReadableJSONSerializer.serialize({"interactions": wire.interactions, "version": 1}))
    return path


def main(names: list[str]) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        os.environ.pop(variable, None)
    kit = {f"conformance/{name}" for name in CONFORMANCE_REPLIES}
    chosen = names or [*sorted(SCENARIOS), *sorted(kit)]
    unknown = sorted(set(chosen) - set(SCENARIOS) - kit)
    if unknown:
        raise SystemExit(f"unknown scenarios: {unknown}")
    for name in chosen:
        path = author_conformance(name.split("/", 1)[1]) if name in kit else author(SCENARIOS[name])
        print(f"{name} -> {path.relative_to(CASSETTES.parent.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
