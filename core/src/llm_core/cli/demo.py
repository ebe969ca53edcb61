"""``llm-core demo``: discovery, routing, then real calls through every installed provider.

With ``--replay cassettes`` the calls are answered from the repository's recorded cassettes
(the requests below are exactly the recorded ones); with keys set the same tour runs live.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import Any

from pydantic import BaseModel

from llm_core.cli.output import emit_json, table
from llm_core.errors import LLMError
from llm_core.features import Feature
from llm_core.registry import get_registry
from llm_core.streaming import StreamEventType

CHAT_PROMPT = "In one sentence: why would an application route LLM calls by capability?"
STREAM_PROMPT = "Is 1021 a prime number? Answer in one short sentence."
TOOL_PROMPT = "What is the weather in Paris right now?"
JSON_PROMPT = "Name one primary colour and its hex code."
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
DECISION_SUBJECT = {
    "task": "Triage a support ticket.",
    "candidate": "Ticket: 'The app crashes every time I upload a photo larger than 10 MB.'",
    "evidence": ["Crash reports for uploads over 10 MB rose this week."],
}
DECISION_QUESTIONS = [
    {"key": "is_bug", "kind": "yes_no", "instructions": "Does the ticket describe a software defect?"},
    {
        "key": "area",
        "kind": "choice",
        "instructions": "Which product area is affected?",
        "options": ["uploads", "billing", "login"],
    },
]


class Colour(BaseModel):
    """The demo's structured-output schema."""

    name: str
    hex: str


def _brief(value: Any) -> str:
    """One paragraph for people: answers and calls in compact form, whitespace folded."""
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        parts = []
        for key, answer in value.items():
            shown = answer.get("choice", answer.get("value"))
            conf = answer.get("confidence")
            parts.append(f"{key}={shown}" + (f" (confidence {conf:.2f})" if isinstance(conf, float) else ""))
        return ", ".join(parts)
    return " ".join(str(value).split())


def _field(key: str, value: Any) -> None:
    """``key: value`` under a call, the value wrapped to the terminal's width (whole, not cut)."""
    width = max(40, shutil.get_terminal_size(fallback=(100, 24)).columns - 1)
    print(textwrap.fill(_brief(value), width=width, initial_indent=f"      {key}: ", subsequent_indent=" " * 8))


def _step(title: str) -> None:
    print(f"\n== {title}")


def _calls(provider: Any) -> dict[str, Any]:
    """Run the five calls; each result or error is reported, none stops the tour."""
    results: dict[str, Any] = {}

    def attempt(name: str, run: Any) -> None:
        try:
            results[name] = {"ok": True, **run()}
        except LLMError as exc:
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def chat() -> dict[str, Any]:
        r = provider.chat_completion(CHAT_PROMPT)
        return {"content": r.content, "model": r.model, "tokens": r.usage.total_tokens}

    def stream() -> dict[str, Any]:
        thinking: list[str] = []
        answer: list[str] = []
        meta: Any = None
        error: LLMError | None = None
        for event in provider.stream_chat_completion(STREAM_PROMPT, thinking=True):
            if event.type is StreamEventType.TOKEN:
                (thinking if event.is_thinking else answer).append(event.text or "")
            elif event.type is StreamEventType.METADATA:
                meta = event.metadata
            elif event.type is StreamEventType.ERROR:
                error = event.error
        if error is not None:
            raise error
        return {
            "thinking": "".join(thinking),
            "content": "".join(answer),
            "thinking_tokens": meta.thinking_tokens if meta else None,
        }

    def tools() -> dict[str, Any]:
        r = provider.chat_completion_with_tools(TOOL_PROMPT, [WEATHER_TOOL])
        calls = [{"name": c.name, "arguments": c.arguments} for c in r.tool_calls or ()]
        return {"tool_calls": calls}

    def structured() -> dict[str, Any]:
        colour = provider.generate_json(JSON_PROMPT, Colour)
        return {"json": colour.model_dump()}

    def decide() -> dict[str, Any]:
        r = provider.decide(DECISION_SUBJECT, DECISION_QUESTIONS)
        return {
            "answers": {k: a.model_dump(exclude_none=True) for k, a in r.answers.items()},
            "probability_kind": r.probability_kind.value,
        }

    attempt("chat", chat)
    if provider.supports_feature(Feature.STREAMING):
        attempt("stream_with_thinking", stream)
    if provider.supports_feature(Feature.TOOLS):
        attempt("tool_call", tools)
    if provider.supports_feature(Feature.JSON_MODE):
        attempt("json", structured)
    if provider.supports_feature(Feature.DECISION):
        attempt("decision", decide)
    return results


