"""Author the demo cassettes ``cassettes/{gemini,openai}/demo.json`` offline.

Runs the demo's own calls (``llm_core.cli.demo._calls``) on the providers exactly as the demo
builds them (``get_registry().get(identifier)`` with the replay placeholder key) through the real
SDKs. The sync httpx2 transport is replaced by a capture that answers with a reply modelled on the
real service (the plugins' own authoring helpers: ``tests/gemini/cassette_author.py`` and
``tests/openai/openai_wire.py``) and records the exact request sent. The result is written in the
readable cassette format; ``llm-core --replay cassettes demo`` then replays it.

Run from the repository root:

    python -m tests.demo.author_demo_cassettes          # both providers
    python -m tests.demo.author_demo_cassettes openai   # one of them
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from llm_core.cli.demo import _calls
from llm_core.cli.replay import PLACEHOLDER_KEY
from llm_core.registry import get_registry
from llm_core.testing.cassettes import ReadableJSONSerializer
from tests.gemini import cassette_author as gemini_author
from tests.openai import cassette_author as openai_author
from tests.openai.openai_scenarios import (
    body as oa_body,
    ok as oa_ok,
    sse as oa_sse,
)
from tests.openai.openai_wire import Answer, Call, Msg, Think, decision_body, usage

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"

g = gemini_author

# -- Gemini (gemini-2.5-flash; decisions on decisions-prerelease) ---------------------------------

GEMINI_CHAT = (
    "Routing by capability lets an application send each request to a model that actually supports what "
    "it needs (vision, tools, structured output or thinking), so calls work without hard-coding one "
    "provider and can fall back to another capable one when it fails."
)
GEMINI_STREAM = [
    g.thought(
        "**Checking divisibility**\n\nThe square root of 1021 is just under 32, so I only need the "
        "primes up to 31. It is odd, its digit sum is 4 and it does not end in 0 or 5.\n\n"
    ),
    g.thought(
        "**Trying the rest**\n\n7 x 145 = 1015, 11 x 92 = 1012, 13 x 78 = 1014, 17 x 60 = 1020, "
        "19 x 53 = 1007, 23 x 44 = 1012, 29 x 35 = 1015 and 31 x 32 = 992: none divides 1021.\n\n"
    ),
    g.text("Yes, 1021 is a prime number"),
    g.text(": it has no divisor other than 1 and itself."),
    g.text("", thoughtSignature=g.signature("demo-stream")),
]
GEMINI_DECISION = {
    "answers": {
        "is_bug": {"type": "noul", "noul": 0.96, "confidence": 0.96},
        "area": {
            "type": "choice",
            "choice": "uploads",
            "confidence": 0.93,
            "probabilities": {"uploads": 0.93, "billing": 0.02, "login": 0.05},
        },
    },
    "usage": {"total_input_tokens": 118, "total_output_tokens": 4, "total_tokens": 122},
}
GEMINI_REPLIES = [
    g.ok(g.generate("demo/chat", [g.text(GEMINI_CHAT)], meta=g.usage(15, 46, 389))),
    g.sse(g.chunks("demo/stream", GEMINI_STREAM, prompt=16, thoughts=412)),
    g.ok(
        g.generate(
            "demo/tools",
            [g.call("get_weather", {"city": "Paris"}, g.signature("demo-tools"))],
            meta=g.usage(52, 15, 64),
        )
    ),
    g.ok(g.generate("demo/json", [g.text('{\n  "name": "Red",\n  "hex": "#FF0000"\n}')], meta=g.usage(11, 17))),
    g.ok(GEMINI_DECISION),
]

# -- OpenAI (gpt-5.4-mini; decisions on gpt-6-luna) ------------------------------------------------

OPENAI_CHAT = (
    "Routing by capability lets an application send each request to a model that can actually handle it, "
    "such as vision, tools or structured output, so features work without hard-coding one provider and "
    "requests can fall back to another capable model when one fails."
)
OPENAI_STREAM = Answer(
    [
        Think(
            [
                [
                    "**Checking divisibility of 1021**\n\n",
                    "The square root of 1021 is about 31.95, ",
                    "so I test the primes up to 31. ",
                    "1021 is odd and its digit sum is 4, so 2, 3 and 5 are out.",
                ],
                [
                    "**Trying 7 to 31**\n\n",
                    "7, 11, 13, 17, 19, 23, 29 and 31 all leave a remainder, ",
                    "so 1021 is prime.",
                ],
            ],
            seed="demo-stream",
        ),
        Msg(["Yes", ", 1021 is a prime number", ": its only divisors are 1 and itself."]),
    ],
    usage(19, 310, reasoning=256),
    seed="demo_stream",
)
OPENAI_DECISION = [
    {"type": "predicate", "name": "is_bug", "probability": 0.95},
    {
        "type": "choice",
        "name": "area",
        "choice": "uploads",
        "confidence": 0.94,
        "probabilities": [
            {"value": "uploads", "probability": 0.94},
            {"value": "billing", "probability": 0.01},
            {"value": "login", "probability": 0.05},
        ],
    },
]
OPENAI_REPLIES = [
    oa_ok(Answer([Think([]), Msg([OPENAI_CHAT])], usage(18, 112, reasoning=64), seed="demo_chat")),
    oa_sse(OPENAI_STREAM),
    oa_ok(
        Answer(
            [Think([]), Call("get_weather", ['{"city":"Paris"}'], "demo")],
            usage(58, 82, reasoning=64),
            seed="demo_tools",
        )
    ),
    oa_ok(Answer([Think([]), Msg(['{"name":"Red","hex":"#FF0000"}'])], usage(64, 90, reasoning=64), seed="demo_json")),
    oa_body(decision_body("gpt-6-luna", OPENAI_DECISION, (96, 2))),
]


class GeminiWire(openai_author.Wire):
    """The OpenAI author's capture with Gemini replies (``request -> httpx2.Response``)."""

    def __init__(self, replies: list[Callable[[httpx2.Request], httpx2.Response]]) -> None:
        super().__init__([])
        self.gemini_replies = list(replies)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        if not self.gemini_replies:
            raise AssertionError(f"no reply left for {request.method} {request.url}")
        sent = request.read()
        response = self.gemini_replies.pop(0)(request)
        content = response.read()
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        self.interactions.append(self._interaction(request, sent, response.status_code, headers, content))
        return httpx2.Response(response.status_code, headers=headers, content=content, request=request)


