"""Named endpoints: a keyless server that implements only ``/v1/chat/completions``, declared in
the config file, is provider ``local`` for every surface (listing, selection, ``-m MODEL``,
routers), and chat, streams, a tool loop and JSON work through it with nothing sent to
``/v1/responses`` and no key on the wire."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from pydantic import BaseModel

from llm_core.cli.main import main
from llm_core.errors import ConfigurationError, DuplicateProviderError, UnknownSettingError
from llm_core.features import Feature
from llm_core.registry import Registry
from llm_core.streaming import TokenType
from tests.compat.conftest import CANARY_KEY, EndpointConfig
from tests.reliability.fault_server import FaultServer, reset


def local_table(server: FaultServer, name: str = "local", **more: str) -> str:
    """A ``[providers.NAME]`` endpoint table for ``server`` (``more``: keys and TOML values)."""
    settings = {"plugin": '"openai"', "api": '"chat_completions"', "base_url": f'"{server.url}/v1"', **more}
    return f"[providers.{name}]\n" + "".join(f"{key} = {value}\n" for key, value in settings.items())


def get_city(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"


class City(BaseModel):
    city: str
    country: str


def assert_nothing_leaked(server: FaultServer) -> None:
    assert server.requests, "nothing reached the server"
    for request in server.requests:
        assert request.path != "/v1/responses"
        assert "authorization" not in request.headers
        assert "openai-organization" not in request.headers and "openai-project" not in request.headers
        assert CANARY_KEY not in json.dumps(request.headers) + request.text


def test_a_keyless_chat_completions_server_in_the_config_file_is_provider_local(
    upstream: FaultServer, endpoint_config: EndpointConfig
) -> None:
    registry = endpoint_config(local_table(upstream))
    spec = registry.spec("local")
    assert spec.requires_credentials is False and spec.distribution == "core-openai-plugin"
    provider = registry.get("local")
    assert provider.is_available()

    answer = provider.chat_completion("Hi there", model="llama3.2")
    assert (answer.content, answer.provider, answer.usage.total_tokens) == ("echo: Hi there", "local", 18)

    events = list(provider.stream_chat_completion("Count to three", model="llama3.2"))
    assert "".join(e.text or "" for e in events if e.token_type is TokenType.LLM_RESPONSE) == "echo: Count to three"
    assert events[-2].metadata is not None and events[-2].metadata.input_tokens == 11

    conversation = provider.conversation(tools=[get_city], model="llama3.2")
    reply = conversation.send("What is the weather in Paris?")
    assert reply.content == "The tool said: sunny in Paris"

    assert provider.generate_json("Where is Paris?", City, model="llama3.2") == City(city="Paris", country="France")
    assert [r.path for r in upstream.requests].count("/v1/chat/completions") == 5
    assert_nothing_leaked(upstream)


def test_async_calls_take_the_same_path(upstream: FaultServer, endpoint_config: EndpointConfig) -> None:
    provider = endpoint_config(local_table(upstream, model='"llama3.2"')).get("local")

    async def run() -> tuple[str, str]:
        answer = await provider.aio.chat_completion("Hi")
        chunks = [chunk async for chunk in provider.aio.stream_text("Hello")]
        return answer.content, "".join(chunks)

    assert asyncio.run(run()) == ("echo: Hi", "echo: Hello")
    assert_nothing_leaked(upstream)


def test_an_endpoint_is_listed_selected_by_model_and_served_by_the_cli(
    upstream: FaultServer, endpoint_config: EndpointConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    models = '["llama3.2", {id = "llava", features = ["chat", "vision"]}]'
    registry = endpoint_config(local_table(upstream, models=models))
    assert registry.select(model="llama3.2").identifier == "local"
    assert registry.select(Feature.VISION, model="llava").identifier == "local"
    assert registry.spec("local").model("llava").features == {Feature.CHAT, Feature.VISION}
    assert main(["providers"]) == 0
    assert "local" in capsys.readouterr().out
    assert main(["prompt", "-m", "llama3.2", "--no-log", "Hello from the CLI"]) == 0
    assert "echo: Hello from the CLI" in capsys.readouterr().out
    assert_nothing_leaked(upstream)


def test_a_model_outside_the_endpoint_list_is_not_its_to_serve(
    upstream: FaultServer, endpoint_config: EndpointConfig
) -> None:
    registry = endpoint_config(local_table(upstream, models='["llama3.2"]'))
    assert "local" not in [c.spec.identifier for c in registry.candidates(model="mistral-small")]


def test_a_router_falls_back_from_a_down_endpoint_and_back(endpoint_config: EndpointConfig) -> None:
    from tests.compat.chat_upstream import chat_completions_server

    with FaultServer(chat_completions_server) as primary, FaultServer(chat_completions_server) as spare:
        registry = endpoint_config(
            local_table(primary, "primary", retry="{max_attempts = 1}") + local_table(spare, "spare")
        )
        router = registry.router(Feature.CHAT, prefer=["primary", "spare"])
        primary.script(reset())  # the primary's connection is reset: it is down for this call
        first = router.chat_completion("Hi", model="llama3.2")
        assert (first.metadata["answered_by"], first.metadata["fallback_from"]) == ("spare", ["primary"])
        second = router.chat_completion("Hi again", model="llama3.2")
        assert second.metadata["answered_by"] == "primary" and second.content == "echo: Hi again"


def test_endpoints_in_python_are_providers_too(upstream: FaultServer) -> None:
    registry = Registry.discover()
    spec = registry.add_endpoint("lab", plugin="openai", base_url=f"{upstream.url}/v1", models=["llama3.2"])
    assert spec.factory == "core_openai_plugin.chat_provider:ChatCompletionsProvider"
    assert registry.get("lab").chat_completion("Hi").content == "echo: Hi"
    with pytest.raises(DuplicateProviderError):
        registry.add_endpoint("openai", plugin="openai", base_url=f"{upstream.url}/v1")
    with pytest.raises(UnknownSettingError, match="did you mean 'openai'"):
        registry.add_endpoint("x", plugin="opneai", base_url=f"{upstream.url}/v1")
    with pytest.raises(ConfigurationError, match="did you mean 'ollama'"):
        registry.add_endpoint("x", plugin="openai", preset="olama")
    with pytest.raises(ConfigurationError, match="needs a base_url"):
        registry.add_endpoint("x", plugin="openai")


def test_a_bad_endpoint_table_is_reported_and_the_rest_stays(endpoint_config: EndpointConfig) -> None:
    registry = endpoint_config('[providers.broken]\nplugin = "openai"\napi = "completions"\n')
    assert "openai" in registry and "broken" not in registry
    assert any("unknown api 'completions' for endpoint 'broken'" in str(error) for error in registry.plugin_errors)


def test_a_preset_is_all_a_user_writes(endpoint_config: EndpointConfig) -> None:
    registry = endpoint_config('[providers.ollama]\nplugin = "openai"\npreset = "ollama"\n')
    provider = registry.get("ollama")
    assert provider.base_url == "http://localhost:11434/v1" and provider.api_key is None
    assert registry.spec("ollama").name == "Ollama"
    groq = endpoint_config('[providers.groq]\nplugin = "openai"\npreset = "groq"\n').spec("groq")
    assert groq.credential_env == ("GROQ_API_KEY",) and groq.requires_credentials
    assert Feature.EMBEDDINGS not in groq.features


def test_discovery_with_a_config_file_without_endpoints_stays_light(tmp_path) -> None:
    import subprocess
    import sys

    path = tmp_path / "config.toml"
    path.write_text('[providers.openai]\nmodel = "gpt-4.1"\n')
    code = ("import sys; from llm_core import get_registry; get_registry().providers(); "
            "print(sorted(m for m in ('pydantic', 'openai', 'llm_core.endpoints') if m in sys.modules))")  # fmt: skip
    env = {**os.environ, "LLM_CORE_CONFIG": str(path), "LLM_CORE_DISCOVERY_CACHE": "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("page", ["docs/openai.md", "README.md", "plugins/openai/README.md"])
def test_the_endpoint_tables_of_the_docs_pass_the_config_check(page: str, endpoint_config: EndpointConfig) -> None:
    import re
    from pathlib import Path

    from llm_core.config_check import check_config

    text = (Path(__file__).resolve().parents[2] / page).read_text(encoding="utf-8")
    tables = [block for block in re.findall(r"```toml\n(.*?)```", text, re.DOTALL) if 'plugin = "openai"' in block]
    assert tables, page
    for block in tables:
        registry = endpoint_config(block)
        assert not registry.plugin_errors, registry.plugin_errors
        assert check_config(registry=registry) == []
