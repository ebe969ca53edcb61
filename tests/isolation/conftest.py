"""Shares the reliability helpers (loopback fault server, fixtures) with these tests."""

from __future__ import annotations

import sys
from pathlib import Path

KIT = str(Path(__file__).resolve().parents[1] / "reliability")
if KIT not in sys.path:
    sys.path.insert(0, KIT)

from fault_fixtures import *  # noqa: E402,F403 - shared fixtures
