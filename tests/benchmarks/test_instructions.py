"""``python -m benchmarks.instructions``: instruction counts read from callgrind, the gap between
llm-core and the SDK accounted for, and (where valgrind is installed) one real measure."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import instructions


def _finished(stderr: bytes, returncode: int = 0) -> subprocess.CompletedProcess[bytes]:
    return subprocess.CompletedProcess(["valgrind"], returncode, b"", stderr)


def test_the_count_is_read_from_callgrinds_summary() -> None:
    stderr = b"==123== Events    : Ir\n==123== Collected : 5042117\n==123==\n==123== I   refs:      5,042,117\n"
    assert instructions.instructions(_finished(stderr)) == 5_042_117


@pytest.mark.parametrize(("stderr", "code"), [(b"==1== Collected : 10\n", 1), (b"Traceback ...\nValueError: x\n", 0)])
def test_a_failed_run_is_an_error_with_its_output_not_a_count(stderr: bytes, code: int) -> None:
    with pytest.raises(RuntimeError, match="failed") as caught:
        instructions.instructions(_finished(stderr, code))
    assert stderr.decode()[-20:] in str(caught.value)


def test_the_gap_is_the_own_path_plus_the_send_beyond_the_sdks() -> None:
    results = {
        instructions.SDK_CALL: 5_000_000.0,
        instructions.CORE_CALL: 5_600_000.0,
        instructions.CORE_SEND: 5_100_000.0,
        instructions.OWN_PATH: 480_000.0,
    }
    account = instructions.account(results)
    assert account["ratio"] == pytest.approx(1.12)
    assert account["gap"] == 600_000
    assert account["send beyond the SDK's"] == 100_000
    assert account["unaccounted"] == 20_000
    table = instructions.markdown({"gemini": results})
    assert "| **llm-core / bare SDK** | 1.120x |" in table
    assert "|   own path | +480.0 |" in table


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_part_of_the_call_is_counted_under_valgrind(tmp_path: Path) -> None:
    out = tmp_path / "instructions.json"
    measure = "map to the SDK's arguments"
    argv = ["--quick", "--providers", "openai", "--measures", measure, "--json", str(out)]
    assert instructions.main(argv) == 0
    counted = json.loads(out.read_text())["openai"][measure]
    # mapping one question to the SDK's keyword arguments: thousands of instructions, not millions
    assert 1_000 < counted < 1_000_000
