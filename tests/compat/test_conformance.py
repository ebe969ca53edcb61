"""The llm-core conformance kit on a Chat Completions endpoint: a keyless named endpoint of the
OpenAI plugin (no preset: what an unknown server gets), served by the emulated Chat-Completions-only
server on loopback; the failing scenarios are answered with OpenAI's 401 body (reference
recording 10)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

from llm_core.errors import AuthenticationError, LLMError
from llm_core.provider import BaseProvider
from llm_core.registry import Registry
from llm_core.testing.conformance import ProviderConformance
from tests.compat.chat_upstream import chat_completions_server
from tests.reliability.fault_server import FaultServer, json_response

UNAUTHORIZED = {"error": {"message": "Incorrect API key provided: sk-. You can find your API key at "
                          "https://platform.openai.com/account/api-keys.", "type": "invalid_request_error",
                          "param": None, "code": "invalid_api_key"}}  # fmt: skip


class TestChatCompletionsConformance(ProviderConformance):
    expected_error: ClassVar[type[LLMError]] = AuthenticationError

    @pytest.fixture
    def server(self, conformance_scenario) -> Iterator[FaultServer]:
        with FaultServer(chat_completions_server, keep_alive=True) as server:
            if conformance_scenario.name in ("error", "stream_error"):
                server.always(json_response(401, UNAUTHORIZED))
            yield server

    @pytest.fixture
    def provider(self, server: FaultServer) -> BaseProvider:
        registry = Registry.discover()
        registry.add_endpoint("local", plugin="openai", base_url=f"{server.url}/v1", models=["llama3.2"])
        return registry.get("local")
