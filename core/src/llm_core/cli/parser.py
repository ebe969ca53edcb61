"""The ``llm-core`` argument parser and which function runs each command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from llm_core.cli.options import add_call_options

#: command → "module:function" (imported only for the command that runs).
HANDLERS: dict[str, str] = {
    "prompt": "llm_core.cli.prompting:cmd_prompt",
    "chat": "llm_core.cli.chat:cmd_chat",
    "keys": "llm_core.cli.manage:cmd_keys",
    "aliases": "llm_core.cli.manage:cmd_aliases",
    "logs": "llm_core.cli.manage:cmd_logs",
    "completion": "llm_core.cli.manage:cmd_completion",
    "batch": "llm_core.cli.batch:cmd_batch",
    "config": "llm_core.cli.settings:cmd_config",
}
_COMMANDS = "llm_core.cli.commands"


def handler_path(command: str) -> str:
    return HANDLERS.get(command, f"{_COMMANDS}:cmd_{command.replace('-', '_')}")


def _prompt_command(
    sub: Any,  # what add_subparsers() returns
    name: str,
    parents: list[argparse.ArgumentParser],
    summary: str,
) -> None:
    p = sub.add_parser(name, parents=parents, help=summary)
    p.add_argument("prompt", nargs="?", help="the prompt ('-' or piped stdin reads it from stdin)")
    add_call_options(p)
    p.add_argument("--schema", help="answer JSON: a JSON Schema file, inline JSON Schema, or 'name, age int, bio'")
    p.add_argument(
        "--schema-multi", metavar="SCHEMA", help='answer a list of objects of SCHEMA (as --schema), as {"items": [...]}'
    )
    p.add_argument("--stream", action="store_true", help="print tokens as they arrive (the default at a terminal)")
    p.add_argument("--no-stream", action="store_true", help="wait for the whole answer")
    p.add_argument(
        "--continue", "-c", dest="continue_", action="store_true", help="continue the last logged conversation"
    )
    p.add_argument("--cid", help="continue the logged conversation with this id")
    p.add_argument("--no-log", action="store_true", help="do not log this exchange")
    p.add_argument("--extract", "-x", action="store_true", help="print only the first fenced code block of the answer")
    p.add_argument("--extract-last", "--xl", action="store_true", help="print only the last fenced code block")
    p.add_argument("--usage", "-u", action="store_true", help="show the token usage (and cost) on stderr")


def _batch_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """``batch submit | status | results | cancel`` (see docs/cli.md)."""
    batch = sub.add_parser("batch", parents=[common], help="batch runs: submit, status, results, cancel")
    actions = batch.add_subparsers(dest="batch_command", required=True, metavar="ACTION")
    p = actions.add_parser("submit", parents=[common], help="run a JSONL file of items (resumes when run again)")
    p.add_argument("input", type=Path, help="JSONL file, one item per line")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--provider", "-p", help="provider identifier")
    where.add_argument(
        "--feature", "-f", dest="features", action="append", default=[], help="route by feature (repeatable)"
    )
    p.add_argument("--local", action="store_true", help="single calls from this process, not a provider batch job")
    p.add_argument("--output", "-o", type=Path, help="results JSONL (default: IN.results.jsonl beside the input)")
    p.add_argument("--wait", action="store_true", help="batch mode: wait for the jobs and write their results")
    p.add_argument("--poll-interval", type=float, default=30.0, help="seconds between status calls (default 30)")
    p.add_argument("--concurrency", type=int, default=16, help="--local: calls in flight (default 16)")
    p.add_argument("--requests-per-minute", "--rpm", type=float, help="--local: client-side request limit")
    p.add_argument("--tokens-per-minute", "--tpm", type=float, help="--local: client-side token limit")
    p = actions.add_parser("status", parents=[common], help="how a run stands (no JOB: every known run)")
    p.add_argument("job", nargs="?", help="job number (from submit or status) or the run's output path")
    p = actions.add_parser("results", parents=[common], help="collect a run's results into one JSONL file")
    p.add_argument("job", help="job number or output path")
    p.add_argument("--output", "-o", type=Path, help="where to write them (default: stdout)")
    p.add_argument("--no-wait", action="store_true", help="write what is finished now, do not wait for the rest")
    p.add_argument("--poll-interval", type=float, default=30.0, help="seconds between status calls (default 30)")
    p = actions.add_parser("cancel", parents=[common], help="cancel a run's provider jobs")
    p.add_argument("job", help="job number or output path")


class CliParser(argparse.ArgumentParser):
    """The ``llm-core`` parser; ``commands`` are its sub-commands' names."""

    commands: frozenset[str] = frozenset()


