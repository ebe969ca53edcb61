"""The benchmark harness is the ``benchmarks/`` package at the repository root (not an installed
distribution): make it importable for the tests that drive it in process."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
