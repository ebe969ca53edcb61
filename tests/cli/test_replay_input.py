"""``--replay DIR`` reads what it finds under DIR as untrusted input: only regular files, a
bounded number of bytes, a bounded nesting, interactions of the right shape, gzip bodies inflated
a piece at a time up to a limit; anything else is one typed error (exit 2), never a hang, a
MemoryError or a traceback."""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli import replay
from llm_core.errors import InvalidInputError
from llm_core.testing import cassettes
from llm_core.untrusted import MAX_NESTING

pytestmark = pytest.mark.timeout(60)
Run = Callable[..., subprocess.CompletedProcess[str]]


def _interaction(**response: Any) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "uri": "https://example.invalid/v1/models", "body": {"string": ""}, "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}, **response},
    }


def _write(directory: Path, data: Any, name: str = "c.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_fifo_named_json_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(InvalidInputError, match=r"pipe\.json is not a regular file"):
        replay.merged_cassette(tmp_path)


def test_a_link_to_a_device_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(InvalidInputError, match="not a regular file"):
        replay.merged_cassette(tmp_path)


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "MAX_CASSETTE_BYTES", 1000)
    with open(tmp_path / "big.json", "wb") as handle:  # sparse: 1 GB that takes no disk
        handle.truncate(1 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match=r"big\.json is 1,073,741,824 bytes; the limit is 1,000"):
            replay.merged_cassette(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


@pytest.mark.parametrize("depth", [100_000, 500])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    _write(tmp_path, {"interactions": []}, "ok.json")
    (tmp_path / "deep.json").write_text('{"interactions": [' + "[" * depth + "]" * depth + "]}")
    with pytest.raises(InvalidInputError, match=f"deep.json nests deeper than {MAX_NESTING} levels"):
        replay.merged_cassette(tmp_path)


@pytest.mark.parametrize(
    ("interaction", "what"),
    [
        ([1], "needs a request and a response"),
        ({"request": None, "response": {}}, "needs a request and a response"),
        ({**_interaction(), "request": {"method": 1, "uri": "x"}}, "request.method must be a string"),
        (_interaction(status={"code": "200"}), "response.status.code must be an integer"),
        (_interaction(headers={"a": "b"}), "response.headers must map names to lists of strings"),
        (_interaction(body=[1]), "response.body must be an object or a string"),
        (_interaction(body={"string": 5}), "response.body.string must be a string"),
        (_interaction(body={"base64": "%%%"}), "response.body.base64 is not base64"),
    ],
)
def test_malformed_interactions_are_refused(tmp_path: Path, interaction: Any, what: str) -> None:
    _write(tmp_path, {"interactions": [_interaction(), interaction]})
    with pytest.raises(InvalidInputError, match=rf"c\.json: interactions\[1\]:? {what}"):
        replay.merged_cassette(tmp_path)


def test_json_that_is_not_a_cassette_is_passed_over(tmp_path: Path) -> None:
    _write(tmp_path, [1, 2], "list.json")
    (tmp_path / "bad.json").write_bytes(b"\xff{not json")
    _write(tmp_path, {"interactions": [_interaction()]})
    assert len(replay.merged_cassette(tmp_path)["interactions"]) == 1


def _gzip_cassette(directory: Path, inflated: int) -> Path:
    body = gzip.compress(b"{" + b" " * (inflated - 2) + b"}", compresslevel=9)
    return _write(
        directory,
        {
            "version": 1,
            "interactions": [
                _interaction(
                    headers={"content-encoding": ["gzip"], "content-type": ["application/json"]},
                    body={"base64": base64.b64encode(body).decode()},
                )
            ],
        },
    )


def test_a_gzip_bomb_in_a_cassette_is_refused_with_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body that inflates to 200 MB (a ~200 KB cassette) with the limit set to 1 MiB: refused,
    and the process never holds much more than the limit (vcrpy's own decoding held it all)."""
    monkeypatch.setattr(cassettes, "MAX_INFLATED_BYTES", 1024 * 1024)
    with cassettes.use_cassette(_gzip_cassette(tmp_path / "small", 1000), mode="none"):
        pass  # vcrpy and its stubs imported before memory is traced
    path = _gzip_cassette(tmp_path, 200 * 1024 * 1024)
    assert path.stat().st_size < 400_000
    refused = pytest.raises(InvalidInputError, match=r"inflates to more than MAX_INFLATED_BYTES \(1,048,576 bytes\)")
    tracemalloc.start()
    try:
        with refused, cassettes.use_cassette(path, mode="none"):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * 1024 * 1024, f"peak {peak:,} bytes"


def test_a_gzip_body_within_the_limit_replays_decoded(tmp_path: Path) -> None:
    path = _gzip_cassette(tmp_path, 5000)
    with cassettes.use_cassette(path, mode="none") as cassette:
        headers, body = cassette.responses[0]["headers"], cassette.responses[0]["body"]["string"]
    assert "content-encoding" not in headers and headers["content-length"] == ["5000"]
    assert body == b"{" + b" " * 4998 + b"}"


def test_the_cli_prints_one_line_and_exits_2(run: Run, tmp_path: Path) -> None:
    directory = tmp_path / "replayed"
    directory.mkdir()
    os.mkfifo(directory / "pipe.json")
    result = run("--replay", str(directory), "providers")
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: --replay: {directory / 'pipe.json'} is not a regular file\n"
