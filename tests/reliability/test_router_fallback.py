"""The router falls back to the next capable provider when one is exhausted, and says which
answered; it never falls back on a bad request, nor once a stream delivered tokens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from llm_core.errors import (
    AuthenticationError,
    InvalidRequestError,
    LLMError,
    ProviderConnectionError,
    RateLimitError,
    ServerError,
)
from llm_core.features import Feature
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.routing import FallbackExhaustedError, Router
from llm_core.streaming import StreamEvent, StreamEventType
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from tests.reliability.fault_fixtures import Rig, Sleeps
from tests.reliability.fault_scenarios import PIECES, TEXT
from tests.reliability.fault_server import Behaviour, FaultServer, closed_port_url, reset
from tests.reliability.fault_targets import Target


@dataclass
class Side:
    """One provider of the router under test, with its own fault server (or fake)."""

    name: str
    target: Target | None
    server: FaultServer | None
    fake: FakeProvider | None = None
    rig: Rig | None = None
    policy: RetryPolicy | None = None
    refused: bool = False
    keyless: bool = False

    def build(self, **config: Any) -> Any:
        """The router's factory for this side (config comes from the registry)."""
        if self.fake is not None:
            if self.keyless:  # a provider that needs a key nobody set
                return FakeProvider(spec=fake_spec(self.name, requires_credentials=True,
                                                   credential_env=("ROUTER_TEST_UNSET_KEY",)))
            return self.fake
        assert self.rig is not None and self.policy is not None and self.target is not None
        if self.keyless:
            return self.target.provider_class()(base_url=self.rig.server.url + self.target.base_suffix)
        base = closed_port_url() if self.refused else None
        return self.rig.provider(retry=self.policy, base_url=base)

    def fault(self, kind: str) -> None:
        """Make every attempt of this provider fail with ``kind``."""
        if self.fake is not None:
            errors: dict[str, Callable[[], LLMError]] = {
                "503": lambda: ServerError("busy", provider=self.name, status_code=503),
                "429": lambda: RateLimitError("quota", provider=self.name, retry_after=1.0),
                "reset": lambda: ProviderConnectionError("reset", provider=self.name),
                "400": lambda: InvalidRequestError("bad", provider=self.name, status_code=400),
                "401": lambda: AuthenticationError("key", provider=self.name, status_code=401),
            }
            self.fake.script(*[FakeReply(error=errors[kind]()) for _ in range(3)])
            return
        assert self.target is not None and self.server is not None
        target = self.target
        make: dict[str, Callable[[], Behaviour]] = {
            "503": lambda: target.status(503),
            "429": lambda: target.status(429, headers={"Retry-After": "1"}),
            "reset": reset,
            "400": lambda: target.status(400),
            "401": lambda: target.status(401),
        }
        self.server.script(*[make[kind]() for _ in range(3)])

    def stream_cut(self) -> None:
        if self.fake is not None:
            self.fake.script(
                FakeReply(content=TEXT, stream_error=ProviderConnectionError("cut", provider=self.name),
                          stream_error_after=2)
            )
            return
        assert self.target is not None and self.server is not None
        self.server.script(self.target.stream_cut(PIECES, 2))

    @property
    def count(self) -> int:
        if self.fake is not None:
            return len(self.fake.requests)
        assert self.server is not None
        return self.server.count


PAIRS = [("gemini", "openai"), ("openai", "gemini"), ("fake-a", "fake-b")]
pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(params=PAIRS, ids=["gemini>openai", "openai>gemini", "fake>fake"])
def pair(request: pytest.FixtureRequest, sleeps: Sleeps, rigs: dict[str, Rig]) -> tuple[Router, Side, Side]:
    first, second = request.param
    registry = Registry(strict=False)
    sides: list[Side] = []
    for name in (first, second):
        if name.startswith("fake"):
            side = Side(name, None, None, FakeProvider(spec=fake_spec(name), retry=sleeps.policy()))
            spec = fake_spec(name)
        else:
            if name not in rigs:
                pytest.fail(f"plugin {name} is not installed")
            rig = rigs[name]
            side = Side(name, rig.target, rig.reset(), rig=rig, policy=sleeps.policy())
            rig.server.fallback = rig.target.upstream
            spec = rig.target.provider_class().spec
        registry.register(
            type(spec)(spec.identifier, spec.name, spec.features, side.build, spec.models, spec.default_model,
                       requires_credentials=False)
        )
        sides.append(side)
    return registry.router(Feature.CHAT, prefer=[first, second]), sides[0], sides[1]


