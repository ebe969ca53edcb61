"""A router pickles by its settings (registry specs, features, preference, per-provider settings,
fallback rule), never with its providers, their clients or a key: the unpickling side builds its
own providers, each with the key of its own environment (docs/batch.md)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from llm_core.pricing import Prices
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.routing import Router, should_fall_back
from llm_core.specs import ModelInfo
from llm_core.testing import fake_spec
from llm_core.testing.fake import ALL_FEATURES

PARENT_KEY = "sk-parent-environment-0001"
CONFIG_KEY = "sk-router-config-0002"
WORKER_KEY = "sk-worker-environment-0003"


@pytest.fixture
def router(monkeypatch: pytest.MonkeyPatch) -> Router:
    """ "a" needs a key (FAKE_A_KEY, set here; the router's settings give it another one), "b" none."""
    monkeypatch.setenv("FAKE_A_KEY", PARENT_KEY)
    registry = Registry()
    registry.register(fake_spec("a", requires_credentials=True, credential_env=("FAKE_A_KEY",)))
    registry.register(fake_spec("b"))
    settings = {"api_key": CONFIG_KEY, "timeout": 7, "retry": RetryPolicy(max_attempts=5, jitter=0.0)}
    router = registry.router("chat", prefer=["a", "b"], a=settings)
    assert router.chat_completion("hi").provider == "a"  # its provider (and client) is built
    return router


def test_a_router_pickles_without_providers_or_keys(router: Router, monkeypatch: pytest.MonkeyPatch) -> None:
    data = pickle.dumps(router)
    for key in (PARENT_KEY, CONFIG_KEY):
        assert key.encode() not in data
    monkeypatch.setenv("FAKE_A_KEY", WORKER_KEY)  # the unpickling side's own environment
    copy = pickle.loads(data)
    assert copy._built == {}  # nothing built travelled
    assert (copy.features, copy.prefer, copy.fall_back) == (router.features, ["a", "b"], should_fall_back)
    assert [s.identifier for s in copy.registry.providers()] == ["a", "b"]
    response = copy.chat_completion("hi")
    assert (response.provider, response.content) == ("a", "echo: hi")
    built = copy._built["a"]
    assert built.api_key is not None and built.api_key.reveal() == WORKER_KEY
    assert (built.timeout, built.retry_policy) == (7.0, RetryPolicy(max_attempts=5, jitter=0.0))
    assert copy.aio._r is copy


def test_a_worker_without_the_key_uses_the_next_provider(router: Router, monkeypatch: pytest.MonkeyPatch) -> None:
    data = pickle.dumps(router)
    monkeypatch.delenv("FAKE_A_KEY")
    response = pickle.loads(data).chat_completion("hi")
    assert (response.provider, response.metadata["fallback_from"]) == ("b", [])  # "a" ranks last unkeyed


def test_a_pickled_router_answers_in_another_process(router: Router, tmp_path: Path) -> None:
    """A plain pickle (no Dask) loaded by a fresh interpreter whose environment holds its own key."""
    (tmp_path / "router.pickle").write_bytes(pickle.dumps(router))
    script = (
        "import pickle, sys\n"
        "router = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "response = router.chat_completion('from afar')\n"
        "print(response.provider, response.content, router._built['a'].api_key.reveal() == sys.argv[2])\n"
    )
    env = {**os.environ, "FAKE_A_KEY": WORKER_KEY, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "router.pickle"), WORKER_KEY],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["a", "echo:", "from", "afar", "True"]


def test_a_cheapest_router_keeps_its_prices_across_a_pickle() -> None:
    """Catalogue prices travel with the specs, so the copy ranks by cost as the original does."""
    registry = Registry()
    for name, output in (("dear", "10"), ("cheap", "1")):
        model = ModelInfo(f"{name}-model", ALL_FEATURES, prices=Prices.of(input="1", output=output))
        registry.register(fake_spec(name, models=[model]))
    router = registry.router("chat", prefer="cheapest")
    copy = pickle.loads(pickle.dumps(router))
    ranked = copy.candidates("chat_completion", (("hi",), {}))
    assert [(c.identifier, c.expected_cost is not None) for c in ranked] == [("cheap", True), ("dear", True)]
