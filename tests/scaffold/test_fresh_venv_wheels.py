"""The three wheels, built from this repository, install into a fresh venv (no system site
packages, no network: dependencies come from a wheelhouse repacked from this environment) and
the CLI's main commands work there, including a replayed prompt through the real SDKs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def cli(wheels_venv: Any, *args: str) -> subprocess.CompletedProcess[str]:
    result = wheels_venv.run(wheels_venv.bin("llm-core"), *args, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_the_wheels_give_a_working_cli(wheels_venv: Any) -> None:
    assert cli(wheels_venv, "--version").stdout.strip() == "llm-core 0.1.0"
    providers = json.loads(cli(wheels_venv, "providers", "--json").stdout)
    assert [p["provider"] for p in providers["providers"]] == ["gemini", "vertex", "openai"]
    assert {p["distribution"] for p in providers["providers"]} == {"core-gemini-plugin", "core-openai-plugin"}
    assert providers["plugin_errors"] == []
    assert not any(p["available"] for p in providers["providers"])  # no key in the fresh environment
    vision = json.loads(cli(wheels_venv, "models", "--feature", "vision", "--json").stdout)["models"]
    assert {m["provider"] for m in vision} == {"gemini", "vertex", "openai"}
    assert "streaming, vision -> " in cli(wheels_venv, "route", "vision", "streaming").stdout
    assert "flash" in cli(wheels_venv, "aliases").stdout
    assert "complete" in cli(wheels_venv, "completion", "bash").stdout


def test_a_replayed_prompt_is_answered_and_logged(wheels_venv: Any) -> None:
    from llm_core.cli.demo import CHAT_PROMPT

    answer = cli(wheels_venv, "--replay", "cassettes", "prompt", CHAT_PROMPT, "-m", "flash", "--json")
    data = json.loads(answer.stdout)
    assert data["provider"] == "gemini" and data["model"] == "gemini-2.5-flash" and "capabilit" in data["content"]
    logged = json.loads(cli(wheels_venv, "logs", "-n", "1", "--json").stdout)
    assert logged[0]["prompt"] == CHAT_PROMPT and logged[0]["model"] == "gemini-2.5-flash"
    assert logged[0]["total_tokens"] > 0


def test_the_pytest_plugin_is_installed(wheels_venv: Any) -> None:
    code = "import importlib.metadata as m; print([e.value for e in m.entry_points(group='pytest11')])"
    result = wheels_venv.run(str(wheels_venv.python), "-c", code)
    assert "'llm_core.testing.pytest_plugin'" in result.stdout  # (anyio, from the SDKs, has one too)
