"""RetryPolicy, and its use by CallExecutor.execute (attempts counted on a scripted fake)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from llm_core import (
    AuthenticationError,
    ConfigurationError,
    ContentFilteredError,
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
    LLMError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    RetryPolicy,
    ServerError,
)
from llm_core.testing import FakeProvider, FakeReply


def server_error(n: int = 0) -> ServerError:
    return ServerError(f"failure {n}", provider="fake", status_code=503)


TRANSIENT = [
    RateLimitError("slow down", provider="fake"),
    ServerError("oops", provider="fake", status_code=500),
    ProviderTimeoutError("late", provider="fake"),
    ProviderConnectionError("reset", provider="fake"),
]
PERMANENT = [
    InvalidRequestError("bad", provider="fake", status_code=400),
    ContextLengthExceededError("long", provider="fake"),
    AuthenticationError("key rejected", provider="fake", status_code=401),
    PermissionDeniedError("no", provider="fake", status_code=403),
    NotFoundError("no model", provider="fake", status_code=404),
    ContentFilteredError("blocked", provider="fake"),
    InvalidResponseError("garbage", provider="fake"),
]


# -- the policy on its own ------------------------------------------------------------------------


@given(
    attempt=st.integers(1, 12),
    initial=st.floats(0, 5),
    multiplier=st.floats(1, 4),
    max_delay=st.floats(0, 30),
    jitter=st.floats(0, 1),
)
def test_backoff_is_exponential_capped_and_jittered_within_bounds(attempt: int, initial: float, multiplier: float,
                                                                  max_delay: float, jitter: float) -> None:
    policy = RetryPolicy(initial_delay=initial, multiplier=multiplier, max_delay=max_delay, jitter=jitter)
    base = min(max_delay, initial * multiplier ** (attempt - 1))
    wait = policy.backoff(attempt)
    assert base - 1e-9 <= wait <= base * (1 + jitter) + 1e-9


def test_backoff_without_jitter_doubles_up_to_the_cap() -> None:
    policy = RetryPolicy(initial_delay=0.5, multiplier=2, max_delay=3, jitter=0)
    assert [policy.backoff(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_varies_the_wait() -> None:
    policy = RetryPolicy(initial_delay=1, jitter=0.5)
    assert len({policy.backoff(1) for _ in range(20)}) > 1


@given(st.floats(-10, 1000, allow_nan=False))
def test_retry_after_is_honoured_and_capped(retry_after: float) -> None:
    policy = RetryPolicy(max_retry_after=60, initial_delay=0.5, jitter=0)
    error = RateLimitError("slow", retry_after=retry_after)
    assert policy.wait_for(1, error) == min(max(retry_after, 0.0), 60)


def test_retry_after_is_ignored_when_switched_off_or_absent() -> None:
    policy = RetryPolicy(initial_delay=0.5, jitter=0, respect_retry_after=False)
    assert policy.wait_for(1, RateLimitError("slow", retry_after=30)) == 0.5
    assert RetryPolicy(initial_delay=0.5, jitter=0).wait_for(2, RateLimitError("slow")) == 1.0
    assert RetryPolicy(initial_delay=0.5, jitter=0).wait_for(1, ServerError("x")) == 0.5


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda e: type(e).__name__)
def test_transient_errors_are_retried(error: LLMError) -> None:
    assert RetryPolicy().should_retry(error)
    assert error.retryable and error.fallback


@pytest.mark.parametrize("error", PERMANENT, ids=lambda e: type(e).__name__)
def test_errors_that_cannot_succeed_on_retry_are_not_retried(error: LLMError) -> None:
    assert not RetryPolicy().should_retry(error)
    assert not error.retryable
    assert error.fallback is isinstance(error, InvalidResponseError)  # the next provider may read it
    assert not RetryPolicy().should_retry(ValueError("not even ours"))


def test_the_error_classes_flags_are_the_one_rule_and_retry_on_overrides_it() -> None:
    class QuotaBlip(ProviderError):
        """A plugin's own error that says it may succeed when sent again."""

        retryable = True

    assert RetryPolicy().retry_on is None  # no list of its own: each error's ``retryable`` decides
    assert RetryPolicy().should_retry(QuotaBlip("again", provider="fake"))
    only_rate_limits = RetryPolicy(retry_on=(RateLimitError,))
    assert only_rate_limits.should_retry(RateLimitError("slow", provider="fake"))
    assert not only_rate_limits.should_retry(ServerError("oops", provider="fake"))
    assert RetryPolicy(retry_on=(InvalidResponseError,)).should_retry(InvalidResponseError("x", provider="fake"))
    with pytest.raises(ConfigurationError, match="retry_on must be a tuple"):
        RetryPolicy(retry_on=[ServerError])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "values",
    [{"max_attempts": 0}, {"initial_delay": -1}, {"max_delay": -1}, {"jitter": -0.1}, {"deadline": 0}],
)
def test_invalid_policies_are_configuration_errors(values: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        RetryPolicy(**values)


def test_from_mapping_and_helpers() -> None:
    policy = RetryPolicy.from_mapping({"max_attempts": 5, "deadline": 9.5, "jitter": 0})
    assert (policy.max_attempts, policy.deadline, policy.jitter) == (5, 9.5, 0)
    assert RetryPolicy.none().max_attempts == 1
    assert policy.with_(max_attempts=2).max_attempts == 2
    assert policy.with_(max_attempts=2).deadline == 9.5
    with pytest.raises(ConfigurationError, match="retries"):
        RetryPolicy.from_mapping({"retries": 3})


# -- applied by the provider ------------------------------------------------------------------------


def test_a_transient_failure_is_retried_with_backoff_until_success(sleeps: Any) -> None:
    fake = FakeProvider(replies=[FakeReply(error=server_error(1)), FakeReply(error=server_error(2)),
                                 FakeReply(content="finally")], retry=sleeps.policy(max_attempts=5))
    assert fake.chat_completion("hi").content == "finally"
    assert len(fake.requests) == 3
    assert sleeps.waits == [0.5, 1.0]


def test_the_attempt_cap_raises_the_last_error(sleeps: Any) -> None:
    fake = FakeProvider(replies=[FakeReply(error=server_error(n)) for n in range(1, 6)],
                        retry=sleeps.policy(max_attempts=3))
    with pytest.raises(ServerError, match="failure 3"):
        fake.chat_completion("hi")
    assert len(fake.requests) == 3
    assert len(sleeps.waits) == 2


def test_retry_after_is_used_as_the_wait(sleeps: Any) -> None:
    fake = FakeProvider(replies=[FakeReply(error=RateLimitError("slow", provider="fake", retry_after=7)),
                                 FakeReply(error=RateLimitError("slow", provider="fake", retry_after=500)),
                                 FakeReply(content="ok")], retry=sleeps.policy(max_retry_after=60))
    assert fake.generate_text("hi") == "ok"
    assert sleeps.waits == [7, 60]


@pytest.mark.parametrize("error", PERMANENT, ids=lambda e: type(e).__name__)
def test_permanent_failures_are_sent_once(sleeps: Any, error: LLMError) -> None:
    fake = FakeProvider(replies=[FakeReply(error=error), FakeReply(content="never")], retry=sleeps.policy())
    with pytest.raises(type(error)):
        fake.chat_completion("hi")
    assert len(fake.requests) == 1
    assert sleeps.waits == []


def test_no_wait_runs_past_the_deadline(sleeps: Any) -> None:
    fake = FakeProvider(replies=[FakeReply(error=server_error(1)), FakeReply(content="too late")],
                        retry=sleeps.policy(max_attempts=10, initial_delay=5, deadline=1))
    with pytest.raises(ServerError):
        fake.chat_completion("hi")
    assert len(fake.requests) == 1
    assert sleeps.waits == []
    limited = FakeProvider(replies=[FakeReply(error=RateLimitError("slow", provider="fake", retry_after=30)),
                                    FakeReply(content="too late")],
                           retry=sleeps.policy(max_attempts=10, deadline=10))
    with pytest.raises(RateLimitError):
        limited.chat_completion("hi")
    assert len(limited.requests) == 1


def test_sdk_exceptions_are_mapped_before_the_retry_decision(sleeps: Any) -> None:
    class Flaky(FakeProvider):
        failures = 2

        def _send_chat(self, payload: dict[str, Any]) -> Any:
            if self.failures:
                self.failures -= 1
                raise ConnectionResetError("peer reset")
            return super()._send_chat(payload)

        def map_error(self, error: BaseException) -> LLMError:
            if isinstance(error, ConnectionResetError):
                return ProviderConnectionError("connection reset")
            return super().map_error(error)

    flaky = Flaky(retry=sleeps.policy())
    assert flaky.generate_text("hi") == "echo: hi"
    assert len(sleeps.waits) == 2

    broken = Flaky(retry=sleeps.policy(max_attempts=2))
    broken.failures = 5
    with pytest.raises(ProviderConnectionError) as info:
        broken.generate_text("hi")
    assert isinstance(info.value.__cause__, ConnectionResetError)
    assert info.value.provider == "fake"


async def test_async_calls_use_the_same_policy(sleeps: Any) -> None:
    fake = FakeProvider(replies=[FakeReply(error=server_error(1)), FakeReply(error=RateLimitError("s", retry_after=2)),
                                 FakeReply(content="ok")], retry=sleeps.policy())
    assert await fake.aio.generate_text("hi") == "ok"
    assert sleeps.waits == [0.5, 2]
    once = FakeProvider(replies=[FakeReply(error=AuthenticationError("no", provider="fake"))], retry=sleeps.policy())
    with pytest.raises(AuthenticationError):
        await once.aio.chat_completion("hi")
    assert len(once.requests) == 1


def test_every_operation_is_retried(sleeps: Any) -> None:
    def fresh() -> FakeProvider:
        return FakeProvider(replies=[FakeReply(error=server_error()), FakeReply(content="{}")], retry=sleeps.policy())

    calls = {
        "embeddings": lambda p: p.embeddings("x"),
        "image": lambda p: p.generate_image_bytes("x"),
        "decide": lambda p: p.decide("t", [{"kind": "yes_no", "key": "a", "instructions": "?"}]),
        "json": lambda p: p.generate_json("x"),
        "tools": lambda p: p.chat_completion_with_tools("x", [{"name": "f"}]),
    }
    for name, call in calls.items():
        provider = fresh()
        call(provider)
        assert len(provider.requests) == 2, name


def test_retry_policy_per_provider_from_constructor_and_config_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[providers.fake.retry]\nmax_attempts = 2\ninitial_delay = 0\njitter = 0\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    from_file = FakeProvider(replies=[FakeReply(error=server_error(n)) for n in range(5)])
    with pytest.raises(ServerError):
        from_file.chat_completion("hi")
    assert len(from_file.requests) == 2
    from_arg = FakeProvider(replies=[FakeReply(error=server_error(n)) for n in range(5)], retry=RetryPolicy.none())
    with pytest.raises(ServerError):
        from_arg.chat_completion("hi")
    assert len(from_arg.requests) == 1


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"Retry-After-Ms": "250"}, 0.25),
    ({"RETRY-AFTER": "7"}, 7.0),
    ({"retry-after": "-3"}, 0.0),
    ({"retry-after": "Sun, 29 Nov 2026 12:00:10 GMT"}, 10.0),
    ({"retry-after": "Sun, 29 Nov 2026 12:00:10"}, 10.0),  # no zone: read as UTC
    ({"retry-after": "later"}, None),
    (None, None),
])
def test_retry_after_from_headers(headers: dict[str, str] | None, seconds: float | None) -> None:
    from llm_core.retry import retry_after_from_headers

    assert retry_after_from_headers(headers, now=1795953600.0) == seconds


