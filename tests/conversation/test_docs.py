"""The code samples of docs/conversations.md run as written: the two tutorials against the
recorded conversations (through the real SDKs, no network), the fake-provider sample as it is."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from llm_core.registry import reset_registry
from llm_core.testing.cassettes import use_cassette
from tests.conversation import flows

DOC = flows.ROOT / "docs" / "conversations.md"


def samples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def sample(marker: str) -> str:
    return next(code for code in samples() if code.startswith(marker))


@pytest.mark.parametrize(
    ("provider", "env", "folder"),
    [("gemini", "GEMINI_API_KEY", flows.GEMINI_CASSETTES), ("openai", "OPENAI_API_KEY", flows.OPENAI_CASSETTES)],
)
def test_tutorial_runs_as_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, provider: str, env: str, folder: Path
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_CORE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(env, flows.KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    reset_registry()
    code = sample(f"# tutorial: {provider}")
    assert len(code.strip().splitlines()) <= 40  # "in 30 lines" of code, give or take the blank ones
    printed = io.StringIO()
    with use_cassette(folder / "conversation_tool_loop.json"), contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "tutorial"})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "Paris: 18 °C and cloudy. Tokyo: 24 °C and clear, local time 21:30."
    assert lines[1] == "There is no weather station in Atlantis, so I cannot tell you."
    assert lines[2].startswith("prompt_tokens=")


def test_the_other_samples_run() -> None:
    runnable = [code for code in samples() if code.startswith("from llm_core.testing")]
    assert runnable
    for code in runnable:
        exec(compile(code, str(DOC), "exec"), {"__name__": "sample"})
