"""registry.override(provider): every get(), select() and router of the block uses it; other
threads and asyncio tasks keep their own view."""

from __future__ import annotations

import asyncio
import threading

from llm_core.features import Feature
from llm_core.registry import Registry
from llm_core.testing import TestProvider, fake_spec


def _registry() -> Registry:
    registry = Registry(strict=False)
    registry.register(fake_spec("real"))
    return registry


def test_get_select_and_router_use_the_override() -> None:
    registry = _registry()
    stand_in = TestProvider(text="from the test")
    with registry.override(stand_in) as provider:
        assert provider is stand_in
        assert registry.get("real") is stand_in
        assert registry.get("anything-at-all", model="m") is stand_in
        selection = registry.select(Feature.VISION, Feature.EMBEDDINGS)
        assert selection.identifier == "test" and selection.provider() is stand_in
        assert "registry.override() is active" in selection.reasons
        assert registry.router(Feature.CHAT).chat_completion("hi").content == "from the test"
    assert registry.get("real").identifier == "real"
    assert registry.select(Feature.CHAT).identifier == "real"


def test_overrides_nest() -> None:
    registry = _registry()
    outer, inner = TestProvider(text="outer"), TestProvider(text="inner")
    with registry.override(outer):
        with registry.override(inner):
            assert registry.get("real") is inner
        assert registry.get("real") is outer


def test_other_threads_are_not_affected() -> None:
    registry = _registry()
    seen: list[str] = []
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait(5)
        seen.append(registry.get("real").identifier)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with registry.override(TestProvider()):
        inside.set()
        done.wait(5)
        assert registry.get("real").identifier == "test"
    thread.join(5)
    assert seen == ["real"]


def test_concurrent_tasks_each_keep_their_own_override() -> None:
    registry = _registry()

    async def task(text: str) -> list[str]:
        answers = []
        with registry.override(TestProvider(text=text)):
            for _ in range(3):
                await asyncio.sleep(0)
                answers.append((await registry.get("real").aio.chat_completion("q")).content)
        return answers

    async def both() -> list[list[str]]:
        return list(await asyncio.gather(task("A"), task("B")))

    assert asyncio.run(both()) == [["A", "A", "A"], ["B", "B", "B"]]
