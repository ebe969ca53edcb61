"""The three wheels, built from this repository, install into a fresh venv (no system site
packages, no network: dependencies come from a wheelhouse repacked from this environment) and
the CLI's main commands work there, including a replayed prompt through the real SDKs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.testing_kit.user_project import RESOLVER, USERS_OWN_SOCKETS

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


def test_a_users_own_tests_pass_with_llm_core_installed(wheels_venv: Any, tmp_path: Path) -> None:
    """Installing llm-core changes nothing in a user's pytest: a test that resolves its service's
    host name and talks to it on loopback passes; the guard is there when asked for."""
    wheels_venv.pip_install("pytest")
    (tmp_path / "conftest.py").write_text(RESOLVER, encoding="utf-8")
    (tmp_path / "test_my_service.py").write_text(USERS_OWN_SOCKETS, encoding="utf-8")
    pytest = [str(wheels_venv.python), "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    plain = wheels_venv.run(*pytest, cwd=tmp_path)
    assert plain.returncode == 0 and "1 passed" in plain.stdout, plain.stdout + plain.stderr
    guarded = wheels_venv.run(*pytest, "--llm-block-network", cwd=tmp_path)
    assert guarded.returncode == 0 and "1 passed" in guarded.stdout, guarded.stdout + guarded.stderr
