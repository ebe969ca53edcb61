"""Fixtures of the OpenAI plugin tests: an isolated environment and a cassette player that runs
each scenario through the real SDK, sync and async."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from llm_core.testing.cassettes import record_mode, use_cassette
from tests.openai.openai_scenarios import CASSETTES, SCENARIOS, Sleeps, make_provider

ENV = ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "LLM_CORE_CONFIG", "LLM_CORE_PREFER")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    if record_mode() == "none":
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


class Player:
    """Plays a scenario's cassette with the scenario's call (or another call sending the same
    requests) against ``provider`` (sync) or ``provider.aio`` (async)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sleeps = Sleeps()
        self.provider: Any = None
        self.cassette: Any = None

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    async def play(self, name: str, call: Any = None, **options: Any) -> Any:
        scenario = SCENARIOS[name]
        self.provider = make_provider(self.sleeps, **{**scenario.options, **options})
        target = self.provider.aio if self.is_async else self.provider
        mode = "none" if scenario.authored_only else None
        with use_cassette(CASSETTES / f"{name}.json", mode=mode) as cassette:
            self.cassette = cassette
            result = (call or scenario.call)(target)
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, Iterator):
                result = list(result)
            elif isinstance(result, AsyncIterator):
                result = [item async for item in result]
        assert cassette.all_played, f"{name}: not every recorded request was sent"
        return result

    async def invoke(self, call: Any, **options: Any) -> Any:
        """Run ``call`` on a fresh provider (no cassette): for checks made before any request."""
        self.provider = make_provider(self.sleeps, **options)
        result = call(self.provider.aio if self.is_async else self.provider)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, Iterator):
            result = list(result)
        elif isinstance(result, AsyncIterator):
            result = [item async for item in result]
        return result

    def sent(self, index: int = 0) -> Any:
        """The JSON body of recorded request ``index`` (the matcher proved the real one equal)."""
        return json.loads(self.cassette.requests[index].body)

    def stream_events(self, index: int = 0) -> list[Any]:
        """The recorded server-sent events of answer ``index``."""
        text = self.cassette.responses[index]["body"]["string"]
        text = text.decode() if isinstance(text, bytes) else text
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    def answered_stream_item(self, prefix: str, index: int = 0) -> Any:
        """The completed output item (``response.output_item.done``) whose id starts with ``prefix``."""
        for event in self.stream_events(index):
            if event["type"] == "response.output_item.done" and event["item"]["id"].startswith(prefix):
                return event["item"]
        raise LookupError(prefix)

    def answered(self, index: int = 0) -> Any:
        """The recorded JSON answer ``index``."""
        return json.loads(self.cassette.responses[index]["body"]["string"])


@pytest.fixture(params=["sync", "async"])
def player(request: pytest.FixtureRequest) -> Player:
    return Player(request.param)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[httpx2.Request]:
    """Fail the test if anything is sent (checks that run before a request)."""
    sent: list[httpx2.Request] = []

    def refuse(self: Any, request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        raise AssertionError(f"unexpected request {request.method} {request.url}")

    async def arefuse(self: Any, request: httpx2.Request) -> httpx2.Response:
        return refuse(self, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", refuse)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", arefuse)
    return sent
