"""The llm-core conformance kit against the OpenAI provider (cassettes authored by
cassette_author.py from the kit's own calls)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from llm_core.errors import AuthenticationError, LLMError
from llm_core.testing.conformance import ProviderConformance
from tests.openai.openai_scenarios import CONFORMANCE, make_provider


class TestOpenAIConformance(ProviderConformance):
    expected_error: ClassVar[type[LLMError]] = AuthenticationError

    @pytest.fixture
    def provider(self):
        return make_provider()

    @pytest.fixture
    def conformance_cassettes(self) -> Path:
        return CONFORMANCE
