"""The everyday commands, run as the installed console script without a terminal: keys, aliases,
models --feature, providers with only broken plugins, shell completion, --replay without the
replay extra, and unknown config keys."""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_keys_set_from_stdin_stores_a_0600_file_that_providers_use(run: Run, tmp_path: Path) -> None:
    secret = "sk-stored-0123456789abcdef"
    before = run("chat", "hi", "-p", "keyed")
    assert before.returncode == 3 and "llm-core keys set keyed" in before.stderr
    stored = run("keys", "set", "keyed", stdin=secret + "\n")
    assert stored.returncode == 0, stored.stderr
    assert secret not in stored.stdout + stored.stderr
    path = Path(run("keys", "path").stdout.strip())
    assert path == tmp_path / "llm-core" / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"keyed": secret}
    assert run("keys", "list").stdout.split() == ["keyed"]
    # the provider now has its key: routing says so, and the call goes through
    assert json.loads(run("providers", "--json").stdout)["providers"][1]["available"] is True
    call = run("chat", "hi", "-p", "keyed", "--json")
    assert call.returncode == 0, call.stderr
    assert secret not in call.stdout + call.stderr
    assert run("keys", "remove", "keyed").returncode == 0
    assert run("keys", "list", "--json").stdout.count("keyed") == 0


def test_aliases_set_list_and_use(run: Run) -> None:
    listed = json.loads(run("aliases", "--json").stdout)["aliases"]
    assert listed["flash"] == {"model": "gemini-2.5-flash", "source": "builtin"}
    assert listed["mini"] == {"model": "gpt-5.4-mini", "source": "builtin"}
    assert run("aliases", "set", "quick", "fake-fallback").returncode == 0
    assert run("aliases", "set", "flash", "fake-model").returncode == 0  # a user alias wins
    rows = [line.split() for line in run("aliases", "list").stdout.splitlines()]
    assert ["quick", "fake-fallback", "user"] in rows and ["flash", "fake-model", "user"] in rows
    answered = json.loads(run("chat", "hi", "-m", "quick", "-p", "fake", "--json").stdout)
    assert answered["model"] == "fake-fallback"
    assert run("aliases", "remove", "quick").returncode == 0
    assert "quick" not in run("aliases").stdout


def test_models_feature_filter(run: Run) -> None:
    everything = json.loads(run("models", "--json").stdout)["models"]
    assert {m["model"] for m in everything} >= {"fake-model", "fake-fallback"}
    with_decision = json.loads(run("models", "--feature", "decision", "-f", "vision", "--json").stdout)["models"]
    assert with_decision and all({"decision", "vision"} <= set(m["features"]) for m in with_decision)
    bad = run("models", "--feature", "vison")
    assert bad.returncode == 2 and "vision" in bad.stderr


def test_providers_shows_load_errors_when_no_provider_loaded(run: Run) -> None:
    result = run("providers", plugins="broken-test-plugin")
    assert result.returncode == 4
    assert "plugin error: broken-test-plugin (import)" in result.stderr
    assert "broken on purpose" in result.stderr
    assert "no providers registered" in result.stderr


def test_completion_scripts(run: Run) -> None:
    for shell, marker in (("bash", "complete"), ("zsh", "#compdef")):
        script = run("completion", shell)
        assert script.returncode == 0, script.stderr
        assert marker in script.stdout and "llm-core" in script.stdout
        for command in ("prompt", "logs", "keys", "aliases", "models"):
            assert command in script.stdout


def test_replay_without_the_extra_is_one_line(run: Run, tmp_path: Path, plugin_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    # a sitecustomize that makes `import vcr` fail, as when vcrpy is not installed
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['vcr'] = None\n")
    result = run("--replay", "cassettes", "providers", env={"PYTHONPATH": f"{hide}:{plugin_path}"})
    assert result.returncode == 3
    assert result.stderr == "error: --replay needs vcrpy, which is not installed: pip install 'llm-core[replay]'\n"


def test_unknown_key_in_a_provider_table_names_the_closest(run: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[providers.openai]\ntimout = 30\n")
    code = (
        "from llm_core import get_registry\n"
        "try:\n    get_registry().get('openai')\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    import sys

    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"LLM_CORE_CONFIG": str(config), "OPENAI_API_KEY": "k", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.stdout.startswith("UnknownSettingError [openai] unknown setting 'timout' in [providers.openai]")
    assert "did you mean 'timeout'?" in result.stdout, result.stdout + result.stderr
