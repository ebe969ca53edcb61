"""The config file checked when any command starts (errors for the parts a command needs,
warnings otherwise), and ``llm-core config check``: resolved settings with their sources,
secrets masked. Run against the real plugins' declarations (their provider classes)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Run

PLUGINS = "core-openai-plugin,core-gemini-plugin"


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return {"LLM_CORE_CONFIG": str(path)}


def test_a_misspelt_key_is_a_warning_for_providers_and_an_error_for_a_call(run: Run, tmp_path: Path) -> None:
    env = _config(tmp_path, "[providers.openai]\ntimout = 30\n")
    listed = run("providers", plugins=PLUGINS, env=env)
    assert listed.returncode == 0 and "openai" in listed.stdout
    assert "warning: " in listed.stderr
    assert "unknown setting 'timout' in [providers.openai]; did you mean 'timeout'?" in listed.stderr
    call = run("hi", "-p", "openai", plugins=PLUGINS, env={**env, "OPENAI_API_KEY": "sk-not-used"})
    assert call.returncode == 3 and "error: " in call.stderr and "did you mean 'timeout'?" in call.stderr
    other = run("hi", "-p", "gemini", plugins=PLUGINS, env=env)  # gemini's table is fine: a warning
    assert "warning: " in other.stderr and "no API key for provider 'gemini'" in other.stderr


def test_unknown_tables_providers_and_preferences_name_the_closest(run: Run, tmp_path: Path) -> None:
    env = _config(
        tmp_path,
        '[provders.openai]\ntimeout = 3\n\n[providers.gemni]\ntimeout = 3\n\n[routing]\nprefer = ["openai", "gemni"]\n'
        '\n[prices."gpt-5.4-mini"]\ninptu = "0.1"\n',
    )
    models = run("models", plugins=PLUGINS, env=env)
    assert models.returncode == 0
    for expected in (
        "unknown table [provders]; did you mean 'providers'?",
        "[providers.gemni]: unknown provider 'gemni'; did you mean 'gemini'?",
        "[routing] prefer: unknown provider 'gemni'; did you mean 'gemini'?",
        "unknown price 'inptu' in [prices.'gpt-5.4-mini']; did you mean 'input'?",
    ):
        assert f"warning: {env['LLM_CORE_CONFIG']}: {expected}" in models.stderr
    routed = run("route", "chat", plugins=PLUGINS, env=env)
    assert routed.returncode == 3 and "error: " in routed.stderr and "prefer" in routed.stderr


def test_a_toml_syntax_error(run: Run, tmp_path: Path) -> None:
    env = _config(tmp_path, "[providers.openai\ntimeout = 3\n")
    listed = run("providers", plugins=PLUGINS, env=env)
    assert listed.returncode == 0 and "warning: cannot read config file" in listed.stderr
    routed = run("route", "chat", "--json", plugins=PLUGINS, env=env)
    assert routed.returncode == 3 and json.loads(routed.stdout)["error"] == "ConfigurationError"


def test_config_check_shows_sources_and_masks_secrets(run: Run, tmp_path: Path) -> None:
    env = _config(
        tmp_path,
        '[providers.openai]\ntimeout = 30\nbase_url = "https://user:pa55word@proxy.example/v1"\n\n'
        '[routing]\nprefer = ["openai"]\n',
    )
    env.update(OPENAI_API_KEY="sk-env-0123456789abcdef")
    assert run("keys", "set", "gemini", stdin="sk-stored-0123456789abcdef\n").returncode == 0
    checked = run("config", "check", plugins=PLUGINS, env=env)
    assert checked.returncode == 0, checked.stderr
    out = checked.stdout
    assert "sk-env" not in out and "sk-stored" not in out and "pa55word" not in out
    assert f"config file: {env['LLM_CORE_CONFIG']} ($LLM_CORE_CONFIG)" in out
    assert "routing prefer: openai (config file [routing])" in out
    data = json.loads(run("config", "check", "--json", plugins=PLUGINS, env=env).stdout)
    openai, gemini = data["providers"]["openai"], data["providers"]["gemini"]
    assert openai["api_key"] == {"value": "**********", "source": "environment OPENAI_API_KEY"}
    assert openai["timeout"] == {"value": "30", "source": "config file"}
    assert openai["base_url"]["value"] == "**********"
    assert gemini["api_key"] == {"value": "**********", "source": "key store"}
    assert gemini["model"]["source"] == "default" and data["problems"] == []
    env.update(_config(tmp_path, "[providers.openai]\ntimout = 30\n"))
    broken = run("config", "check", plugins=PLUGINS, env=env)
    assert broken.returncode == 3 and "did you mean 'timeout'?" in broken.stderr


def test_named_endpoints_are_checked_by_their_declarations(run: Run, tmp_path: Path) -> None:
    env = _config(
        tmp_path,
        '[providers.local]\nplugin = "openai"\napi = "chat_completions"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'models = ["m1"]\ntimout = 3\n\n[providers.other]\nplugin = "opnai"\n',
    )
    listed = run("providers", plugins=PLUGINS, env=env)
    assert listed.returncode == 0 and "local" in listed.stdout
    assert "unknown setting 'timout' in [providers.local]; did you mean 'timeout'?" in listed.stderr
    assert "[providers.other]: [other] unknown plugin 'opnai' for endpoint 'other'; did you mean 'openai'?" in (
        listed.stderr
    )
    assert "unknown setting 'plugin'" not in listed.stderr and "unknown setting 'api'" not in listed.stderr
    assert "unknown provider 'other'" not in listed.stderr