def build_parser() -> CliParser:
    from llm_core import __version__

    # Sub-commands accept the global options too; SUPPRESS keeps them from resetting the
    # value given before the sub-command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output")
    common.add_argument(
        "--replay",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="answer provider calls from cassettes in DIR (no network, no key); also LLM_CORE_REPLAY",
    )
    call = argparse.ArgumentParser(add_help=False)
    call.add_argument("--provider", "-p", help="provider identifier (default: chosen by capability)")
    call.add_argument("--model", "-m", help="model id or alias (default: the provider's)")

    parser = CliParser(
        prog="llm-core",
        description=(
            "LLM provider registry: discover providers, route by capability, make calls. "
            "'llm-core PROMPT' is 'llm-core prompt PROMPT'."
        ),
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"llm-core {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=argparse.ArgumentParser)

    _prompt_command(sub, "prompt", [common], "send a prompt, print and log the answer")
    _prompt_command(sub, "chat", [common], "chat with a model (one exchange when a prompt is given)")
    sub.add_parser("providers", parents=[common], help="list providers, availability, features and plugin errors")
    p = sub.add_parser("models", parents=[common], help="models and their features")
    p.add_argument("provider", nargs="?")
    p.add_argument("--feature", "-f", action="append", default=[], help="only models with this feature (repeatable)")
    p = sub.add_parser("route", parents=[common], help="which provider select() picks for FEATURES, and why")
    p.add_argument("features", nargs="+")
    p.add_argument("--prefer", help="comma-separated preference order")
    p.add_argument("--model", "-m")
    p = sub.add_parser("json", parents=[common, call], help="structured JSON answer")
    p.add_argument("prompt")
    p.add_argument("--schema", type=Path, help="JSON-schema file")
    p = sub.add_parser("image", parents=[common, call], help="generate an image file")
    p.add_argument("prompt")
    p.add_argument("--out", "-o", type=Path, default=Path("image"), help="output path (suffix added by type)")
    p.add_argument("--size")
    p = sub.add_parser("embed", parents=[common, call], help="embedding vectors")
    p.add_argument("texts", nargs="*")
    p.add_argument("--file", "-f", type=Path, help="one text per line")
    p.add_argument("--dimensions", type=int)
    p.add_argument("--batch", type=int, default=64, help="texts per request when reading a file")
    p = sub.add_parser("decide", parents=[common, call], help="typed decision questions about a subject")
    p.add_argument("--subject", required=True, help="the task / subject text")
    p.add_argument("--candidate")
    p.add_argument("--evidence", action="append", default=[])
    p.add_argument("--questions", type=Path, required=True, help="JSON or TOML file of questions")
    p = sub.add_parser("check", parents=[common], help="test_connection for one or all providers")
    p.add_argument("provider", nargs="?")
    p = sub.add_parser("plugins", parents=[common], help="loaded plugin distributions and load errors")
    p.add_argument("--strict", action="store_true", help="exit 5 when any plugin failed to load")

    p = sub.add_parser("keys", parents=[common], help="stored API keys: set, list, remove, path")
    p.add_argument("action", nargs="?", choices=["list", "set", "remove", "path"], default="list")
    p.add_argument("name", nargs="?", help="the provider identifier, e.g. gemini")
    p.add_argument("--value", help="the key (default: prompt without echo; visible in shell history!)")
    p = sub.add_parser("aliases", parents=[common], help="model aliases for -m: list, set, remove, path")
    p.add_argument("action", nargs="?", choices=["list", "set", "remove", "path"], default="list")
    p.add_argument("name", nargs="?")
    p.add_argument("model", nargs="?")
    p = sub.add_parser("logs", parents=[common], help="logged prompts and responses; logs on/off/status/path")
    p.add_argument("action", nargs="?", choices=["list", "on", "off", "status", "path"], default="list")
    p.add_argument("-n", "--count", type=int, default=3, help="how many (latest first; 0 = all; default 3)")
    p.add_argument("-q", "--query", help="only responses whose prompt, system or answer contains this")
    p.add_argument("--cid", help="only this conversation")
    p = sub.add_parser("config", parents=[common], help="check the config file; resolved settings and their sources")
    p.add_argument("action", nargs="?", choices=["check", "path"], default="check")
    p = sub.add_parser("completion", parents=[common], help="print a shell completion script (bash or zsh)")
    p.add_argument("shell", choices=["bash", "zsh"])

    _batch_command(sub, common)

    sub.add_parser("demo", parents=[common], help="a tour: discovery, routing and calls through every provider")
    p = sub.add_parser("new-plugin", parents=[common], help="write a ready third-party plugin distribution")
    p.add_argument("name", help="provider name, e.g. 'acme'")
    p.add_argument("--dir", type=Path, default=Path("."), help="where to create the distribution folder")
    parser.commands = frozenset(sub.choices)
    return parser


#: Options before the command that take a value (``--replay DIR``), for :func:`with_default_command`.
_GLOBAL_WITH_VALUE = frozenset({"--replay"})


def with_default_command(argv: list[str], commands: frozenset[str]) -> list[str]:
    """``llm-core PROMPT [OPTIONS]`` as ``llm-core prompt PROMPT [OPTIONS]`` (``llm``'s habit):
    ``prompt`` goes before the first argument that is not a global option, unless that argument
    is a command (or ``-h`` / ``--version``). A lone word close to a command's name is a typo
    of the command, not a prompt: :class:`ValueError` says which command was meant."""
    index = 0
    while index < len(argv) and argv[index].startswith("--"):
        name = argv[index].partition("=")[0]
        if name not in ("--json", *_GLOBAL_WITH_VALUE):
            break
        index += 2 if name in _GLOBAL_WITH_VALUE and "=" not in argv[index] else 1
    if index >= len(argv) or argv[index] in commands or argv[index] in ("-h", "--help", "--version"):
        return argv
    word = argv[index]
    if word.isidentifier() or ("-" in word and word.replace("-", "").isalpha()):
        import difflib

        close = difflib.get_close_matches(word, sorted(commands), n=1, cutoff=0.75)
        if close:
            raise ValueError(
                f"unknown command {word!r}; did you mean 'llm-core {close[0]}'? "
                f"(to send it as a prompt: llm-core prompt {word})"
            )
    return [*argv[:index], "prompt", *argv[index:]]
