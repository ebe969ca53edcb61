"""Bounded resources: the size limits apply to the decoded body.

A 500 KB gzip body that inflates to 500 MB raises ``InvalidResponseError`` after at most the
limit was inflated; its peak memory (VmHWM, in a process of its own) grows by a small multiple
of the limit, not by the 500 MB. One SSE line over ``max_event_bytes`` likewise. Both plugins,
sync and async, calls and streams, one request each.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from llm_core.errors import InvalidResponseError
from tests.reliability.fault_server import FaultServer, paced
from tests.reliability.fault_targets import HTTP_TARGETS
from tests.transport.helpers import MODES, error_of, run

TARGETS = {t.name: t for t in HTTP_TARGETS}
MIB = 1024 * 1024
INFLATED = 500 * 1000 * 1000  # 500 MB of JSON whitespace once decoded
ROOT = Path(__file__).resolve().parents[2]
CHILD = "tests.transport.bomb_child"  # run as a module from ROOT


def _bomb(prefix: bytes) -> bytes:
    """``prefix`` then 500 MB of spaces, gzip-encoded in about 500 KB, built in well under a
    second: after a full flush a deflate block is byte-aligned and owes nothing to what came
    before, so one compressed MiB of spaces is repeated as it is (RFC 1951/1952)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate; the gzip frame is added below
    block = b" " * MIB
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    packer.compress(block)
    packer.flush(zlib.Z_FULL_FLUSH)  # the first block after the prefix may differ: skip it
    packer.compress(block)
    segment = packer.flush(zlib.Z_FULL_FLUSH)
    blocks = INFLATED // MIB
    crc = zlib.crc32(prefix)
    for _ in range(blocks):
        crc = zlib.crc32(block, crc)
    size = len(prefix) + blocks * MIB
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip, deflate, no name, no time
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return header + head + segment * blocks + packer.flush() + trailer


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    for kind, prefix in (("call", b""), ("stream", b"data: ")):  # a stream: one endless SSE line
        path = folder / f"{kind}.gz"
        bomb = _bomb(prefix)
        with gzip.GzipFile(fileobj=io.BytesIO(bomb)) as check:  # a valid gzip body
            assert check.read(len(prefix) + 10) == prefix + b" " * 10
        path.write_bytes(bomb)
        made[kind] = path
    return made


#: kind → (options, the limit, the setting named in the error)
LIMITS = {
    "call": ({"max_response_bytes": 8 * MIB}, 8 * MIB, "max_response_bytes"),
    "stream": ({"max_event_bytes": 1 * MIB}, 1 * MIB, "max_event_bytes"),
}
DEFAULT_LIMIT = 64 * MIB


def _measure(target: str, bombs: dict[str, Path]) -> list[dict[str, Any]]:
    """Every case of one plugin in one child process (its peak reset before each case)."""
    cases = [
        {"target": target, "mode": mode, "kind": kind, "bomb": str(bombs[kind]), "options": LIMITS[kind][0]}
        for mode in MODES
        for kind in sorted(LIMITS)
    ]
    cases.append({"target": target, "mode": "sync", "kind": "call", "bomb": str(bombs["call"]), "options": {}})
    done = subprocess.run(
        [sys.executable, "-m", CHILD, json.dumps(cases)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = [json.loads(line) for line in done.stdout.strip().splitlines() if line.startswith("{")]
    for figure in figures:
        print(f"\n{figure}")
    assert len(figures) == len(cases)
    return figures


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_gzip_bomb_is_refused_within_a_small_multiple_of_the_limit(target: str, bombs: dict[str, Path]) -> None:
    for bomb in bombs.values():
        assert bomb.stat().st_size < 600_000  # small on the wire, 500 MB decoded
    for figure in _measure(target, bombs):
        case = figure["case"]
        if case["options"]:
            _options, limit, setting = LIMITS[case["kind"]]
        else:
            limit, setting = DEFAULT_LIMIT, "max_response_bytes (67108864"
        assert figure["error"] == "InvalidResponseError", figure
        assert setting in figure["message"], figure
        assert figure["requests"] == 1, figure
        assert figure["growth_kib"] * 1024 < 2 * limit + 16 * MIB, figure  # not the 500 MB it inflates to


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_one_event_over_the_limit_without_compression(target: str, mode: str, server: FaultServer) -> None:
    http = TARGETS[target]
    # a first event as the service sends it, then one "data:" line that never ends (64 KiB chunks)
    first = http.stream_events(["Once"])[0].encode()
    server.script(paced([first, b"data: ", *[b"x" * 65536] * 40], 0.001))
    result, _ = run(http.build(server.url, max_event_bytes=MIB), "stream", mode)
    error = error_of(result)
    assert isinstance(error, InvalidResponseError) and "max_event_bytes" in error.message, result
    assert server.count == 1
