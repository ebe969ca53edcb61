"""A key is known to redaction exactly as long as some ``Secret`` holding it lives.

Secrets compare and hash by value, so two of them holding one key must still count as two
holders: the key stays known while either lives, and is forgotten once both are gone.
"""

from __future__ import annotations

import gc
import pickle
import secrets
from typing import Any

import pytest

from llm_core.config import Secret
from llm_core.errors import LLMError
from llm_core.redaction import known_values
from llm_core.testing import FakeProvider


def _fresh_key() -> str:
    return f"sk-lifetime-{secrets.token_hex(16)}"


class QuotingProvider(FakeProvider):
    """An upstream that rejects the key and quotes it back in its error (as some gateways do)."""

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        assert self.api_key is not None
        raise RuntimeError(f"401 invalid api key {self.api_key.reveal()!r}")


def _leaks(error: BaseException, key: str) -> list[str]:
    """Where ``key`` shows in ``error``: its text, its repr, its pickle, its chain's text."""
    found = []
    chain: list[BaseException] = []
    link: BaseException | None = error
    while link is not None and len(chain) < 16:
        chain.append(link)
        link = link.__cause__ or link.__context__
    for index, item in enumerate(chain):
        if key in str(item) or key in repr(item) or key in repr(item.args):
            found.append(f"text of link {index} ({type(item).__name__})")
    if key.encode() in pickle.dumps(error):
        found.append("pickle")
    return found


def test_a_second_secret_of_the_same_key_keeps_it_known() -> None:
    key = _fresh_key()
    first = Secret(key)
    second = Secret(key)
    assert first == second  # equal by value: exactly the case a value-keyed set got wrong
    del first
    gc.collect()
    assert key in known_values()
    del second
    gc.collect()
    assert key not in known_values()


def test_many_holders_of_one_key_count_one_by_one() -> None:
    key = _fresh_key()
    holders = [Secret(key) for _ in range(5)]
    while holders:
        assert key in known_values()
        holders.pop(0)
        gc.collect()
    assert key not in known_values()


def test_configure_with_the_same_key_keeps_it_known() -> None:
    key = _fresh_key()
    provider = FakeProvider(api_key=key)
    provider.configure({"api_key": key})  # the first Secret is replaced by an equal one
    gc.collect()
    assert key in known_values()


def test_a_key_quoted_back_after_configure_is_redacted() -> None:
    key = _fresh_key()
    provider = QuotingProvider(api_key=key, retry={"max_attempts": 1})
    provider.configure({"api_key": key})
    gc.collect()
    with pytest.raises(LLMError) as caught:
        provider.chat_completion("hi")
    assert _leaks(caught.value, key) == []


def test_a_key_quoted_back_after_an_equal_secret_died_is_redacted() -> None:
    key = _fresh_key()
    first = Secret(key)
    provider = QuotingProvider(api_key=Secret(key), retry={"max_attempts": 1})
    del first
    gc.collect()
    with pytest.raises(LLMError) as caught:
        provider.chat_completion("hi")
    assert "invalid api key" in str(caught.value)  # the upstream's text is kept, the key is not
    assert _leaks(caught.value, key) == []


async def test_a_key_quoted_back_on_the_async_path_is_redacted() -> None:
    key = _fresh_key()

    class AsyncQuoting(FakeProvider):
        async def _asend_chat(self, payload: dict[str, Any]) -> Any:
            assert self.api_key is not None
            raise RuntimeError(f"401 invalid api key {self.api_key.reveal()}")

    provider = AsyncQuoting(api_key=key, retry={"max_attempts": 1})
    provider.configure({"api_key": key})
    gc.collect()
    with pytest.raises(LLMError) as caught:
        await provider.aio.chat_completion("hi")
    assert _leaks(caught.value, key) == []
