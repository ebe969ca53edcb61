"""Plugins and observers cannot take a call down: an observer that raises anything (even
``SystemExit``) is logged and the call goes on, each observer hears its own copy of the event,
and a provider whose module or constructor fails is a ``PluginLoadError`` the router skips."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_core import PluginLoadError, ProviderSpec, Registry, StreamEventType, hookimpl
from llm_core.testing import FakeProvider, FakeReply, fake_spec


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self.events.append(event)


class Raising:
    """An observer raising ``error`` from every hook (after scribbling on its event)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def _fail(self, event: dict[str, Any]) -> None:
        event["provider"] = "tampered"
        event.get("features", []).append("tampered")
        raise self.error

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        self._fail(event)

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        self._fail(event)


@pytest.mark.parametrize("error", [RuntimeError("observer bug"), SystemExit(3), KeyError("x"), GeneratorExit()])
def test_an_observer_that_raises_anything_cannot_abort_a_call(
    registry: Registry, error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder()
    registry.add_observer(recorder)
    registry.add_observer(Raising(error))  # registered last: it hears every event first
    fake = FakeProvider(replies=[FakeReply(content="still fine")])
    assert fake.chat_completion("hi").content == "still fine"
    assert [e["provider"] for e in recorder.events] == ["fake", "fake"]  # its own, unchanged copy
    assert recorder.events[0]["features"] == ["chat"]
    assert "observer hook llm_core_before_request failed (observer Raising)" in caplog.text


def test_an_observer_that_raises_cannot_abort_a_stream(registry: Registry) -> None:
    registry.add_observer(Raising(SystemExit(1)))
    events = list(FakeProvider(replies=[FakeReply(content="a b")]).stream_chat_completion("hi"))
    assert "".join(e.text or "" for e in events) == "a b"
    assert [e.type for e in events[-2:]] == [StreamEventType.METADATA, StreamEventType.END]


def test_an_observer_that_raises_cannot_abort_an_async_call(registry: Registry) -> None:
    registry.add_observer(Raising(SystemExit(1)))
    fake = FakeProvider(replies=[FakeReply(content="async fine")])
    assert asyncio.run(fake.aio.chat_completion("hi")).content == "async fine"


def test_keyboard_interrupt_in_an_observer_still_stops_the_program(registry: Registry) -> None:
    registry.add_observer(Raising(KeyboardInterrupt()))
    fake = FakeProvider(replies=[FakeReply(content="never")])
    with pytest.raises(KeyboardInterrupt):
        fake.chat_completion("hi")
    assert fake.requests == []  # it was raised before the request went out


def _register(registry: Registry, identifier: str, factory: Any) -> None:
    spec = fake_spec(identifier)
    registry.register(
        ProviderSpec(
            spec.identifier,
            spec.name,
            spec.features,
            factory,
            spec.models,
            spec.default_model,
            requires_credentials=False,
        )
    )


def _broken_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    name = f"broken_provider_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:Provider"


@pytest.mark.parametrize(
    "body",
    [
        "raise RuntimeError('plugin bug at import')",
        "raise SystemExit('plugin exits at import')",
        "x = 1 / 0",
        "class Provider:\n    def __init__(self, **config):\n        raise ValueError('bad option')",
        "class Provider:\n    def __init__(self, **config):\n        raise SystemExit(2)",
    ],
)
def test_a_failing_provider_module_or_constructor_is_a_plugin_load_error(
    registry: Registry,
    register_fake: Callable[..., FakeProvider],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
) -> None:
    _register(registry, "broken", _broken_module(tmp_path, monkeypatch, body))
    with pytest.raises(PluginLoadError, match="cannot build provider 'broken'") as raised:
        registry.get("broken")
    assert raised.value.__cause__ is not None  # the plugin's own error, chained
    register_fake(registry, "healthy", FakeReply(content="from healthy"))
    router = registry.router("chat", prefer=["broken", "healthy"])
    response = router.chat_completion("hi")
    assert response.provider == "healthy"
    assert response.metadata["fallback_from"] == ["broken"]
    events = list(router.stream_chat_completion("hi"))
    assert events[-2].type is StreamEventType.METADATA


def test_a_constructor_that_raises_in_async_use_is_skipped_too(
    registry: Registry, register_fake: Callable[..., FakeProvider]
) -> None:
    def factory(**config: Any) -> FakeProvider:
        raise OSError("cannot read a file the plugin needs")

    _register(registry, "broken", factory)
    register_fake(registry, "healthy", FakeReply(content="async healthy"))
    router = registry.router("chat", prefer=["broken", "healthy"])
    assert asyncio.run(router.aio.chat_completion("hi")).content == "async healthy"
