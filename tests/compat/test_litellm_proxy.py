"""A real third-party OpenAI-compatible server: the LiteLLM proxy, started on loopback with
``mock_response`` models (its own test feature: answers without any upstream), reached through a
``preset = "litellm"`` endpoint with the proxy's master key from ``LITELLM_API_KEY``.

The proxy lives in ``.venv-litellm`` (``bash scripts/setup-litellm.sh``, run by
``scripts/test.sh``; ``$LLM_CORE_LITELLM`` names another ``litellm`` executable). Where it did not
install, the module is skipped saying so. The proxy is started once for the module and stopped
after it; waiting for it is bounded (it needs about 10 to 60 seconds to start, depending on load).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from pydantic import BaseModel

from llm_core.errors import RateLimitError, ServerError
from llm_core.provider import BaseProvider
from llm_core.registry import Registry
from llm_core.streaming import StreamEventType
from llm_core.tools import ToolSpec

REPOSITORY = Path(__file__).resolve().parents[2]
EXECUTABLE = Path(os.environ.get("LLM_CORE_LITELLM") or REPOSITORY / ".venv-litellm" / "bin" / "litellm")
MASTER_KEY = "sk-llm-core-test-master-key-0123"
START_TIMEOUT = 180.0
#: What the mock models answer (``mock_response`` / ``mock_tool_calls`` of ``litellm_params``).
GREETING = "Hello from the LiteLLM proxy."
CITY_CALL = {"id": "call_litellm_0", "type": "function",
             "function": {"name": "get_city", "arguments": '{"city": "Paris"}'}}  # fmt: skip

pytestmark = pytest.mark.skipif(
    not EXECUTABLE.is_file(),
    reason=f"the LiteLLM proxy is not installed at {EXECUTABLE} (bash scripts/setup-litellm.sh installs it)",
)


def model(name: str, **params: object) -> dict[str, object]:
    return {"model_name": name, "litellm_params": {"model": f"openai/{name}", "api_key": "unused", **params}}


CONFIG = {
    "model_list": [
        model("mock-chat", mock_response=GREETING),
        model("mock-json", mock_response=json.dumps({"city": "Paris", "country": "France"})),
        model("mock-tools", mock_response="", mock_tool_calls=[CITY_CALL]),
        model("mock-limited", mock_response="litellm.RateLimitError"),
    ]
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The proxy's base URL (``http://127.0.0.1:PORT/v1``), once it answers."""
    folder = tmp_path_factory.mktemp("litellm")
    config = folder / "config.json"  # YAML is a superset of JSON: the proxy reads it as its YAML config
    config.write_text(json.dumps(CONFIG))
    port = free_port()
    env = {**os.environ, "LITELLM_MASTER_KEY": MASTER_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    log = (folder / "proxy.log").open("wb")
    process = subprocess.Popen(
        [str(EXECUTABLE), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                output = (folder / "proxy.log").read_text()[-2000:]
                pytest.fail(f"the LiteLLM proxy exited ({process.returncode}): {output}")
            try:
                if httpx2.get(f"{base}/health/liveliness", timeout=1.0).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the LiteLLM proxy did not answer within {START_TIMEOUT} s")
            time.sleep(0.25)
        yield f"{base}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


@pytest.fixture
def litellm(proxy: str, monkeypatch: pytest.MonkeyPatch) -> BaseProvider:
    monkeypatch.setenv("LITELLM_API_KEY", MASTER_KEY)
    registry = Registry.discover()
    registry.add_endpoint("litellm", plugin="openai", preset="litellm", base_url=proxy, retry={"max_attempts": 1},
                          models=["mock-chat", "mock-json", "mock-tools", "mock-limited"])  # fmt: skip
    return registry.get("litellm")


class City(BaseModel):
    city: str
    country: str


CITY_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
GET_CITY = ToolSpec(name="get_city", description="A city's weather.", parameters=CITY_SCHEMA)


def test_chat_and_health(litellm: BaseProvider) -> None:
    answer = litellm.chat_completion("Hi", model="mock-chat")
    assert (answer.content, answer.provider, answer.finish_reason) == (GREETING, "litellm", "stop")
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    status = litellm.test_connection()
    assert "mock-chat" in status.models and "mock-chat answers (the Chat Completions API)" in status.message


def test_stream_sync_and_async(litellm: BaseProvider) -> None:
    events = list(litellm.stream_chat_completion("Hi", model="mock-chat"))
    assert "".join(e.text or "" for e in events if e.type is StreamEventType.TOKEN) == GREETING
    assert [e.type for e in events][-2:] == [StreamEventType.METADATA, StreamEventType.END]

    async def collect() -> str:
        return "".join([chunk async for chunk in litellm.aio.stream_text("Hi", model="mock-chat")])

    assert asyncio.run(collect()) == GREETING


def test_tools_and_json(litellm: BaseProvider) -> None:
    called = litellm.chat_completion_with_tools("Weather in Paris?", [GET_CITY], model="mock-tools")
    calls = [(c.id, c.name, c.arguments) for c in called.tool_calls or ()]
    assert calls == [("call_litellm_0", "get_city", {"city": "Paris"})]
    assert called.finish_reason == "tool_calls"
    assert litellm.generate_json("Where is Paris?", City, model="mock-json") == City(city="Paris", country="France")


def test_the_proxy_errors_map_to_the_taxonomy(litellm: BaseProvider) -> None:
    with pytest.raises(RateLimitError, match=r"^\[litellm\] LiteLLM proxy at http://127.0.0.1:\d+/v1 returned 429"):
        litellm.chat_completion("Hi", model="mock-limited")


def test_without_its_key_the_proxy_refuses(proxy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_API_KEY", raising=False)  # the preset's key is optional: none is sent
    registry = Registry.discover()
    registry.add_endpoint("litellm", plugin="openai", preset="litellm", base_url=proxy, retry={"max_attempts": 1})
    # LiteLLM 1.108.7 without a database answers a request that has no key with a 500 (not 401)
    with pytest.raises(ServerError, match=r"^\[litellm\] LiteLLM proxy at .* returned 500"):
        registry.get("litellm").chat_completion("Hi", model="mock-chat")