def _clean_environment() -> None:
    for name in list(os.environ):
        if name.startswith(("LLM_CORE_", "OPENAI_", "GEMINI_", "GOOGLE_")):
            os.environ.pop(name)
    os.environ["LLM_CORE_CONFIG"] = ""  # no config file: the demo's defaults
    os.environ["XDG_CONFIG_HOME"] = str(ROOT / ".no-config")
    os.environ["GEMINI_API_KEY"] = PLACEHOLDER_KEY
    os.environ["OPENAI_API_KEY"] = PLACEHOLDER_KEY


def author(identifier: str) -> Path:
    """Run the demo's calls for ``identifier`` and write ``cassettes/<identifier>/demo.json``."""
    if identifier == "gemini":
        wire: Any = GeminiWire(GEMINI_REPLIES)
        expected = len(GEMINI_REPLIES)
    else:
        wire = openai_author.Wire(OPENAI_REPLIES)
        expected = len(OPENAI_REPLIES)
    with openai_author.wired(wire):
        results = _calls(get_registry().get(identifier))
    failed = {name: r for name, r in results.items() if not r["ok"]}
    if failed or len(wire.interactions) != expected:
        raise AssertionError(f"{identifier}: {len(wire.interactions)}/{expected} exchanges; failed: {failed}")
    text = ReadableJSONSerializer.serialize({"interactions": wire.interactions, "version": 1})
    if PLACEHOLDER_KEY in text:
        raise AssertionError(f"{identifier}: the key reached the cassette")
    path = CASSETTES / identifier / "demo.json"
    path.write_text(text, encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {json.dumps(results, ensure_ascii=False)[:400]}")
    return path


def main(names: list[str]) -> None:
    _clean_environment()
    for identifier in names or ["gemini", "openai"]:
        author(identifier)


if __name__ == "__main__":
    main(sys.argv[1:])
