"""A real local Dask cluster (two worker processes): 1,000 items through pickled providers to the
loopback server, every result back exactly once and correct. The key reaches the workers through
their own environment, never through the pickle; an error a worker sends back holds no key either."""

from __future__ import annotations

import copyreg
import pickle
import secrets
from collections.abc import Iterator

import pytest

from llm_core.batch.distributed import run_item
from llm_core.config import Secret
from llm_core.errors import ProviderError
from tests.batch.batchkit import OPENAI_KEY, chats

ITEMS = 1000


@pytest.fixture
def dask_imported() -> Iterator[None]:
    """Importing distributed installs tblib's pickling for every exception class (copyreg), which
    would bypass LLMError's own key-free pickling in the rest of this test process: undone after."""
    saved = dict(copyreg.dispatch_table)
    yield
    copyreg.dispatch_table.clear()
    copyreg.dispatch_table.update(saved)


def test_pickled_provider_carries_settings_not_key(server, monkeypatch: pytest.MonkeyPatch) -> None:
    from core_openai_plugin.provider import OpenAIProvider

    provider = OpenAIProvider(api_key=OPENAI_KEY, base_url=server.url + "/v1", timeout=7)
    data = pickle.dumps(provider)
    assert OPENAI_KEY.encode() not in data
    monkeypatch.setenv("OPENAI_API_KEY", "sk-worker-own-key-987654")
    copy = pickle.loads(data)
    assert copy.api_key.reveal() == "sk-worker-own-key-987654"  # the unpickling side's own key
    assert (copy.base_url, copy.timeout, copy.default_model()) == (provider.base_url, 7.0, provider.default_model())
    assert copy.chat_completion("hi").content == "echo: hi"


def test_pickled_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_core.registry import Registry

    registry = Registry.discover()
    copy = pickle.loads(pickle.dumps(registry))
    assert [s.identifier for s in copy.providers()] == [s.identifier for s in registry.providers()]


def test_a_local_dask_cluster_runs_every_item_once(server, monkeypatch: pytest.MonkeyPatch, dask_imported) -> None:
    import dask
    from distributed import Client, LocalCluster, as_completed

    from core_openai_plugin.provider import OpenAIProvider

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # the workers' own environment
    provider = OpenAIProvider(base_url=server.url + "/v1", timeout=10)
    items = chats(ITEMS)
    with (
        # the profiler's sys._current_frames() every 10 ms can deadlock a worker on CPython before
        # 3.11.9 (gh-106883); the recipe in docs/batch.md turns it off the same way
        dask.config.set({"distributed.worker.profile.enabled": False}),
        LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        remote = client.scatter(provider, broadcast=True)
        futures = client.map(run_item, items, target=remote, pure=False)
        lines = [line for _, line in as_completed(futures, with_results=True, timeout=120)]
    ids = [line["custom_id"] for line in lines]
    assert sorted(ids) == sorted(item["custom_id"] for item in items)  # each exactly once
    for line in lines:
        assert line["ok"], line
        assert line["response"]["content"] == f"echo: q number {line['custom_id'][1:]}"
    assert server.single_calls == ITEMS


def test_an_error_sent_back_by_a_worker_holds_no_key(dask_imported) -> None:
    """distributed pickles a task's error with tblib's reducer (installed for every exception
    class on import, again per error), which takes the chained cause along; llm-core's own
    pickling is bypassed, so the chain must be free of keys by the time it is pickled."""
    import tblib.pickling_support
    from distributed.core import clean_exception, error_message

    tblib.pickling_support.install()  # what importing distributed does (distributed/utils.py)

    key = "sk-proj-" + secrets.token_hex(18)  # shaped like tests/security/canary.make_canary's
    held = Secret(key)  # the process knows the key, as a worker does from its environment
    try:
        try:
            raise RuntimeError(f"upstream said: Incorrect API key provided: {key}.")
        except RuntimeError as upstream:
            raise ProviderError("the call failed", provider="openai", status_code=401) from upstream
    except ProviderError as raised:
        error = raised
    plain = pickle.dumps(error)  # with tblib's reducer in place
    message = error_message(error)  # what a worker sends for a failed task
    sent = message["exception"].data
    for data in (plain, sent):
        assert key.encode() not in data
    assert key not in message["exception_text"] + message["traceback_text"]
    for data in (plain, sent):
        _, back, _ = clean_exception(exception=data)  # what the client raises
        assert type(back) is ProviderError
        assert (back.message, back.provider, back.status_code) == ("the call failed", "openai", 401)
        assert str(back) == str(error)
    assert held.reveal() == key