async def _chat(router: Router, mode: str) -> Any:
    if mode == "sync":
        return router.chat_completion("Tell me a story.")
    return await router.aio.chat_completion("Tell me a story.")


async def _stream(router: Router, mode: str) -> list[StreamEvent]:
    if mode == "sync":
        return list(router.stream_chat_completion("Tell me a story."))
    return [e async for e in router.aio.stream_chat_completion("Tell me a story.")]


MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["503", "429", "reset"])
async def test_exhausted_provider_falls_back_and_reports_who_answered(
    pair: tuple[Router, Side, Side], kind: str, mode: str, sleeps: Sleeps
) -> None:
    router, first, second = pair
    first.fault(kind)
    response = await _chat(router, mode)
    assert response.provider == second.name
    assert response.metadata["answered_by"] == second.name
    assert response.metadata["fallback_from"] == [first.name]
    assert router.last_provider == second.name
    assert first.count == 3, "the first provider's retries were used up before falling back"
    assert second.count == 1
    assert len(sleeps.waits) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_connection_refused_falls_back(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    if first.server is None:
        first.fault("reset")
    else:
        first.refused = True
    response = await _chat(router, mode)
    assert response.provider == second.name
    assert response.metadata["fallback_from"] == [first.name]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("kind", "error"), [("400", InvalidRequestError), ("401", AuthenticationError)])
async def test_bad_request_is_not_sent_elsewhere(
    pair: tuple[Router, Side, Side], kind: str, error: type[LLMError], mode: str
) -> None:
    router, first, second = pair
    first.fault(kind)
    with pytest.raises(error) as caught:
        await _chat(router, mode)
    assert caught.value.provider == first.name
    assert first.count == 1, "a client error is never retried"
    assert second.count == 0, "a client error would fail everywhere: no fallback"


@pytest.mark.parametrize("mode", MODES)
async def test_all_exhausted_names_every_failure(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    first.fault("503")
    second.fault("429")
    with pytest.raises(FallbackExhaustedError) as caught:
        await _chat(router, mode)
    errors = caught.value.errors
    assert list(errors) == [first.name, second.name]
    assert isinstance(errors[first.name], ServerError)
    assert isinstance(errors[second.name], RateLimitError)
    assert first.count == 3 and second.count == 3
    assert first.name in str(caught.value) and second.name in str(caught.value)


@pytest.mark.parametrize("mode", MODES)
async def test_missing_key_falls_back(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    first.keyless = True
    response = await _chat(router, mode)
    assert response.provider == second.name
    assert first.count == 0


@pytest.mark.parametrize("mode", MODES)
async def test_stream_falls_back_before_the_first_token(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    first.fault("503")
    events = await _stream(router, mode)
    kinds = [e.type for e in events]
    assert kinds == [StreamEventType.TOKEN] * (len(kinds) - 2) + [StreamEventType.METADATA, StreamEventType.END]
    assert "".join(e.text or "" for e in events if e.type is StreamEventType.TOKEN).startswith("echo: ")
    meta = events[-2].metadata
    assert meta is not None and meta.provider == second.name
    assert meta.extra["fallback_from"] == [first.name]
    assert router.last_provider == second.name
    assert first.count == 3 and second.count == 1


@pytest.mark.parametrize("mode", MODES)
async def test_stream_never_falls_back_after_tokens(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    first.stream_cut()
    events = await _stream(router, mode)
    kinds = [e.type for e in events]
    assert kinds == [StreamEventType.TOKEN, StreamEventType.TOKEN, StreamEventType.ERROR, StreamEventType.END]
    assert isinstance(events[2].error, ProviderConnectionError)
    assert first.count == 1, "no silent retry once tokens were delivered"
    assert second.count == 0, "no fallback once tokens were delivered"


@pytest.mark.parametrize("mode", MODES)
async def test_stream_all_exhausted_ends_with_error_then_end(pair: tuple[Router, Side, Side], mode: str) -> None:
    router, first, second = pair
    first.fault("503")
    second.fault("503")
    events = await _stream(router, mode)
    kinds = [e.type for e in events]
    assert kinds == [StreamEventType.ERROR, StreamEventType.END]
    error = events[0].error
    assert isinstance(error, FallbackExhaustedError), f"{type(error).__name__}: {error}"
    assert list(error.errors) == [first.name, second.name], "like chat_completion, every failure is named"
    assert first.count == 3 and second.count == 3