def test_one_policy_serves_concurrent_threads_and_tasks_each_with_its_own_attempts() -> None:
    """A policy builds its tenacity loop once; threads (sync) and tasks of one loop (async) that
    retry through it at the same time each get their own attempt count and outcome."""
    import asyncio
    import pickle
    import threading

    policy = RetryPolicy(max_attempts=3, initial_delay=0.0, jitter=0.0, sleep=lambda _s: None)
    attempts: dict[int, int] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def flaky(worker: int) -> int:
        with lock:
            attempts[worker] = attempts.get(worker, 0) + 1
            count = attempts[worker]
        if count == 1:
            barrier.wait(timeout=10)  # every worker is inside its first attempt at once
        if count < 3:
            raise ServerError("again", provider="fake", status_code=503)
        return worker

    results: list[int] = []
    threads = [threading.Thread(target=lambda w=w: results.append(policy.call(flaky, w))) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == list(range(8))
    assert attempts == dict.fromkeys(range(8), 3)

    async def yield_once(_seconds: float) -> None:
        await asyncio.sleep(0)  # every waiting task lets the others run their attempts

    async_policy = RetryPolicy(max_attempts=4, initial_delay=0.0, jitter=0.0, async_sleep=yield_once)
    tries: dict[int, int] = {}

    async def aflaky(task: int) -> int:
        tries[task] = tries.get(task, 0) + 1
        await asyncio.sleep(0)
        if tries[task] <= task % 3:  # tasks fail 0, 1 or 2 times
            raise ServerError("again", provider="fake", status_code=503)
        return task

    async def run_all() -> list[int]:
        return await asyncio.gather(*(async_policy.acall(aflaky, t) for t in range(30)))

    assert asyncio.run(run_all()) == list(range(30))
    assert tries == {t: t % 3 + 1 for t in range(30)}
    # the tenacity objects are rebuilt after pickling, not pickled
    original = RetryPolicy(max_attempts=2)
    assert original.call(lambda: "built") == "built"
    copy = pickle.loads(pickle.dumps(original))
    assert copy == original
    assert copy.call(lambda: "ok") == "ok"
