"""Render the generated part of docs/reliability.md from the tables the tests assert. Run from
the repository root:

    python -m tests.reliability.render_doc          # rewrite the generated section
    python -m tests.reliability.render_doc --check  # exit 1 when it is stale

The fault matrix, the bad-input catalogue and the lists below are the very data the tests
parametrize over, so a row in the document is a case that passed (or, marked ✗, a known
deviation that the tests mark as an expected failure).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.reliability import bad_inputs, fault_scenarios as fs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DOC = ROOT / "docs" / "reliability.md"
BEGIN = "<!-- BEGIN GENERATED: python -m tests.reliability.render_doc -->"
END = "<!-- END GENERATED -->"

#: The router scenarios of test_router_fallback.py (test name → what it proves), for each pair
#: gemini→openai, openai→gemini and fake→fake, sync and async.
ROUTER_TESTS = {
    "test_exhausted_provider_falls_back_and_reports_who_answered": (
        "503 / 429 / connection reset on every attempt of the first provider: its 3 attempts are used, "
        "the second answers; `response.provider`, `metadata[\"answered_by\"]`, `[\"fallback_from\"]` "
        "and `router.last_provider` name who answered"
    ),
    "test_connection_refused_falls_back": "first provider unreachable (connection refused): the second answers",
    "test_bad_request_is_not_sent_elsewhere": (
        "400 / 401 from the first provider: raised after 1 attempt, the second receives nothing"
    ),
    "test_all_exhausted_names_every_failure": "both exhausted: `FallbackExhaustedError.errors` names each failure",
    "test_missing_key_falls_back": "first provider has no key (`ConfigurationError`): the second answers",
    "test_stream_falls_back_before_the_first_token": (
        "stream: 503 on every opening of the first: the second streams, METADATA says `fallback_from`"
    ),
    "test_stream_never_falls_back_after_tokens": (
        "stream cut after 2 tokens: TOKEN, TOKEN, ERROR, END; no retry, no fallback (second receives nothing)"
    ),
    "test_stream_all_exhausted_ends_with_error_then_end": (
        "stream, both exhausted: ERROR (`FallbackExhaustedError` naming both), END"
    ),
}

SECURITY_CHECKS = (
    ("test_canary_key.py", "a fresh canary key (shaped like a real key, and plain) for the fake, Gemini and OpenAI; "
     "every capability (chat, completion, tools, vision, JSON, embeddings, images, decisions, models, streams), "
     "sync and async, on the success path and 4 failure paths (key rejected *and quoted back* by the upstream, "
     "500 retried, connection reset, malformed answer); all loggers at DEBUG incl. `llm_core.calls`, "
     "reprs of provider/key/options/results, every error's `str`/`repr`/`args` along the whole cause chain "
     "and its full traceback, observer events"),
    ("test_cli_output.py", "`llm-core` commands (providers, models, plugins, route, check, chat, stream, json, embed; "
     "tables and `--json`) with keys from the environment and from the TOML file, upstream answering or "
     "quoting the key back; and a real `llm-core` process with `OPENAI_LOG=debug`"),
    ("test_key_reachability.py", "both plugins through the real SDKs against a loopback upstream that quotes "
     "the key in a response header and body, the key also sent as a `key=` query option; every capability "
     "(chat, completion, tools, vision, JSON, embeddings, images, decisions, models) and streams, sync and "
     "async, key rejected, 500 retried, malformed answer, reset, an error event "
     "inside a stream: everything reachable from each error (attributes walked recursively, the whole "
     "`__cause__`/`__context__` chain, requests, responses, headers, bodies), its traceback, its pickle and "
     "each chained exception's pickle, every logger at DEBUG; `vars()` of providers (after `configure`) "
     "and of a router configured with keys"),
    ("test_cassette_keys.py", "every file under `cassettes/`: Google keys (`AIza…`), Google OAuth tokens (`ya29.…`), "
     "OpenAI keys (`sk-…`, `sk-proj-…`, `sess-…`), `Bearer` tokens, unfiltered key headers / `key=` parameters, "
     "base64 bodies decoded; the scanner's self-test; a recording against an upstream that quotes the key; "
     "and `LLM_CORE_RECORD=once` with the key from the environment or from `api_key=`, sent as header, "
     "`key=` query and in the prompt, quoted back in a response header and body, calls and streams: the "
     "cassette holds it nowhere and replays"),
)

ISOLATION_CHECKS = (
    ("test_broken_plugins.py", "broken distributions installed beside the real plugins: import fails, hook raises, "
     "invalid spec, `register()` of a non-spec, identifier already taken (`gemini`), factory module missing, "
     "capability claimed but not implemented → discovery goes on, `plugin_errors` names distribution and stage, "
     "the real plugins still answer, the router skips what cannot be built, `LLM_CORE_STRICT_PLUGINS=1` "
     "makes each fatal with the distribution's name, `llm-core plugins [--strict]` reports them"),
    ("test_concurrency.py", "32 threads released together selecting, registering and calling (fake providers, "
     "and both real plugins over the loopback server, sync and streams); 500 concurrent async calls on the fake, "
     "on each plugin (450 calls + 50 streams) and through the router with one flaky provider: every answer "
     "echoes its own prompt, one request per call, no lost registration, unique observer call ids, "
     "one shared provider instance per identifier"),
)

TRANSPORT_CHECKS = (
    ("test_redirects.py", "301, 302, 303, 307, 308 from the configured host pointing at a second loopback server, "
     "both plugins, sync and async, calls and streams (40 cases): `InvalidResponseError` with the status, 1 request "
     "to the configured host, 0 requests (and so no key header) at the other; plain `http://` to 4 remote hosts "
     "refused with `ConfigurationError` at construction, https and 5 loopback forms accepted, the opt-in by keyword "
     "and by config file"),
    ("test_timeouts.py", "a body trickled one byte every 20 ms (timeout 0.5 s), a stream of keep-alive comments only "
     "(`stream_first_event_timeout` 0.4 s), one event then keep-alives (`stream_idle_timeout` 0.4 s), events every "
     "50 ms (`stream_deadline` 0.6 s); both plugins, sync and async: `ProviderTimeoutError` naming the limit, "
     "ended within the limit + 0.35 s, 1 request; a timeout of 0.4 ms is 1 ms for Gemini, not none"),
    ("test_sizes.py", "a 494 KB gzip body inflating to 500 MB (a call; a stream whose one `data:` line is 500 MB), "
     "both plugins, sync and async, in a child process: `InvalidResponseError` naming the limit, 1 request, peak "
     "memory (VmHWM) grown by less than 2 x the limit + 16 MiB; the default 64 MiB limit too; an uncompressed "
     "endless SSE line over `max_event_bytes`"),
    ("test_loop_lifecycle.py", "500 x `asyncio.run(provider.aio.chat_completion(...))` per plugin against a "
     "keep-alive loopback server (100 of them with the garbage collector off): open descriptors and sockets "
     "unchanged, RSS growth under 2 KiB a loop, 1 request per call; a stream closed early (close, break, "
     "cancellation; sync and async) closes its connection at once, seen by the server; 20 concurrent early closes "
     "of async streams log no error (logging, loop exception handler, unraisable hook)"),
)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    cases = fs.cases()
    by_target: dict[str, int] = {}
    for _, target, _ in cases:
        by_target[target] = by_target.get(target, 0) + 1
    known = len(fs.KNOWN_ISSUES)
    api_runs = sum(len(c.providers) * (2 if c.has_async else 1) for c in bad_inputs.API_CASES)
    lines = [
        BEGIN,
        "",
        "### Figures",
        "",
        "| | |",
        "|---|---|",
        f"| faults injected | {len(fs.FAULTS)} kinds, {len(cases)} cases "
        f"({', '.join(f'{n} {t}' for t, n in by_target.items())}; sync and async) |",
        f"| faults survived as documented | {len(cases) - 2 * known} of {len(cases)} |",
        f"| router scenarios | {len(ROUTER_TESTS)} kinds x 3 provider pairs x sync/async |",
        f"| bad inputs tried | {bad_inputs.total_inputs()} ({len(bad_inputs.API_CASES)} API calls, "
        f"{len(bad_inputs.SETUP_CASES)} settings, {len(bad_inputs.CLI_CASES)} CLI) - {api_runs} API runs "
        f"and {3 * len(bad_inputs.CLI_CASES)} CLI runs, each a typed error naming the fix, 0 requests sent |",
        "| leaks found | 0 |",
        "",
        "### Fault matrix",
        "",
        "Policy of the matrix: 3 attempts, backoff 0.5 s then 1 s (jitter off), `max_retry_after` 10 s, "
        "deadline 30 s; waits are recorded, never slept. \"attempts\" is counted twice: by the core's "
        "observer hooks and on the wire (requests the loopback server received), and they agree: the SDKs "
        "never retry on their own.",
        "",
        fs.render_table().rstrip("\n"),
        "",
    ]
    if fs.KNOWN_ISSUES:
        lines += ["✗ known deviations (expected failures in the tests):", ""]
        lines += [f"- `{key}` on {target}: {reason}" for (key, target), reason in fs.KNOWN_ISSUES.items()]
        lines.append("")
    lines += [
        "### Router",
        "",
        "| scenario | test |",
        "|---|---|",
        *[f"| {_md(what)} | `{name}` |" for name, what in ROUTER_TESTS.items()],
        "",
        "### Bad inputs (API)",
        "",
        "Run on the FakeProvider, Gemini and OpenAI (\"all\", or where it applies), sync and async "
        "(`supports_feature` sync only). The message check is case-insensitive.",
        "",
        "| input | call | error | the message says | on |",
        "|---|---|---|---|---|",
        *[
            f"| {_md(c.what)} | `{c.method}` | `{c.error.__name__}` | \"{_md(c.fix)}\" | "
            f"{'all' if c.providers == ('fake', 'gemini', 'openai') else ', '.join(c.providers)} |"
            for c in bad_inputs.API_CASES
        ],
        "",
        "### Bad settings",
        "",
        "| input | error | the message says |",
        "|---|---|---|",
        *[f"| {_md(c.what)} | `{c.error.__name__}` | \"{_md(c.fix)}\" |" for c in bad_inputs.SETUP_CASES],
        "",
        "### Bad input on the command line",
        "",
        "Run with `--provider fake`, `gemini` and `openai`.",
        "",
        "| arguments | exit code | the output says |",
        "|---|---|---|",
        *[f"| `llm-core {_md(' '.join(repr(a) if not a or ' ' in a else a for a in c.argv))}` | {c.code} | "
          f"\"{_md(c.fix)}\" |" for c in bad_inputs.CLI_CASES],
        "",
        "### Secrets",
        "",
        "| test | what is checked |",
        "|---|---|",
        *[f"| `tests/security/{name}` | {_md(what)} |" for name, what in SECURITY_CHECKS],
        "",
        "### Transport",
        "",
        "| test | what is checked |",
        "|---|---|",
        *[f"| `tests/transport/{name}` | {_md(what)} |" for name, what in TRANSPORT_CHECKS],
        "",
        "### Plugin isolation and concurrency",
        "",
        "| test | what is checked |",
        "|---|---|",
        *[f"| `tests/isolation/{name}` | {_md(what)} |" for name, what in ISOLATION_CHECKS],
        "",
        END,
    ]
    return "\n".join(lines)


def current_section(text: str) -> str:
    start = text.index(BEGIN)
    end = text.index(END) + len(END)
    return text[start:end]


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    fresh = render()
    if "--check" in argv:
        return 0 if current_section(text) == fresh else 1
    DOC.write_text(text.replace(current_section(text), fresh), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
