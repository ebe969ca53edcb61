"""The config file as the CLI sees it: checked once when a command starts (:func:`report`), and
``llm-core config check`` / ``config path`` (:func:`cmd_config`).

A problem that breaks a part of the file the command needs (a call needs the provider tables,
routing and prices; ``route`` needs routing) stops it with exit code 3; any other is a warning,
so that ``llm-core providers`` still lists providers while saying what is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from llm_core.cli.output import emit_json, note, table
from llm_core.config_check import ConfigProblem, check_config, config_source

#: Commands that build providers and call them.
_CALLS = frozenset({"prompt", "chat", "json", "image", "embed", "decide", "check", "demo", "batch"})


def needs(args: argparse.Namespace, part: str) -> bool:
    """Whether the command of ``args`` reads ``part`` of the config file (see ConfigProblem)."""
    command = args.command
    if command == "route":
        return part in ("file", "routing")
    if command not in _CALLS or (command == "batch" and args.batch_command == "status"):
        return False
    if part == "routing":
        return getattr(args, "provider", None) is None  # -p: no selection
    if part.startswith("providers."):
        chosen = getattr(args, "provider", None)
        return chosen is None or part == f"providers.{chosen}"
    return part in ("file", "providers", "prices")


def report(args: argparse.Namespace) -> bool:
    """Print the config file's problems (errors for what the command needs, warnings for the
    rest) on stderr; ``False`` when the command must stop."""
    if args.command == "config":
        return True  # it prints them itself
    problems = check_config()
    blocking = [p for p in problems if needs(args, p.part)]
    for problem in problems:
        if problem not in blocking:
            note(f"warning: {problem}")
    if blocking:
        if args.json:
            emit_json({"error": "ConfigurationError", "message": "; ".join(map(str, blocking))})
        else:
            for problem in blocking:
                note(f"error: {problem}")
    return not blocking


def cmd_config(args: argparse.Namespace) -> int:
    """``config check``: the file's problems and every provider's resolved settings with where
    each comes from (secrets masked); ``config path``: the file in force."""
    from llm_core.config import config_path

    path = config_path()
    if args.action == "path":
        print(path or "(no config file)")
        return 0
    problems = check_config()
    resolved = {spec.identifier: provider_settings(spec) for spec in _specs()}
    prefer = _preference()
    if args.json:
        emit_json(
            {
                "config_file": str(path) if path else None,
                "source": config_source(),
                "problems": [{"part": p.part, "message": p.message} for p in problems],
                "routing": {"prefer": prefer[0], "source": prefer[1]},
                "providers": {
                    name: {key: {"value": value, "source": source} for key, value, source in rows}
                    for name, rows in resolved.items()
                },
            }
        )
        return 3 if problems else 0
    print(f"config file: {path or 'none'} ({config_source()})")
    print(f"routing prefer: {', '.join(prefer[0]) or '(registration order)'} ({prefer[1]})")
    for name, rows in resolved.items():
        print(f"\n[{name}]")
        table(["setting", "value", "source"], [[key, value, source] for key, value, source in rows])
    for problem in problems:
        note(f"error: {problem}")
    if not problems:
        note("no problems found" if path else "no config file: every setting comes from the environment or defaults")
    return 3 if problems else 0


def _specs() -> list[Any]:
    from llm_core.registry import get_registry

    return get_registry().providers()


def _preference() -> tuple[list[str], str]:
    from llm_core.config import routing_preference

    source = "$LLM_CORE_PREFER" if os.environ.get("LLM_CORE_PREFER") else "config file [routing]"
    prefer = list(routing_preference())
    return prefer, source if prefer else "default"


def provider_settings(spec: Any) -> list[tuple[str, str, str]]:
    """(setting, value shown, source) of each setting of ``spec``'s provider that is set: the
    key (always masked), the config table's keys, the environment variables the class reads,
    and the default model. Values that hold a credential are masked as the provider keeps them."""
    from llm_core.config import hide_secret, provider_section
    from llm_core.config_check import provider_class
    from llm_core.keystore import get_key

    section = provider_section(spec.identifier)
    rows: list[tuple[str, str, str]] = []
    variable = next((name for name in spec.credential_env if os.environ.get(name)), None)
    if variable:
        rows.append(("api_key", "**********", f"environment {variable}"))
    elif get_key(spec.identifier):
        rows.append(("api_key", "**********", "key store"))
    elif section.get("api_key"):
        rows.append(("api_key", "**********", "config file"))
    else:
        rows.append(("api_key", "(none)", "missing" if spec.requires_credentials else "not needed"))
    for key, value in section.items():
        if key != "api_key":
            rows.append((key, _shown(hide_secret(key, value)), "config file"))
    cls = provider_class(spec)
    for key, variables in (getattr(cls, "env_settings", None) or {}).items():
        found = next((name for name in variables if os.environ.get(name)), None)
        if key not in section and found:
            rows.append((key, _shown(hide_secret(key, os.environ[found])), f"environment {found}"))
    if "model" not in section:
        rows.append(("model", spec.default_model or "(none)", "default"))
    return rows


def _shown(value: Any) -> str:
    from llm_core.config import Secret

    if isinstance(value, Secret):
        return str(value)
    if isinstance(value, dict):
        return json.dumps({k: _shown(v) for k, v in value.items()})
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = ["ConfigProblem", "cmd_config", "needs", "provider_settings", "report"]
