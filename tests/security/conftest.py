"""Shares the reliability helpers (loopback fault server, fixtures) with these tests."""

from __future__ import annotations

from tests.reliability.fault_fixtures import *  # noqa: F403 - shared fixtures