def _replay_reason(reason: str) -> str:
    return "no key needed: replay answers from recordings" if reason == "credentials present" else reason


#: A local port nothing listens on: the first provider's calls fail at once with a connection error.
UNREACHABLE = "http://127.0.0.1:9"


def _fallback(registry: Any, first: str, second: str) -> dict[str, Any]:
    """A router whose preferred provider cannot be reached (its base URL points at a closed local
    port, one attempt): the call falls back to the next capable provider."""
    router = registry.router(
        Feature.CHAT, prefer=[first, second], **{first: {"base_url": UNREACHABLE, "retry": {"max_attempts": 1}}}
    )
    try:
        reply = router.chat_completion(CHAT_PROMPT)
    except LLMError as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "ok": True,
        "answered_by": reply.provider,
        "fallback_from": list(reply.metadata.get("fallback_from", [])),
        "content": reply.content,
    }


def run_demo(args: argparse.Namespace) -> int:
    registry = get_registry()
    report: dict[str, Any] = {"replay": args.replay_active, "providers": [], "routes": [], "calls": {}}
    specs = registry.providers()
    report["providers"] = [{"provider": s.identifier, "features": sorted(f.value for f in s.features)} for s in specs]
    if not args.json:
        mode = (
            "REPLAY: answers come from recorded cassettes (no key; nothing leaves this machine)"
            if args.replay_active
            else "LIVE"
        )
        print(f"llm-core demo - {mode}")
        _step("1. Providers discovered through the llm_core entry points")
        table(["provider", "features"], [[r["provider"], ", ".join(r["features"])] for r in report["providers"]])
    for wanted in ((Feature.VISION, Feature.STREAMING), (Feature.DECISION,), (Feature.EMBEDDINGS, Feature.IMAGE)):
        try:
            selection = registry.select(*wanted)
            route = {
                "features": [f.value for f in wanted],
                "provider": selection.identifier,
                "model": selection.model,
                "why": list(selection.reasons),
            }
        except LLMError as exc:
            route = {"features": [f.value for f in wanted], "provider": None, "why": [str(exc)]}
        report["routes"].append(route)
    if args.replay_active:  # placeholder keys are set in replay: say so instead of "credentials present"
        for route in report["routes"]:
            route["why"] = [_replay_reason(reason) for reason in route["why"]]
    if not args.json:
        _step("2. Selection by capability: registry.select(...)")
        for route in report["routes"]:
            label = " + ".join(route["features"])
            if route["provider"] is None:
                print(f"  {label} -> no provider: {route['why'][0]}")
            else:
                print(f"  {label} -> {route['provider']} ({'; '.join(route['why'])})")
    failures = 0
    step = 3
    # a provider without credentials is listed above, not called: it could only fail
    called = [spec for spec in specs if spec.identifier != "fake" and spec.credentials_present()]
    report["skipped"] = {
        spec.identifier: f"no credentials: {spec.missing_credentials()}"
        for spec in specs
        if spec.identifier != "fake" and spec not in called
    }
    for spec in called:
        if not args.json:
            _step(f"{step}. Calls through {spec.name} ({spec.identifier})")
            step += 1
        try:
            results = _calls(registry.get(spec.identifier))
        except LLMError as exc:
            results = {"setup": {"ok": False, "error": f"{type(exc).__name__}: {exc}"}}
        report["calls"][spec.identifier] = results
        for name, result in results.items():
            failures += not result["ok"]
            if not args.json:
                print(f"  {name}: {'ok' if result['ok'] else 'FAILED'}")
                for key, value in result.items():
                    if key != "ok":
                        _field(key, value)
    if report["skipped"] and not args.json:
        _step(f"{step}. Not called (no credentials)")
        step += 1
        for identifier, why in report["skipped"].items():
            _field(identifier, why)
    if len(called) >= 2:
        report["fallback"] = _fallback(registry, called[0].identifier, called[1].identifier)
        failures += not report["fallback"]["ok"]
        if not args.json:
            _step(f"{step}. Fallback: registry.router(Feature.CHAT) when {called[0].identifier} is unreachable")
            fallback = report["fallback"]
            if fallback["ok"]:
                print(
                    f"  {' -> '.join([*fallback['fallback_from'], fallback['answered_by']])}: answered by "
                    f"{fallback['answered_by']} after {', '.join(fallback['fallback_from'])} failed"
                )
                _field("content", fallback["content"])
            else:
                print(f"  FAILED: {fallback['error']}")
    if args.json:
        emit_json(report)
    elif not report["calls"]:
        print("\nNo provider plugins installed: pip install core-gemini-plugin core-openai-plugin")
    return 1 if failures else 0
