"""The code in the docs runs as written, offline.

- Python blocks of the user-facing pages (README.md, docs/index.md, docs/testing.md) run in order
  (the blocks of a page share one namespace, as a reader types them into one session), with
  ``registry.override(TestProvider())`` around them so calls are answered without a network;
  docs/testing.md sets up its own providers.
- Every TOML block of every page parses, and each ``[providers.NAME]`` table in it holds only
  keys that provider declares (the check a real config file gets).
- Every ``llm-core ...`` line of the shell blocks in README.md and docs/cli.md is a valid command
  line for the real parser, and every ``bash scripts/...`` line names a script that exists.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli.parser import build_parser
from llm_core.config import check_section, declared_settings
from llm_core.registry import get_registry
from llm_core.testing import TestProvider

ROOT = Path(__file__).resolve().parents[2]
RUN_PYTHON = ["README.md", "docs/index.md", "docs/testing.md"]
SHELL = ["README.md", "docs/cli.md"]
ALL_PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(page: str, language: str) -> list[str]:
    return [code for lang, code in _BLOCK.findall((ROOT / page).read_text(encoding="utf-8")) if lang == language]


@pytest.mark.parametrize("page", RUN_PYTHON)
def test_python_blocks_run(page: str) -> None:
    found = blocks(page, "python")
    assert found, f"{page} has no python block"
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    with get_registry().override(TestProvider()):
        for index, code in enumerate(found):
            exec(compile(code, f"{page} (python block {index + 1})", "exec"), namespace)


def _provider_classes() -> dict[str, type]:
    registry = get_registry()
    return {
        spec.identifier: type(registry.get(spec.identifier, api_key="not-a-real-key")) for spec in registry.providers()
    }


@pytest.mark.parametrize("page", [p for p in ALL_PAGES if blocks(p, "toml")])
def test_toml_blocks_parse_and_use_declared_keys(page: str) -> None:
    classes = _provider_classes()
    for code in blocks(page, "toml"):
        data = tomllib.loads(code)
        for identifier, table in data.get("providers", {}).items():
            if identifier in classes:  # a third-party example (e.g. acme) is not installed here
                check_section(
                    identifier,
                    {k: v for k, v in table.items() if not isinstance(v, dict)},
                    declared_settings(classes[identifier]),
                )


def _command_lines(page: str) -> list[str]:
    lines = []
    for code in blocks(page, "bash"):
        for raw in code.splitlines():
            line = raw.split(" #")[0].strip()
            if line:
                lines.append(line)
    return lines


@pytest.mark.parametrize("page", SHELL)
def test_shell_lines_are_valid_commands(page: str) -> None:
    parser = build_parser()
    checked = 0
    for line in _command_lines(page):
        words = shlex.split(line.split("|")[-1].split(">")[0])
        if not words:
            continue
        if words[0] == "llm-core":
            parser.parse_args(words[1:])  # argparse exits (fails the test) on a bad command line
            checked += 1
        elif words[0] == "bash" and len(words) > 1:
            assert (ROOT / words[1]).is_file(), line
    assert checked, f"{page}: no llm-core command found"
