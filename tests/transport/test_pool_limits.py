"""``client_args={"limits": httpx2.Limits(...)}`` (the documented way to size the connection pool,
e.g. keep-alive for a high-concurrency batch run) builds both plugins' clients: the guarded
client's own ``limits`` argument is positional-only, so it never collides with the pool's."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from core_gemini_plugin.provider import GeminiProvider
from core_openai_plugin.provider import OpenAIProvider


def test_pool_limits_in_client_args_build_the_clients() -> None:
    pool = {"limits": httpx2.Limits(max_connections=200, max_keepalive_connections=100)}
    openai = OpenAIProvider(api_key="test-key", base_url="http://127.0.0.1:9/v1", client_args=pool)
    assert openai.client.base_url.host == "127.0.0.1"
    assert openai.async_client.base_url.host == "127.0.0.1"
    gemini = GeminiProvider(api_key="test-key", client_args=pool, async_client_args=pool)
    assert gemini.client.aio is not None


def test_the_openai_clients_keep_the_sdks_own_pool_limits_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    import core_openai_plugin.provider as module
    import openai

    seen: list[Any] = []
    for name in ("sync_http_client", "async_http_client"):
        real = getattr(module, name)

        def spy(limits: Any, /, _real: Any = real, **client_args: Any) -> Any:
            seen.append(client_args.get("limits"))
            return _real(limits, **client_args)

        monkeypatch.setattr(module, name, spy)
    default = OpenAIProvider(api_key="test-key", base_url="http://127.0.0.1:9/v1")
    assert default.client and default.async_client
    # the pool the SDK builds for itself (1,000 connections, 100 kept alive), not httpx2's 20
    assert seen == [openai.DEFAULT_CONNECTION_LIMITS] * 2
    given = httpx2.Limits(max_connections=5, max_keepalive_connections=5)
    seen.clear()
    assert OpenAIProvider(api_key="test-key", base_url="http://127.0.0.1:9/v1", client_args={"limits": given}).client
    assert seen == [given]
