"""Every test runs with its own user config dir, so that the CLI's key store, aliases and prompt
log (and any config.toml) never touch the real ``~/.config/llm-core``, nor the OS keyring."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("LLM_CORE_LOGS_DB", raising=False)
    monkeypatch.setenv("LLM_CORE_KEYRING", "0")  # keys go to the file; tests of the keyring set their own
    return home
