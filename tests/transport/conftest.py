"""Transport tests share the reliability helpers (loopback fault server, targets, fixtures)."""

from __future__ import annotations

import sys
from pathlib import Path

for _path in (Path(__file__).resolve().parents[1] / "reliability", Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from fault_fixtures import *  # noqa: E402,F403 - shared fixtures
