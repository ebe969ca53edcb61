"""The llm-core conformance kit against the Gemini provider (cassettes authored from the kit's
own calls by cassette_author.py, ``conformance/<scenario>``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_gemini_plugin.provider import GeminiProvider
from llm_core.testing.conformance import ProviderConformance
from tests.gemini.gemini_inputs import CASSETTES
from tests.gemini.gemini_support import make_provider


class TestGeminiConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> GeminiProvider:
        return make_provider()

    @pytest.fixture
    def conformance_cassettes(self) -> Path:
        return CASSETTES / "conformance"
