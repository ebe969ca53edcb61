"""Observers shipped by plugin distributions (entry points), and the built-in logging observer."""

from __future__ import annotations

import logging
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from llm_core.errors import ServerError
from llm_core.observe import observers
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.testing import FakeProvider, FakeReply

KEY = "sk-logged-never-0123456789"

METER_PLUGIN = """
from llm_core import hookimpl

TOKENS = []


@hookimpl
def llm_core_after_response(event):
    if event["usage"]:
        TOKENS.append((event["provider"], event["usage"]["total_tokens"]))
"""


def test_a_plugin_distribution_can_observe_every_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "meter_plugin.py").write_text(textwrap.dedent(METER_PLUGIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint(name="meter", value="meter_plugin", group="llm_core")
    registry = Registry.discover(entry_points=[point])
    assert [p.distribution for p in registry.plugins] == ["meter_plugin"]
    assert not observers.active()  # a registry's observers hear calls once installed
    registry.install_observers()
    assert observers.active()
    FakeProvider(replies=[FakeReply(content="one two three")]).chat_completion("count")
    import meter_plugin  # type: ignore[import-not-found]

    assert meter_plugin.TOKENS == [("fake", 4)]  # 1 prompt message + 3 words


def test_the_logging_observer_is_silent_unless_debug(caplog: pytest.LogCaptureFixture) -> None:
    Registry.discover(entry_points=[]).install_observers()
    with caplog.at_level(logging.INFO, logger="llm_core.calls"):
        assert not observers.active()
        FakeProvider(replies=[FakeReply(content="hi")]).chat_completion("hello")
    assert caplog.records == []


def test_the_logging_observer_logs_each_call_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    Registry.discover(entry_points=[]).install_observers()
    provider = FakeProvider(
        replies=[FakeReply(error=ServerError("busy")), FakeReply(content="hi")],
        api_key=KEY,
        retry=RetryPolicy(max_attempts=2, initial_delay=0, jitter=0, sleep=lambda _: None),
    )
    with caplog.at_level(logging.DEBUG, logger="llm_core.calls"):
        provider.chat_completion("hello", thinking=True)
    lines = [r.getMessage() for r in caplog.records]
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    assert len(lines) == 4
    assert "fake chat model=fake-model attempt=1 features=['chat', 'thinking']" in lines[0]
    assert "attempt 1 failed with ServerError: busy (retry: True)" in lines[1]
    assert "attempt=2" in lines[2]
    assert "fake answered in" in lines[3] and "after 2 attempt(s)" in lines[3]
    assert all(KEY not in line for line in lines)
