"""A provider unpickles wherever it is delivered, key or no key: a Dask worker deserialises every
task's arguments before running it, so a missing key must not fail there. The key (never in the
pickle) is resolved by the unpickling process, at the first call if it had none when unpickled;
that call raises the missing key's ConfigurationError when there is still none."""

from __future__ import annotations

import pickle
import threading

import pytest

from llm_core.errors import ConfigurationError
from llm_core.streaming import StreamEventType
from llm_core.testing import FakeProvider, fake_spec

KEY = "sk-pickled-parent-key-0001"
WORKER_KEY = "sk-worker-own-key-0002"
VARIABLE = "FAKE_PICKLE_KEY"


@pytest.fixture
def data(monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A pickled provider that needs a key, made where one is given; none is set afterwards."""
    monkeypatch.delenv(VARIABLE, raising=False)
    spec = fake_spec("keyed", requires_credentials=True, credential_env=(VARIABLE,))
    provider = FakeProvider(spec=spec, api_key=KEY, timeout=7)
    pickled = pickle.dumps(provider)
    assert KEY.encode() not in pickled
    return pickled


def test_unpickling_without_a_key_succeeds(data: bytes) -> None:
    copy = pickle.loads(data)
    assert copy.api_key is None
    assert not copy.is_available()
    assert copy.timeout == 7.0


def test_the_first_call_raises_the_missing_key(data: bytes) -> None:
    copy = pickle.loads(data)
    with pytest.raises(ConfigurationError, match=VARIABLE):
        copy.chat_completion("hi")
    with pytest.raises(ConfigurationError, match=VARIABLE):
        copy.stream_chat_completion("hi")  # at the call, as any other setting error
    with pytest.raises(ConfigurationError, match=VARIABLE):
        copy.available_models()
    assert copy.requests == []  # nothing was sent


async def test_the_first_async_call_raises_the_missing_key(data: bytes) -> None:
    copy = pickle.loads(data)
    with pytest.raises(ConfigurationError, match=VARIABLE):
        await copy.aio.chat_completion("hi")
    with pytest.raises(ConfigurationError, match=VARIABLE):
        await copy.aio.available_models()


def test_a_key_set_after_unpickling_is_used_at_the_first_call(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = pickle.loads(data)
    monkeypatch.setenv(VARIABLE, WORKER_KEY)
    assert copy.chat_completion("hi").content == "echo: hi"
    assert copy.api_key.reveal() == WORKER_KEY
    events = list(copy.stream_chat_completion("again"))
    assert events[-1].type is StreamEventType.END


def test_a_key_present_at_unpickling_is_resolved_there(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, WORKER_KEY)
    copy = pickle.loads(data)
    assert copy.api_key.reveal() == WORKER_KEY
    assert copy.is_available()


def test_a_late_key_is_resolved_once_by_concurrent_first_calls(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = pickle.loads(data)
    monkeypatch.setenv(VARIABLE, WORKER_KEY)
    resets = []
    original = copy._reset_clients
    copy._reset_clients = lambda: (resets.append(1), original())[1]
    start = threading.Barrier(8)
    answers: list[str] = []

    def call() -> None:
        start.wait()
        answers.append(copy.chat_completion("hi").content)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert answers == ["echo: hi"] * 8
    assert len(resets) == 1  # the clients a call uses are never reset under it by another


def test_building_without_a_key_still_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only unpickling defers the missing key: a provider built in code fails where it is built."""
    monkeypatch.delenv(VARIABLE, raising=False)
    spec = fake_spec("keyed", requires_credentials=True, credential_env=(VARIABLE,))
    with pytest.raises(ConfigurationError, match=VARIABLE):
        FakeProvider(spec=spec)


def test_a_real_plugin_unpickles_without_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from core_openai_plugin.provider import OpenAIProvider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = pickle.dumps(OpenAIProvider(api_key=KEY, timeout=7))
    copy = pickle.loads(data)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        copy.chat_completion("hi")


def test_a_late_key_still_meets_the_endpoint_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key found at the first call goes through the same checks as one found at construction:
    no key is ever sent over plain http to another machine."""
    from core_openai_plugin.provider import OpenAIProvider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = pickle.dumps(OpenAIProvider(api_key=KEY, base_url="https://api.example.test/v1"))
    data = data.replace(b"https://api.example.test/v1", b"http://api.example.test/v1/")  # as if configured so
    copy = pickle.loads(data)  # no key: nothing to protect yet
    monkeypatch.setenv("OPENAI_API_KEY", WORKER_KEY)
    with pytest.raises(ConfigurationError, match="http"):
        copy.chat_completion("hi")
