"""Reliability tests: the helpers beside this file are importable (fault server, scenarios)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from fault_fixtures import *  # noqa: E402,F403 - shared fixtures
