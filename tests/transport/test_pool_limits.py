"""``client_args={"limits": httpx2.Limits(...)}`` (the documented way to size the connection pool,
e.g. keep-alive for a high-concurrency batch run) builds both plugins' clients: the guarded
client's own ``limits`` argument is positional-only, so it never collides with the pool's."""

from __future__ import annotations

import httpx2

from core_gemini_plugin.provider import GeminiProvider
from core_openai_plugin.provider import OpenAIProvider


def test_pool_limits_in_client_args_build_the_clients() -> None:
    pool = {"limits": httpx2.Limits(max_connections=200, max_keepalive_connections=100)}
    openai = OpenAIProvider(api_key="test-key", base_url="http://127.0.0.1:9/v1", client_args=pool)
    assert openai.client.base_url.host == "127.0.0.1"
    assert openai.async_client.base_url.host == "127.0.0.1"
    gemini = GeminiProvider(api_key="test-key", client_args=pool, async_client_args=pool)
    assert gemini.client.aio is not None
