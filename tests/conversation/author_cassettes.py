"""Author the conversation cassettes (``cassettes/{gemini,openai}/conversation_*.json``) offline.

Each flow runs a real :class:`~llm_core.conversation.Conversation` through the real plugins and
SDKs; the HTTP transport answers from canned replies built with the plugin tests' wire builders
(``tests/gemini/cassette_author.py``, ``tests/openai/openai_wire.py``), whose shapes follow the
SDK types and real traffic recorded against the two services; vcrpy records the exact requests
the SDKs sent. The reply shapes, as the real services send them:

- Gemini thought parts, a ``thoughtSignature`` on the first of parallel ``functionCall`` parts and
  on the final text part (a signature on a function call is sent back on the next request);
  ``functionResponse`` turns.
- Gemini 429 ``RESOURCE_EXHAUSTED`` with ``RetryInfo``: the plugin tests' ``error_rate_limited``.
- OpenAI ``reasoning`` items with ``encrypted_content`` (``include=["reasoning.encrypted_content"]``,
  ``store=False``); ``function_call`` items and the ``function_call_output`` sent back.

Run from the repository root:

    python -m tests.conversation.author_cassettes          # every cassette
    python -m tests.conversation.author_cassettes gemini   # the ones whose name contains "gemini"
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from llm_core.testing.cassettes import ReadableJSONSerializer, use_cassette
from tests.conversation import flows
from tests.gemini.cassette_author import (
    _scrub,
    call,
    generate,
    ok,
    rate_limited,
    signature,
    text,
    thought,
    usage,
)
from tests.openai.cassette_author import Wire, wired as openai_wired
from tests.openai.openai_scenarios import ok as openai_ok
from tests.openai.openai_wire import (
    Answer,
    Call,
    Msg,
    Think,
    usage as openai_usage,
)

Reply = Callable[[httpx2.Request], httpx2.Response]
M = flows.GEMINI_MODEL


# -- Gemini: a three-step loop (parallel calls), then a two-step loop with a tool error --------

GEMINI_LOOP: list[Reply] = [
    ok(
        generate(
            "conversation/1",
            [
                thought(
                    "**Planning**\n\nTwo weather lookups and one clock lookup; the weather calls can run together.\n"
                ),
                call("get_weather", {"city": "Paris"}, signature("conv-1")),
                call("get_weather", {"city": "Tokyo"}),
            ],
            model=M,
            meta=usage(96, 28, 140),
        )
    ),
    ok(
        generate(
            "conversation/2",
            [call("local_time", {"city": "Tokyo"}, signature("conv-2"))],
            model=M,
            meta=usage(180, 12, 40),
        )
    ),
    ok(
        generate(
            "conversation/3",
            [
                text(
                    "Paris: 18 °C and cloudy. Tokyo: 24 °C and clear, local time 21:30.",
                    thoughtSignature=signature("conv-3"),
                )
            ],
            model=M,
            meta=usage(215, 24, 31),
        )
    ),
    ok(
        generate(
            "conversation/4",
            [call("get_weather", {"city": "Atlantis"}, signature("conv-4"))],
            model=M,
            meta=usage(250, 11, 52),
        )
    ),
    ok(
        generate(
            "conversation/5",
            [
                text(
                    "There is no weather station in Atlantis, so I cannot tell you.",
                    thoughtSignature=signature("conv-5"),
                )
            ],
            model=M,
            meta=usage(290, 15, 20),
        )
    ),
]

# -- OpenAI: the same two sends (reasoning items before each call and each answer) -------------

OPENAI_LOOP = [
    openai_ok(
        Answer(
            [
                Think([["**Planning**\n\n", "Weather for both cities at once, then the clock."]], seed="c1"),
                Call("get_weather", ['{"city":"Paris"}'], "paris"),
                Call("get_weather", ['{"city":"Tokyo"}'], "tokyo"),
            ],
            openai_usage(160, 120, reasoning=64),
            seed="conversation_1",
        )
    ),
    openai_ok(
        Answer(
            [
                Think([["**Clock**\n\n", "Now the local time in Tokyo."]], seed="c2"),
                Call("local_time", ['{"city":"Tokyo"}'], "time"),
            ],
            openai_usage(260, 60, reasoning=32),
            seed="conversation_2",
        )
    ),
    openai_ok(
        Answer(
            [Think([], seed="c3"), Msg(["Paris: 18 °C and cloudy. Tokyo: 24 °C and clear, local time 21:30."])],
            openai_usage(330, 70, reasoning=24),
            seed="conversation_3",
        )
    ),
    openai_ok(
        Answer(
            [
                Think([["**Atlantis**\n\n", "Try the weather tool."]], seed="c4"),
                Call("get_weather", ['{"city":"Atlantis"}'], "atlantis"),
            ],
            openai_usage(380, 50, reasoning=24),
            seed="conversation_4",
        )
    ),
    openai_ok(
        Answer(
            [Think([], seed="c5"), Msg(["There is no weather station in Atlantis, so I cannot tell you."])],
            openai_usage(450, 40, reasoning=16),
            seed="conversation_5",
        )
    ),
]

# -- the router: turn 1 on Gemini, turn 2 rate limited there and answered by OpenAI, turn 3 on
#    Gemini again (it gets OpenAI's turn as plain calls and results, its own signatures back) -----

FALLBACK_GEMINI: list[Reply] = [
    GEMINI_LOOP[0],
    GEMINI_LOOP[1],
    GEMINI_LOOP[2],
    rate_limited("38s", model=M),
    ok(
        generate(
            "conversation/fallback",
            [text("Tokyo is warmer: 24 °C against 18 °C in Paris.", thoughtSignature=signature("conv-6"))],
            model=M,
            meta=usage(330, 16, 25),
        )
    ),
]
FALLBACK_OPENAI = [OPENAI_LOOP[3], OPENAI_LOOP[4]]


def run_gemini(conversation: Any) -> None:
    conversation.send(flows.FIRST)
    conversation.send(flows.SECOND)


def run_fallback(conversation: Any) -> None:
    conversation.send(flows.FIRST)
    conversation.send(flows.SECOND)
    conversation.send(flows.THIRD)


def _gemini(replies: list[Reply], **config: Any) -> Any:
    from core_gemini_plugin.provider import GeminiProvider
    from llm_core.retry import RetryPolicy

    queue = list(replies)

    def answer(request: httpx2.Request) -> httpx2.Response:
        return queue.pop(0)(request)

    transport = httpx2.MockTransport(answer)
    provider = GeminiProvider(
        api_key=flows.KEY,
        retry=RetryPolicy.none(),
        client_args={"transport": transport},
        async_client_args={"transport": transport},
        **config,
    )
    return provider, queue


def _openai(**config: Any) -> Any:
    from core_openai_plugin.provider import OpenAIProvider
    from llm_core.retry import RetryPolicy

    return OpenAIProvider(api_key=flows.KEY, retry=RetryPolicy.none(), **config)


def _record(path: Path, action: Callable[[], None]) -> list[dict[str, Any]]:
    path.unlink(missing_ok=True)
    with use_cassette(path, mode="all", before_record_response=_scrub):
        action()
    return list(json.loads(path.read_text(encoding="utf-8"))["interactions"])


def author_gemini() -> Path:
    provider, queue = _gemini(GEMINI_LOOP)
    path = flows.GEMINI_CASSETTES / "conversation_tool_loop.json"
    _record(path, lambda: run_gemini(provider.conversation(**flows.settings(M))))
    assert not queue, f"{len(queue)} Gemini replies unused"
    return path


def _write_openai(path: Path, wire: Any) -> Path:
    """The OpenAI exchanges as the OpenAI plugin tests' author writes them (its ``Wire``)."""
    assert not wire.replies, f"{len(wire.replies)} OpenAI replies unused"
    path.write_text(ReadableJSONSerializer.serialize({"interactions": wire.interactions, "version": 1}))
    return path


