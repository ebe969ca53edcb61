"""Fixtures of the Gemini plugin tests (helpers in gemini_support.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from core_gemini_plugin.provider import GeminiProvider
from llm_core.registry import reset_registry
from tests.gemini.gemini_inputs import KEY
from tests.gemini.gemini_support import RECORDING, Delays, Offline, Runner, fast_retry, make_provider

SDK_ENV = (
    "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "GOOGLE_GENAI_API_VERSION", "GOOGLE_GENAI_HTTP_CLIENT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "LLM_CORE_CONFIG", "LLM_CORE_PREFER", "LLM_CORE_PLUGINS", "LLM_CORE_STRICT_PLUGINS",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No developer key, config file or SDK switch leaks into a test (keys stay when recording)."""
    for name in SDK_ENV:
        monkeypatch.delenv(name, raising=False)
    if not RECORDING:
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    reset_registry()
    yield
    reset_registry()


@pytest.fixture
def delays() -> Delays:
    return Delays()


@pytest.fixture
def provider(delays: Delays) -> GeminiProvider:
    return make_provider(delays)


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest, provider: GeminiProvider) -> Runner:
    """Each test using it runs twice: through the sync API and through ``provider.aio``."""
    return Runner(provider, request.param)


@pytest.fixture
def offline(delays: Delays) -> Offline:
    """A provider whose HTTP goes to ``handler`` (default: none expected) and the list of what it
    sent: for checks that nothing is sent, and for timeouts and connection failures."""

    def build(handler: Callable[[httpx2.Request], httpx2.Response] | None = None,
              **config: Any) -> tuple[GeminiProvider, list[httpx2.Request]]:
        sent: list[httpx2.Request] = []

        def answer(request: httpx2.Request) -> httpx2.Response:
            sent.append(request)
            if handler is None:
                raise AssertionError("nothing should have been sent")
            return handler(request)

        transport = httpx2.MockTransport(answer)
        built = GeminiProvider(api_key=KEY, retry=fast_retry(delays), client_args={"transport": transport},
                               async_client_args={"transport": transport}, **config)
        return built, sent

    return build
