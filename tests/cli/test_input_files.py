"""Files named on the command line (``--schema``, ``json --schema``, ``embed --file``,
``decide --questions``) are read as ``-a`` and ``--replay`` read theirs: regular files only,
bounded, JSON nesting bounded; anything else is one line and exit 2, never a hang or a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_core.cli.main import main
from llm_core.registry import get_registry
from llm_core.testing import FunctionProvider

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _provider() -> object:
    with get_registry().override(FunctionProvider(lambda messages, info: "{}")):
        yield


def _argv(command: str, path: Path) -> list[str]:
    return {
        "prompt --schema": ["prompt", "hi", "--schema", str(path), "--no-log"],
        "json --schema": ["json", "hi", "--schema", str(path)],
        "embed --file": ["embed", "--file", str(path)],
        "decide --questions": ["decide", "--subject", "s", "--questions", str(path)],
    }[command]


COMMANDS = ["prompt --schema", "json --schema", "embed --file", "decide --questions"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_or_a_device_is_refused(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    assert main(_argv(command, fifo)) == 2
    assert capsys.readouterr().err.endswith(f"{fifo} is not a regular file\n")
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    assert main(_argv(command, zero)) == 2
    assert capsys.readouterr().err.endswith(f"{zero} is not a regular file\n")


@pytest.mark.parametrize("command", ["prompt --schema", "json --schema", "decide --questions"])
def test_deep_nesting_is_refused(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(_argv(command, deep)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nests deeper than 200 levels" in err, err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_huge_file_is_refused_before_it_is_read(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(1 << 30)
    assert main(_argv(command, big)) == 2
    assert capsys.readouterr().err.endswith(f"{big} is 1,073,741,824 bytes; the limit is 33,554,432\n")
