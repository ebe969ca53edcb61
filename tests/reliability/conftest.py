"""Reliability tests: the fault server, scenarios and targets beside this file, and their fixtures."""

from __future__ import annotations

from tests.reliability.fault_fixtures import *  # noqa: F403 - shared fixtures
