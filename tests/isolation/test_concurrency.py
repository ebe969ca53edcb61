"""The registry, the providers and the router under concurrency: 32 threads selecting and calling
at once, and 500 concurrent async calls. Every answer echoes its own prompt, so a result that
crossed to another call, a lost call or corrupted shared state shows up."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from llm_core.errors import ServerError
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.streaming import StreamEventType
from llm_core.testing import FakeProvider, FakeReply, fake_spec
from tests.reliability.fault_fixtures import AttemptCounter
from tests.reliability.fault_server import FaultServer
from tests.reliability.fault_targets import GEMINI, OPENAI, Target

THREADS = 32
PER_THREAD = 12
ASYNC_CALLS = 500


def _shared_fake(registry: Registry, identifier: str, cls: type[FakeProvider] = FakeProvider) -> FakeProvider:
    spec = fake_spec(identifier)
    instance = cls(spec=spec, retry=RetryPolicy.none(), default_reply=None)
    registry.register(
        ProviderSpec(spec.identifier, spec.name, spec.features, lambda **_: instance, spec.models,
                     spec.default_model, requires_credentials=False)
    )
    return instance


def _in_threads(work: Callable[[int], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """Run ``work(thread_index)`` in 32 threads released together; (asked, answered) pairs."""
    barrier = threading.Barrier(THREADS)

    def run(index: int) -> list[tuple[str, str]]:
        barrier.wait(timeout=30)
        return work(index)

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(run, range(THREADS), timeout=120))
    return [pair for chunk in results for pair in chunk]


def _ask(provider: Any, prompt: str, *, stream: bool) -> str:
    if stream:
        return "".join(provider.stream_text(prompt))
    return str(provider.chat_completion(prompt).content)


def _assert_echoed(pairs: list[tuple[str, str]], expected: int) -> None:
    assert len(pairs) == expected
    crossed = [(asked, answered) for asked, answered in pairs if answered != f"echo: {asked}"]
    assert crossed == [], f"results crossed between calls: {crossed[:5]}"
    assert len({asked for asked, _ in pairs}) == expected, "every prompt was unique"


def test_32_threads_select_register_and_call(attempts: AttemptCounter) -> None:
    registry = Registry(strict=False)
    fakes = {name: _shared_fake(registry, name) for name in ("fake-a", "fake-b", "fake-c")}
    features = [("chat",), ("chat", "streaming"), ("vision", "tools"), ("decision",), ("embeddings",)]

    def work(thread: int) -> list[tuple[str, str]]:
        pairs = []
        for i in range(PER_THREAD):
            prompt = f"thread {thread} call {i}"
            chosen = registry.select(*features[(thread + i) % len(features)], prefer=[f"fake-{'abc'[i % 3]}"])
            provider = registry.get(chosen.identifier)
            answer = _ask(provider, prompt, stream=bool(i % 2))
            pairs.append((prompt, answer))
            if thread % 8 == 0:  # some threads register providers while the others select
                registry.register(fake_spec(f"extra-{thread}-{i}"))
            assert registry.supporting("chat")
        return pairs

    pairs = _in_threads(work)
    _assert_echoed(pairs, THREADS * PER_THREAD)
    extras = {s.identifier for s in registry.providers() if s.identifier.startswith("extra-")}
    assert len(extras) == (THREADS // 8) * PER_THREAD, "no registration was lost"
    assert sum(len(f.requests) for f in fakes.values()) == THREADS * PER_THREAD
    served = Counter(r["last_user"] for f in fakes.values() for r in f.requests)
    assert set(served.values()) == {1}, "each call reached exactly one provider once"
    first_attempts = [e["call_id"] for e in attempts.before if e.get("attempt") == 1]
    assert len(first_attempts) == len(set(first_attempts)) == THREADS * PER_THREAD, "observer call ids are unique"


@pytest.fixture(scope="module")
def upstreams() -> Iterator[dict[str, FaultServer]]:
    servers = {target.name: FaultServer(target.upstream).start() for target in (GEMINI, OPENAI)}
    yield servers
    for server in servers.values():
        server.close()


@pytest.fixture
def plugin_registry(upstreams: dict[str, FaultServer], monkeypatch: pytest.MonkeyPatch) -> Registry:
    """Both real plugins, configured from the environment as users do, shared instances."""
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", upstreams["gemini"].url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", upstreams["openai"].url + "/v1")
    registry = Registry(strict=False)
    for target in (GEMINI, OPENAI):
        if not target.installed:
            pytest.fail(f"plugin {target.name} is not installed")
        registry.register(target.provider_class().spec)  # type: ignore[arg-type]
    return registry


def test_32_threads_through_the_real_plugins(plugin_registry: Registry) -> None:
    built: list[int] = []

    def work(thread: int) -> list[tuple[str, str]]:
        pairs = []
        for i in range(4):
            name = ("gemini", "openai")[(thread + i) % 2]
            provider = plugin_registry.get(name)
            built.append(id(provider))
            prompt = f"{name} thread {thread} call {i}"
            answer = _ask(provider, prompt, stream=bool(i % 2))
            pairs.append((prompt, answer))
        return pairs

    pairs = _in_threads(work)
    _assert_echoed(pairs, THREADS * 4)
    assert len(set(built)) == 2, "one shared provider per identifier, built once"


async def test_500_concurrent_async_calls_on_the_fake() -> None:
    fake = FakeProvider(retry=RetryPolicy.none(), default_reply=None)
    prompts = [f"async call {i}" for i in range(ASYNC_CALLS)]
    responses = await asyncio.gather(*(fake.aio.chat_completion(p) for p in prompts))
    _assert_echoed([(p, r.content) for p, r in zip(prompts, responses, strict=True)], ASYNC_CALLS)
    assert len(fake.requests) == ASYNC_CALLS


@pytest.mark.parametrize("target", [GEMINI, OPENAI], ids=["gemini", "openai"])
async def test_500_concurrent_async_calls_through_a_plugin(
    target: Target, plugin_registry: Registry, upstreams: dict[str, FaultServer]
) -> None:
    provider = plugin_registry.get(target.name)
    server = upstreams[target.name]
    before = server.count
    prompts = [f"{target.name} async {i}" for i in range(ASYNC_CALLS)]
    streamed = prompts[:50]

    async def stream(prompt: str) -> str:
        parts = [e.text or "" async for e in provider.aio.stream_chat_completion(prompt)
                 if e.type is StreamEventType.TOKEN]
        return "".join(parts)

    answers = await asyncio.gather(
        *(provider.aio.chat_completion(p) for p in prompts[50:]), *(stream(p) for p in streamed)
    )
    texts = [a if isinstance(a, str) else str(getattr(a, "content", a)) for a in answers]
    _assert_echoed(list(zip(prompts[50:] + streamed, texts, strict=True)), ASYNC_CALLS)
    assert server.count - before == ASYNC_CALLS, "exactly one request per call"


class Flaky(FakeProvider):
    """Fails (server error) every call whose prompt says so."""

    def _send_chat(self, payload: dict[str, Any]) -> FakeReply:
        if "fail" in payload["last_user"]:
            self._next("chat", payload)
            raise ServerError("flaky", provider=self.identifier, status_code=503)
        return super()._send_chat(payload)

    async def _asend_chat(self, payload: dict[str, Any]) -> FakeReply:
        await asyncio.sleep(0)
        return self._send_chat(payload)


async def test_500_concurrent_router_calls_report_their_own_provider() -> None:
    registry = Registry(strict=False)
    flaky = _shared_fake(registry, "flaky", Flaky)
    steady = _shared_fake(registry, "steady")
    router = registry.router("chat", prefer=["flaky", "steady"])
    prompts = [f"{'fail' if i % 3 == 0 else 'ok'} {i}" for i in range(ASYNC_CALLS)]
    responses = await asyncio.gather(*(router.aio.chat_completion(p) for p in prompts))
    for prompt, response in zip(prompts, responses, strict=True):
        assert response.content == f"echo: {prompt}"
        fails = prompt.startswith("fail")
        assert response.provider == ("steady" if fails else "flaky")
        assert response.metadata["answered_by"] == response.provider
        assert response.metadata["fallback_from"] == (["flaky"] if fails else [])
    assert len(flaky.requests) == ASYNC_CALLS
    assert len(steady.requests) == sum(p.startswith("fail") for p in prompts)
