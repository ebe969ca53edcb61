"""Replay mode: serve provider calls from recorded cassettes through the real plugins and SDKs.

``llm-core --replay DIR ...`` (or ``LLM_CORE_REPLAY=DIR``) merges every cassette under ``DIR``
into one playback set; a request that no cassette holds fails instead of reaching the network.
Placeholder keys are set for providers without one, so that no real key is needed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPLAY_ENV = "LLM_CORE_REPLAY"
PLACEHOLDER_KEY = "replay-placeholder-key"


def replay_dir(cli_value: str | None) -> Path | None:
    value = cli_value or os.environ.get(REPLAY_ENV)
    return Path(value) if value else None


def merged_cassette(directory: Path) -> dict[str, Any]:
    """All interactions of all ``*.json`` cassettes under ``directory``."""
    interactions: list[Any] = []
    for path in sorted(directory.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("interactions"), list):
            interactions.extend(data["interactions"])
    return {"version": 1, "interactions": interactions}


@contextmanager
def replaying(directory: Path) -> Iterator[int]:
    """Within the block, HTTP traffic of both SDKs is answered from ``directory``'s cassettes.

    Yields the number of recorded interactions available.
    """
    from llm_core.registry import get_registry
    from llm_core.testing.cassettes import use_cassette

    if not directory.is_dir():
        raise FileNotFoundError(f"replay directory {directory} does not exist")
    merged = merged_cassette(directory)
    previous: dict[str, str | None] = {}
    for spec in get_registry().providers():
        if spec.credential_env and not spec.credentials_present():
            name = spec.credential_env[0]
            previous[name] = os.environ.get(name)
            os.environ[name] = PLACEHOLDER_KEY
    with tempfile.TemporaryDirectory(prefix="llm-core-replay-") as tmp:
        target = Path(tmp) / "replay.json"
        target.write_text(json.dumps(merged), encoding="utf-8")
        try:
            with use_cassette(target, mode="none", allow_playback_repeats=True):
                yield len(merged["interactions"])
        finally:
            for name, value in previous.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