def author_openai() -> Path:
    wire = Wire(OPENAI_LOOP)
    with openai_wired(wire):
        run_gemini(_openai().conversation(**flows.settings(flows.OPENAI_MODEL)))
    return _write_openai(flows.OPENAI_CASSETTES / "conversation_tool_loop.json", wire)


def fallback_router(gemini: Any, openai: Any) -> Any:
    """The router of the fallback flow over these two providers (a registry of just them)."""
    from core_gemini_plugin.plugin import SPEC as GEMINI
    from core_openai_plugin.plugin import SPEC as OPENAI
    from llm_core.registry import Registry
    from llm_core.specs import ProviderSpec

    registry = Registry(strict=False)
    for spec, instance in ((GEMINI, gemini), (OPENAI, openai)):
        registry.register(
            ProviderSpec(
                spec.identifier, spec.name, spec.features, lambda _i=instance, **_c: _i, spec.models, spec.default_model
            )
        )
    return registry.router("tools", prefer=["gemini", "openai"])


def author_fallback() -> list[Path]:
    """vcrpy records the Gemini side (its mock transport); the OpenAI side is the Wire's record
    (inside the cassette, ``wired`` takes the place of vcrpy's patch of the real transport)."""
    gemini, queue = _gemini(FALLBACK_GEMINI, model=M)
    wire = Wire(FALLBACK_OPENAI)
    router = fallback_router(gemini, _openai(model=flows.OPENAI_MODEL))
    path = flows.GEMINI_CASSETTES / "conversation_fallback.json"

    def run() -> None:
        with openai_wired(wire):
            run_fallback(router.conversation(**flows.settings(None)))

    _record(path, run)
    assert not queue, "Gemini replies unused"
    return [path, _write_openai(flows.OPENAI_CASSETTES / "conversation_fallback.json", wire)]


