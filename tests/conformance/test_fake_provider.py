"""The kit passes the reference provider; FakeProvider claims every feature, so nothing skips."""

from __future__ import annotations

import pytest

from llm_core.testing import FakeProvider
from llm_core.testing.conformance import ProviderConformance
from llm_core.testing.scenarios import Scenario
from tests.conformance import kit_providers


class TestFakeProviderConformance(ProviderConformance):
    @pytest.fixture
    def provider(self, conformance_scenario: Scenario) -> FakeProvider:
        return kit_providers.scripted_fake(conformance_scenario.name)
