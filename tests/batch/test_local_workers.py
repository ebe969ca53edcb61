"""Local mode's executor (``llm_core.batch.local.run_items``): every item once, never more than
``concurrency`` calls in flight, the input read only as fast as calls finish, a bug raised as it is."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from llm_core.batch.local import run_items
from llm_core.batch.types import ChatItem
from llm_core.errors import ProviderError


class CountingTarget:
    """A target whose async chat call counts the calls in flight (and fails where told)."""

    def __init__(self, fail_on: str | None = None, bug_on: str | None = None) -> None:
        self.in_flight = 0
        self.most = 0
        self.fail_on, self.bug_on = fail_on, bug_on
        self.aio = SimpleNamespace(chat_completion=self._chat)

    async def _chat(self, messages: str, **_options: Any) -> Any:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.001 * (len(messages) % 3))  # calls finish out of order
            if messages == self.fail_on:
                raise ProviderError("the server said no", provider="test")
            if messages == self.bug_on:
                raise RuntimeError("a bug")
            return SimpleNamespace(content=messages.upper(), usage=None)
        finally:
            self.in_flight -= 1


def _items(count: int, read: list[int]) -> Iterator[tuple[ChatItem, str]]:
    for number in range(count):
        read.append(number)
        yield ChatItem(custom_id=f"id-{number}", messages=f"q{number}" + "x" * number), "{}"


def test_every_item_once_at_most_concurrency_in_flight_input_read_as_calls_finish() -> None:
    target = CountingTarget(fail_on="q7" + "x" * 7)
    read: list[int] = []
    results: dict[str, Any] = {}
    read_when_done: list[int] = []

    def on_result(item: ChatItem, result: Any) -> None:
        assert item.custom_id not in results
        results[item.custom_id] = result
        read_when_done.append(len(read))

    asyncio.run(run_items(target, _items(200, read), on_result, concurrency=8))
    assert sorted(results) == sorted(f"id-{n}" for n in range(200))
    assert target.most == 8
    assert isinstance(results["id-7"], ProviderError)  # one item's failure is that item's result
    assert results["id-3"].content == "Q3XXX"
    # flat memory: when the k-th result arrives, at most k + concurrency items have been read
    assert all(count <= k + 8 for k, count in enumerate(read_when_done, 1))


def test_a_bug_raises_as_it_is_and_leaves_no_call_running() -> None:
    target = CountingTarget(bug_on="q5" + "x" * 5)
    read: list[int] = []
    with pytest.raises(RuntimeError, match="a bug"):
        asyncio.run(run_items(target, _items(100, read), lambda _item, _result: None, concurrency=4))
    assert target.in_flight == 0
    assert len(read) < 100  # it stopped taking items