# -- the conformance kit's tool_loop scenario (cassettes/<plugin>/conformance/tool_loop.json) ----------


def author_conformance() -> list[Path]:
    """The kit's own calls (``run_scenario``): a call of ``get_weather``, then the answer (the
    same shapes as the plugins' ``conformance/tools`` cassettes)."""
    from llm_core.testing.scenarios import run_scenario

    gemini_replies = [
        ok(
            generate(
                "conformance/tool_loop",
                [call("get_weather", {"city": "Paris"}, signature("kit-loop"))],
                meta=usage(64, 15, 57),
            )
        ),
        ok(
            generate(
                "conformance/tool_loop_2",
                [text("It is sunny in Paris right now, at about 18 °C.")],
                meta=usage(120, 14),
            )
        ),
    ]
    provider, queue = _gemini(gemini_replies)
    gemini_path = flows.GEMINI_CASSETTES / "conformance" / "tool_loop.json"
    _record(gemini_path, lambda: run_scenario(provider, "tool_loop"))
    assert not queue, "Gemini replies unused"
    wire = Wire(
        [
            openai_ok(
                Answer(
                    [Think([]), Call("get_weather", ['{"city":"Paris"}'], "kit")],
                    openai_usage(82, 60, reasoning=40),
                    seed="kit_tool_loop_1",
                )
            ),
            openai_ok(
                Answer(
                    [Think([]), Msg(["It is 18 °C and sunny in Paris."])],
                    openai_usage(142, 50, reasoning=32),
                    seed="kit_tool_loop_2",
                )
            ),
        ]
    )
    with openai_wired(wire):
        run_scenario(_openai(), "tool_loop")
    return [gemini_path, _write_openai(flows.OPENAI_CASSETTES / "conformance" / "tool_loop.json", wire)]


def main(selected: list[str]) -> None:
    jobs: dict[str, Callable[[], Any]] = {
        "gemini/conversation_tool_loop": author_gemini,
        "openai/conversation_tool_loop": author_openai,
        "conversation_fallback": author_fallback,
        "conformance/tool_loop": author_conformance,
    }
    for name, job in jobs.items():
        if not selected or any(s in name for s in selected):
            print(name, "->", job())


if __name__ == "__main__":
    main(sys.argv[1:])
