"""``keys``, ``aliases``, ``logs`` and ``completion``: the CLI's own state and set-up."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from llm_core.cli import logdb
from llm_core.cli.exchange import INTERRUPTED
from llm_core.cli.output import emit_json, note, table


def cmd_keys(args: argparse.Namespace) -> int:
    from llm_core import keystore

    action = args.action
    if action == "path":
        print(keystore.keys_path())
        return 0
    if action == "list":
        names = keystore.stored_names()
        if args.json:
            emit_json({"keys": names, "path": str(keystore.keys_path())})
        elif names:
            print("\n".join(names))
        else:
            note(f"no stored keys ({keystore.keys_path()}): llm-core keys set NAME")
        return 0
    if not args.name:
        raise ValueError(f"keys {action} needs a NAME (e.g. gemini, openai)")
    if action == "remove":
        if not keystore.remove_key(args.name):
            raise ValueError(f"no stored key named {args.name!r}")
        note(f"removed the key {args.name!r}")
        return 0
    value = args.value if args.value is not None else _ask_key(args.name)
    where = keystore.set_key(args.name, value.strip())
    note(f"stored the key {args.name!r} in {where}")
    return 0


def _ask_key(name: str) -> str:
    """Read a key without echo at a terminal; from stdin (one line) when it is piped."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().strip()
    import getpass

    return getpass.getpass(f"Enter key for {name}: ")


def cmd_aliases(args: argparse.Namespace) -> int:
    from llm_core.cli import aliases

    if args.action == "path":
        print(aliases.aliases_path())
        return 0
    if args.action == "set":
        if not args.name or not args.model:
            raise ValueError("aliases set needs NAME and MODEL, e.g. llm-core aliases set fast gemini-2.5-flash-lite")
        aliases.set_alias(args.name, args.model)
        note(f"{args.name} -> {args.model}")
        return 0
    if args.action == "remove":
        if not args.name or not aliases.remove_alias(args.name):
            raise ValueError(f"no user alias named {args.name!r}")
        return 0
    found = aliases.all_aliases()
    if args.json:
        emit_json({"aliases": {name: {"model": model, "source": source} for name, (model, source) in found.items()}})
    else:
        table(["alias", "model", "source"], [[name, model, source] for name, (model, source) in found.items()])
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    if args.action == "path":
        print(logdb.logs_path())
        return 0
    if args.action in ("on", "off"):
        logdb.set_logging(args.action == "on")
        note(f"logging is {args.action}")
        return 0
    if args.action == "status":
        entries = logdb.recent(None)
        state = "on" if logdb.logging_enabled() else "off"
        if args.json:
            emit_json({"logging": state, "path": str(logdb.logs_path()), "responses": len(entries)})
        else:
            print(f"logging is {state}; {len(entries)} responses in {logdb.logs_path()}")
        return 0
    entries = logdb.recent(None if args.count == 0 else args.count, query=args.query, conversation=args.cid)
    if args.json:
        emit_json(entries)
        return 0
    for entry in entries:
        _print_entry(entry)
    if not entries:
        note("no logged responses" + (f" matching {args.query!r}" if args.query else ""))
    return 0


def _print_entry(entry: dict[str, Any]) -> None:
    tokens = f"{entry['total_tokens']} tokens" if entry["total_tokens"] is not None else "tokens unknown"
    latency = f"{entry['latency_ms']:.0f} ms" if entry["latency_ms"] is not None else ""
    cost = f"${entry['cost_usd']}" if entry["cost_usd"] is not None else ""
    print(f"# {entry['datetime_utc']}  conversation {entry['conversation_id']}  #{entry['id']}")
    print(", ".join(part for part in (f"{entry['provider']} {entry['model']}", tokens, latency, cost) if part))
    if entry["system"]:
        print(f"\nsystem: {entry['system']}")
    print(f"\n> {entry['prompt']}\n")
    if entry["response"]:
        print(entry["response"])
    if entry["error"] == INTERRUPTED:
        print("[interrupted]")
    elif entry["error"]:
        print(f"error: {entry['error']}")
    print()


def cmd_completion(args: argparse.Namespace) -> int:
    try:
        import shtab
    except ImportError:
        raise ValueError("shell completion needs shtab: pip install 'llm-core[cli]'") from None
    from llm_core.cli.parser import build_parser

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0
