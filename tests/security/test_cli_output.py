"""The ``llm-core`` command line never prints a configured key: not in tables, JSON, notes,
errors (also when the upstream quotes the key back), nor in the SDK's own debug logging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.fault_server import FaultServer
from tests.reliability.fault_targets import GEMINI, OPENAI
from tests.security.canary import echo_key_upstream, make_canary

COMMANDS: list[list[str]] = [
    ["providers"],
    ["--json", "providers"],
    ["models"],
    ["plugins"],
    ["route", "chat", "streaming"],
    ["check"],
    ["--json", "check"],
    *[
        [*prefix, *command, "--provider", name]
        for name in ("gemini", "openai")
        for prefix in ([], ["--json"])
        for command in (
            ["chat", "Tell me a story."],
            ["chat", "Tell me a story.", "--stream"],
            ["json", "A person as JSON."],
            ["embed", "one", "two"],
        )
    ],
]


@pytest.fixture
def keyed_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Both plugins configured with canary keys: Gemini's from the environment, OpenAI's from
    the TOML config file; both pointed at loopback upstreams; no retries (no real waits)."""
    keys = {"gemini": make_canary("shaped", "gemini"), "openai": make_canary("plain", "openai")}
    servers = {"gemini": FaultServer(GEMINI.upstream).start(), "openai": FaultServer(OPENAI.upstream).start()}
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.gemini.retry]\nmax_attempts = 1\n\n"
        f'[providers.openai]\napi_key = "{keys["openai"]}"\nbase_url = "{servers["openai"].url}/v1"\n\n'
        "[providers.openai.retry]\nmax_attempts = 1\n"
    )
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    monkeypatch.setenv("GEMINI_API_KEY", keys["gemini"])
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", servers["gemini"].url)
    monkeypatch.setenv("LLM_CORE_PLUGINS", "core-gemini-plugin,core-openai-plugin")
    monkeypatch.chdir(tmp_path)
    try:
        yield {"keys": keys, "servers": servers, "config": config}
    finally:
        for server in servers.values():
            server.close()


def _assert_clean(output: str, keys: dict[str, str], what: str) -> None:
    for name, key in keys.items():
        assert key not in output, f"{name}'s key printed by {what}"
        assert key[6:18] not in output, f"a piece of {name}'s key printed by {what}"


@pytest.mark.parametrize("upstream", ["answers", "rejects-and-echoes-the-key"])
def test_cli_never_prints_the_key(
    keyed_cli: dict[str, Any], upstream: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from llm_core.cli.main import main
    from llm_core.registry import reset_registry

    if upstream != "answers":
        keyed_cli["servers"]["gemini"].fallback = echo_key_upstream(GEMINI)
        keyed_cli["servers"]["openai"].fallback = echo_key_upstream(OPENAI)
    codes = []
    for argv in COMMANDS:
        reset_registry()
        codes.append(main(argv))
        out = capsys.readouterr()
        _assert_clean(out.out + out.err, keyed_cli["keys"], " ".join(argv))
    servers = keyed_cli["servers"]
    sent = {r.headers.get("x-goog-api-key") for r in servers["gemini"].requests}
    sent |= {r.headers.get("authorization", "").removeprefix("Bearer ") for r in servers["openai"].requests}
    assert sent == set(keyed_cli["keys"].values()), "both canaries were really used"
    if upstream == "answers":
        assert set(codes) == {0}
    else:
        assert 1 in codes  # the provider calls failed, and said so


def test_cli_process_with_sdk_debug_logging_never_prints_the_key(keyed_cli: dict[str, Any], tmp_path: Path) -> None:
    """A real ``llm-core`` process with the SDKs' own debug logging switched on."""
    script = Path(sys.executable).parent / "llm-core"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        {
            "GEMINI_API_KEY": keyed_cli["keys"]["gemini"],
            "OPENAI_LOG": "debug",
            "PYTHONWARNINGS": "ignore",
        }
    )
    keyed_cli["servers"]["openai"].fallback = echo_key_upstream(OPENAI)
    outputs = []
    for argv in (["chat", "hi", "--provider", "openai"], ["--json", "chat", "hi", "--provider", "gemini"]):
        done = subprocess.run(
            [str(script), *argv], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, check=False
        )
        outputs.append(done)
        _assert_clean(done.stdout + done.stderr, keyed_cli["keys"], " ".join(argv))
    assert outputs[0].returncode == 1 and "check OPENAI_API_KEY" in outputs[0].stderr
    assert outputs[1].returncode == 0 and json.loads(outputs[1].stdout)["content"].startswith("echo: ")
