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


FORGETFUL = """
from pathlib import Path

import pytest

from core_gemini_plugin.provider import GeminiProvider
from llm_core.testing.conformance import ProviderConformance


class ForgetsSignatures(GeminiProvider):
    '''Maps assistant turns without their metadata: thought signatures are not sent back.'''

    def map_chat_request(self, request):
        turns = [m.model_copy(update={"metadata": {}}) for m in request.messages]
        return super().map_chat_request(request.model_copy(update={"messages": turns}))


class TestForgetsSignatures(ProviderConformance):
    @pytest.fixture
    def provider(self):
        return ForgetsSignatures(api_key="test-key")

    @pytest.fixture
    def conformance_cassettes(self):
        return Path(%r)
"""


def test_a_provider_that_drops_thought_signatures_fails_the_kit(pytester: pytest.Pytester) -> None:
    """The thinking_tools scenario sends the answer's assistant turn back: a request without the
    recorded thought signature is not in the cassette, and the check says what to replay."""
    pytester.makepyfile(FORGETFUL % str(CASSETTES / "conformance"))
    options = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result = pytester.runpytest_inprocess(*options, "-k", "thinking_with_tools or tool_call_round")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*sending the tool result back after the answer's assistant turn (to_message()*"])
