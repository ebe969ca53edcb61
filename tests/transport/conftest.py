"""Transport tests share the reliability helpers (loopback fault server, targets, fixtures)."""

from __future__ import annotations

from tests.reliability.fault_fixtures import *  # noqa: F403 - shared fixtures
