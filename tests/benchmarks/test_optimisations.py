"""The core's fast paths (found with the benchmarks) do the same work and give the same results as
the straightforward code they replaced. No timing is asserted here."""

from __future__ import annotations

import copy
import pickle
import time
from collections.abc import AsyncIterator, Iterator
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_core._unvalidated import unvalidated
from llm_core.errors import (
    AuthenticationError,
    InvalidInputError,
    ProviderTimeoutError,
    ServerError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature
from llm_core.messages import ChatMessage, ImagePart, Role, normalize_messages, plain_messages
from llm_core.requests import ChatRequest, build, plain_chat_request
from llm_core.retry import RetryPolicy
from llm_core.streaming import CallContext, StreamEvent, StreamEventType, TokenType
from llm_core.testing.fake import FakeProvider, FakeReply, fake_spec
from llm_core.tools import ToolCall


def _no_tenacity(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("tenacity must not be set up for a call that needs no retry")


class Attempts:
    def __init__(self, *outcomes: Any, took: float = 0.0) -> None:
        self.outcomes = list(outcomes)
        self.took = took
        self.count = 0

    def __call__(self) -> Any:
        self.count += 1
        time.sleep(self.took)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _policy(waits: list[float], **changes: Any) -> RetryPolicy:
    return RetryPolicy(jitter=0, sleep=waits.append, **changes)


def test_a_first_attempt_that_succeeds_or_fails_for_good_never_sets_up_tenacity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(RetryPolicy, "retrying", _no_tenacity)
    waits: list[float] = []
    assert _policy(waits).call(Attempts("ok")) == "ok"
    denied = AuthenticationError("bad key", provider="x")
    with pytest.raises(AuthenticationError) as raised:
        _policy(waits).call(Attempts(denied))
    assert raised.value is denied and waits == []


def test_retries_after_the_first_failure_replay_it_without_sending_again() -> None:
    waits: list[float] = []
    attempts = Attempts(ServerError("503", provider="x"), ServerError("503", provider="x"), "ok")
    assert _policy(waits, max_attempts=5).call(attempts) == "ok"
    assert attempts.count == 3  # two failures and the success: the first failure was not re-sent
    assert waits == [0.5, 1.0]  # the backoff of attempts 1 and 2, as under tenacity alone


def test_the_attempt_cap_counts_the_first_attempt() -> None:
    waits: list[float] = []
    last = ServerError("third", provider="x")
    attempts = Attempts(ServerError("first", provider="x"), ServerError("second", provider="x"), last)
    with pytest.raises(ServerError) as raised:
        _policy(waits, max_attempts=3).call(attempts)
    assert raised.value is last and attempts.count == 3 and len(waits) == 2


def test_the_deadline_counts_from_the_first_attempt() -> None:
    waits: list[float] = []
    attempts = Attempts(ServerError("slow", provider="x"), "never", took=0.3)
    with pytest.raises(ServerError):
        _policy(waits, initial_delay=0.1, deadline=0.35).call(attempts)
    assert attempts.count == 1 and waits == []  # 0.3 s spent + 0.1 s wait would pass 0.35 s


async def test_async_calls_take_the_same_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    outcomes: list[Any] = [ServerError("503", provider="x"), "ok"]

    async def attempt() -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    policy = RetryPolicy(jitter=0, async_sleep=record)
    assert await policy.acall(attempt) == "ok"
    assert waits == [0.5] and outcomes == []

    monkeypatch.setattr(RetryPolicy, "async_retrying", _no_tenacity)
    outcomes.append("direct")
    assert await policy.acall(attempt) == "direct"


def test_attempts_get_their_arguments_on_the_first_try_and_on_every_retry() -> None:
    waits: list[float] = []
    seen: list[tuple[Any, ...]] = []
    outcomes: list[Any] = [ServerError("503", provider="x"), "ok"]

    def attempt(*args: Any) -> Any:
        seen.append(args)
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert _policy(waits).call(attempt, "payload", 2) == "ok"
    assert seen == [("payload", 2), ("payload", 2)] and waits == [0.5]


class _NarrowedFake(FakeProvider):
    """A provider that narrows a model's features at run time (a public override)."""

    narrowed: frozenset[Feature] = frozenset()

    def model_features(self, model: str | None = None) -> frozenset[Feature]:
        return super().model_features(model) - self.narrowed


def test_feature_checks_remember_catalogue_models_only_where_nothing_can_change_them() -> None:
    provider = FakeProvider(spec=fake_spec(features=["chat", "streaming"]))
    provider.chat_completion("hi")
    assert provider._catalogue_features == {"fake-model": frozenset({Feature.CHAT, Feature.STREAMING})}
    with pytest.raises(UnsupportedFeatureError):
        provider._require(Feature.TOOLS, "fake-model")  # still refused after the cache is filled
    # an unknown model follows the options, which may change between calls
    provider.options["unknown_model_features"] = ["streaming"]
    with pytest.raises(UnsupportedFeatureError):
        provider.chat_completion("hi", model="not-in-catalogue")
    provider.options["unknown_model_features"] = ["chat"]
    assert provider.chat_completion("hi", model="not-in-catalogue").content
    assert "not-in-catalogue" not in provider._catalogue_features
    # a class that overrides model_features is asked every time
    narrowed = _NarrowedFake(spec=fake_spec(features=["chat"]))
    narrowed.chat_completion("hi")
    narrowed.narrowed = frozenset({Feature.CHAT})
    with pytest.raises(UnsupportedFeatureError):
        narrowed.chat_completion("hi")
    assert narrowed._catalogue_features == {}


@pytest.mark.parametrize("token_type", list(TokenType))
def test_token_events_equal_what_model_construct_builds(token_type: TokenType) -> None:
    fast = StreamEvent.token(" delta ", token_type)
    slow = StreamEvent.model_construct(
        type=StreamEventType.TOKEN, text=" delta ", token_type=token_type, metadata=None, error=None
    )
    assert fast == slow and type(fast) is StreamEvent
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_fields_set is not StreamEvent.token("x", token_type).model_fields_set
    assert (fast.__pydantic_extra__, fast.__pydantic_private__) == (slow.__pydantic_extra__, slow.__pydantic_private__)
    assert fast.model_dump() == slow.model_dump() and repr(fast) == repr(slow) and hash(fast) == hash(slow)
    assert fast.is_thinking is token_type.is_thinking
    with pytest.raises(Exception, match="frozen"):
        fast.text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("context", [None, *CallContext])
@pytest.mark.parametrize("thinking", [False, True])
def test_token_types_per_chunk_come_from_the_table_unchanged(context: CallContext | None, thinking: bool) -> None:
    prefix = f"{context.value}_" if context is not None else ""
    expected = TokenType(f"{prefix}LLM_{'THINKING' if thinking else 'RESPONSE'}")
    assert TokenType.for_chunk(thinking=thinking, context=context) is expected
    assert expected.is_thinking is thinking


class _SdkLikeStream:
    """Like the openai SDK's Stream: ``__iter__`` is a generator over it, ``close`` releases the
    connection (closing that generator alone would not)."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks
        self.closed = 0

    def __iter__(self) -> Iterator[Any]:
        yield from self.chunks

    def close(self) -> None:
        self.closed += 1


class _AsyncSdkLikeStream(_SdkLikeStream):
    async def __aiter__(self) -> AsyncIterator[Any]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed += 1


def _streaming_fake(stream_type: type[_SdkLikeStream]) -> tuple[FakeProvider, list[_SdkLikeStream]]:
    provider = FakeProvider(default_reply=FakeReply(content="one two three"), api_key="test-key")
    opened: list[_SdkLikeStream] = []
    iterate = provider._iterate

    def send(payload: dict[str, Any]) -> Any:
        stream = stream_type(list(iterate(provider._next("stream", payload))))
        opened.append(stream)
        return stream

    async def asend(payload: dict[str, Any]) -> Any:
        return send(payload)

    provider._send_stream = send  # type: ignore[method-assign]
    provider._asend_stream = asend  # type: ignore[method-assign]
    return provider, opened


def test_the_stream_driver_closes_the_sdk_stream_itself_when_done_or_abandoned() -> None:
    provider, opened = _streaming_fake(_SdkLikeStream)
    events = list(provider.stream_chat_completion("hi"))
    assert "".join(e.text or "" for e in events) == "one two three"
    assert [e.type for e in events[-2:]] == [StreamEventType.METADATA, StreamEventType.END]
    stream = provider.stream_chat_completion("hi")
    assert next(iter(stream)).text == "one "
    stream.close()  # type: ignore[attr-defined]  # abandoned after the first token
    assert [s.closed for s in opened] == [1, 1]


async def test_the_async_stream_driver_closes_the_sdk_stream_itself_when_done_or_abandoned() -> None:
    provider, opened = _streaming_fake(_AsyncSdkLikeStream)
    events = [e async for e in provider.aio.stream_chat_completion("hi")]
    assert "".join(e.text or "" for e in events) == "one two three"
    stream = provider.aio.stream_chat_completion("hi")
    assert (await stream.__anext__()).text == "one "
    await stream.aclose()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1, 1]


@pytest.mark.parametrize("role", ["system", "user", "assistant"])
@pytest.mark.parametrize("content", ["Hi there", "", " ", "ünïcode ✓"])
def test_plain_messages_equal_what_pydantic_validates(role: str, content: str) -> None:
    data = {"role": role, "content": content}
    fast = normalize_messages([data, {"role": "user", "content": "hi"}])[0]
    slow = ChatMessage.__pydantic_validator__.validate_python(data)
    assert type(fast) is ChatMessage
    assert fast == slow and fast.__dict__ == slow.__dict__ and list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert (fast.__pydantic_extra__, fast.__pydantic_private__) == (slow.__pydantic_extra__, slow.__pydantic_private__)
    assert fast.model_dump() == slow.model_dump() and repr(fast) == repr(slow)
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    again = normalize_messages([data, {"role": "user", "content": "hi"}])[0]
    assert fast.metadata is not again.metadata  # no shared default
    with pytest.raises(Exception, match="frozen"):
        fast.content = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "data",
    [
        {"role": "tool", "content": "42"},  # needs tool_call_id: Pydantic reports it
        {"role": "tool", "content": "42", "tool_call_id": "c1"},
        {"role": "USER", "content": "hi"},
        {"role": "robot", "content": "hi"},
        {"role": "user", "content": None},
        {"role": "user", "content": ["a", "b"]},
        {"role": "user", "content": "hi", "name": "ann"},
        {"role": "user", "content": "hi", "x_trace": 7},
        {"role": "user"},
        {"role": Role.USER, "content": "hi"},
        {"role": ["user"], "content": "hi"},
    ],
)
def test_other_messages_go_through_pydantic(data: dict[str, Any]) -> None:
    try:
        expected: Any = ChatMessage.__pydantic_validator__.validate_python(data)
    except ValidationError:
        with pytest.raises(InvalidInputError):
            normalize_messages([data, {"role": "user", "content": "hi"}])
        return
    got = normalize_messages([data, {"role": "user", "content": "hi"}])[0]
    assert got == expected and got.model_fields_set == expected.model_fields_set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (expected.__pydantic_extra__, None)


class _MyMessage(ChatMessage):
    pass


def test_plain_chat_requests_equal_what_pydantic_validates() -> None:
    messages = [
        ChatMessage.system("be brief"),
        ChatMessage(role=Role.USER, content=["look", ImagePart(data=b"\x89PNG", mime_type="image/png")]),
        ChatMessage.assistant("ok", tool_calls=[ToolCall(id="c1", name="f", arguments={"x": 1})]),
        ChatMessage.tool("c1", "42"),
    ]
    values: dict[str, Any] = {"temperature": None, "max_tokens": None, "thinking": None, "call_context": None}
    fast = plain_chat_request(messages, "gpt-4.1-mini")
    slow = build(ChatRequest, "x", messages=messages, model="gpt-4.1-mini", options={}, **values)
    assert fast is not None and type(fast) is ChatRequest
    assert fast == slow and list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert (fast.__pydantic_extra__, fast.__pydantic_private__) == (slow.__pydantic_extra__, slow.__pydantic_private__)
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast.messages is not messages and all(a is b for a, b in zip(fast.messages, messages, strict=True))
    assert fast.options == {} and fast.options is not plain_chat_request(messages, "m").options  # type: ignore[union-attr]
    with pytest.raises(Exception, match="frozen"):
        fast.model = "other"  # type: ignore[misc]


def test_other_chat_requests_go_through_pydantic() -> None:
    assert plain_chat_request([_MyMessage(role=Role.USER, content="hi")], "m") is None
    assert plain_chat_request([ChatMessage.user("hi")], Role.USER) is None
    provider = FakeProvider(api_key="test-key")
    for options in ({"temperature": 0.5}, {"max_tokens": 5}, {"top_p": 0.5}, {"thinking": True}, {"seed": 1}):
        request = provider.build_chat_request("hi", **options)
        assert request.model_fields_set > {"messages", "model"}
    with pytest.raises(InvalidInputError):
        provider.build_chat_request("hi", temperature=5)
    plain = provider.build_chat_request([{"role": "user", "content": "hi"}])
    assert plain == build(
        ChatRequest,
        "fake",
        messages=[ChatMessage.user("hi")],
        model=provider.default_model(),
        temperature=None,
        max_tokens=None,
        thinking=None,
        call_context=None,
        options={},
    )


# -- the usual call: plain messages built directly, the same request as the general path --------

_dict_messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["system", "user", "assistant", "tool", "USER", "robot"]),
        "content": st.sampled_from(["hi", "", " ", "ünïcode ✓", None, ["a", "b"], 5]),
    },
    optional={"name": st.just("ann"), "x_trace": st.just(7)},
)
_typed_messages = st.sampled_from(
    [
        ChatMessage.system("be brief"),
        ChatMessage.user("hi"),
        ChatMessage.assistant("ok", tool_calls=[ToolCall(id="c1", name="f", arguments={"x": 1})]),
        ChatMessage.tool("c1", "42"),
        ChatMessage(role=Role.USER, content=["look", ImagePart(data=b"\x89PNG", mime_type="image/png")]),
        _MyMessage(role=Role.USER, content="hi"),
    ]
)
_call_options = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from([None, "", "fake-fallback", "unknown-model"]),
        "system": st.sampled_from([None, "", "be brief"]),
        "temperature": st.sampled_from([None, 0.5, 5.0]),
        "max_tokens": st.sampled_from([None, 8]),
        "thinking": st.sampled_from([None, False]),
        "seed": st.just(1),
    },
)


def _request_outcome(call: Any) -> tuple[str, Any]:
    """A request with everything Pydantic keeps (messages included), or the error raised."""
    try:
        request = call()
    except Exception as exc:
        return "raised", (type(exc), str(exc))
    messages = [
        (type(m), m.__dict__, m.model_fields_set, m.__pydantic_extra__, m.__pydantic_private__)
        for m in request.messages
    ]
    other = {k: v for k, v in request.__dict__.items() if k != "messages"}
    fields = (request.model_fields_set, request.__pydantic_extra__, request.__pydantic_private__)
    return "returned", (type(request), list(request.__dict__), other, fields, messages)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_dict_messages, _typed_messages), max_size=4), _call_options)
def test_the_usual_call_builds_the_request_of_the_general_path(messages: list[Any], options: dict[str, Any]) -> None:
    provider = FakeProvider(api_key="test-key")
    # the same call as a tuple of read-only mappings: no plain messages, the general path throughout
    general = tuple(MappingProxyType(m) if type(m) is dict else m for m in messages)
    fast = _request_outcome(lambda: provider.build_chat_request(list(messages), **options))
    assert fast == _request_outcome(lambda: provider.build_chat_request(general, **options))  # type: ignore[arg-type]
    if fast[0] == "returned":  # the caller's list and dicts are not touched or kept
        assert provider.build_chat_request(messages, **options).messages is not messages


def test_plain_messages_are_built_without_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    user = ChatMessage.user("hi")
    monkeypatch.setattr(ChatMessage, "__pydantic_validator__", None)  # would fail if used
    built = plain_messages([{"role": "system", "content": "be brief"}, user, {"role": "assistant", "content": ""}])
    assert built is not None and built[1] is user
    assert [(m.role, m.content) for m in built] == [(Role.SYSTEM, "be brief"), (Role.USER, "hi"), (Role.ASSISTANT, "")]
    assert plain_messages([{"role": "system", "content": "only a system prompt"}]) is None
    assert plain_messages([]) is None
    assert plain_messages([{"role": "user", "content": "hi", "name": "ann"}]) is None
    assert plain_messages([_MyMessage(role=Role.USER, content="hi")]) is None


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "hi", "name": "ann"}],  # not plain: validated
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],  # plain
    ],
)
@pytest.mark.parametrize("options", [{}, {"temperature": 0.5}])
def test_a_message_list_is_tried_as_plain_once(
    monkeypatch: pytest.MonkeyPatch, messages: list[Any], options: dict[str, Any]
) -> None:
    import llm_core.messages as messages_module
    import llm_core.provider as provider_module

    tries: list[object] = []

    def counted(items: Any) -> Any:
        tries.append(items)
        return plain_messages(items)

    for module in (provider_module, messages_module):  # wherever it is looked up
        monkeypatch.setattr(module, "plain_messages", counted)
    request = FakeProvider(api_key="test-key").build_chat_request(messages, system="sys", **options)
    assert len(tries) == 1
    assert request.messages[0].content == "sys" and request.messages[-1].content == "hi"
    assert [m.role for m in request.messages].count(Role.SYSTEM) == 1 + (len(messages) == 2)


# -- the unobserved call path (_run/_arun without observers) ends every call as the observed one --


class _Scripted(FakeProvider):
    """Sends raise what the script says (any exception: an SDK error is mapped by map_error);
    a reply with content "unparsable" fails in the parser."""

    def __init__(self, outcomes: list[Any]) -> None:
        super().__init__(
            retry=RetryPolicy(max_attempts=3, jitter=0, deadline=None, sleep=lambda s: None, async_sleep=_no_wait)
        )
        self.outcomes = outcomes
        self.sends = 0

    def _outcome(self) -> FakeReply:
        self.sends += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return FakeReply(content=outcome)

    def _send_chat(self, payload: dict[str, Any]) -> FakeReply:
        return self._outcome()

    async def _asend_chat(self, payload: dict[str, Any]) -> FakeReply:
        return self._outcome()

    def _send_stream(self, payload: dict[str, Any]) -> Iterator[Any]:
        return self._iterate(self._outcome())

    async def _asend_stream(self, payload: dict[str, Any]) -> AsyncIterator[Any]:
        reply = self._outcome()

        async def chunks() -> AsyncIterator[Any]:
            for chunk in self._iterate(reply):
                yield chunk

        return chunks()

    def _send_list_models(self) -> list[str]:
        return [self._outcome().content]

    async def _asend_list_models(self) -> list[str]:
        return self._send_list_models()

    def map_error(self, error: BaseException) -> Any:
        if isinstance(error, TimeoutError):  # as a plugin maps its SDK's timeouts
            return ProviderTimeoutError(f"timed out: {error}", provider=self.identifier)
        return super().map_error(error)

    def parse_chat_response(self, raw: FakeReply, request: ChatRequest) -> Any:
        if raw.content == "unparsable":
            raise KeyError("output")
        return super().parse_chat_response(raw, request)


async def _no_wait(seconds: float) -> None:
    return None


class _Listener:
    from llm_core.hooks import hookimpl

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        pass


_SCRIPTS: dict[str, list[Any]] = {
    "success": ["ok"],
    "transient, then success": [ServerError("503", provider="fake"), "ok"],
    "permanent": [AuthenticationError("bad key", provider="fake")],
    "transient to the cap": [
        ServerError("1", provider="fake"),
        ServerError("2", provider="fake"),
        ServerError("3", provider="fake"),
    ],
    "sdk error (mapped)": [ConnectionResetError("reset by peer")],
    "sdk error, then success": [TimeoutError("slow"), "ok"],
    "unparsable answer": ["unparsable"],
}


def _stream_ending(provider: _Scripted, mode: str) -> tuple[Any, ...]:
    import asyncio

    async def collect() -> list[StreamEvent]:
        return [event async for event in provider.aio.stream_chat_completion("hi")]

    events = asyncio.run(collect()) if mode == "async" else list(provider.stream_chat_completion("hi"))
    shown = [
        (e.type, e.text, type(e.error), str(e.error), type(e.error.__cause__) if e.error else None) for e in events
    ]
    return ("streamed", shown, provider.sends)


def _ending(provider: _Scripted, mode: str, operation: str = "chat") -> tuple[Any, ...]:
    import asyncio

    if operation == "stream":
        return _stream_ending(provider, mode)
    call: Any = {
        ("chat", "sync"): lambda: provider.chat_completion("hi"),
        ("chat", "async"): lambda: asyncio.run(provider.aio.chat_completion("hi")),
        ("models", "sync"): lambda: provider.available_models(),
        ("models", "async"): lambda: asyncio.run(provider.aio.available_models()),
    }[(operation, mode)]
    try:
        result = call()
    except Exception as exc:
        cause = exc.__cause__
        return ("raised", type(exc), str(exc), type(cause), str(cause), exc.__suppress_context__, provider.sends)
    return ("returned", getattr(result, "content", result), provider.sends)


@pytest.mark.parametrize("operation", ["chat", "stream", "models"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("script", list(_SCRIPTS))
def test_an_unobserved_call_ends_as_an_observed_one(script: str, mode: str, operation: str) -> None:
    """Calls, streams (their opening) and plain operations (_execute) without observers take a
    shorter path; they end the same way: result or error, its cause, and the attempts made."""
    from llm_core import observers
    from llm_core.registry import Registry

    unobserved = _ending(_Scripted(list(_SCRIPTS[script])), mode, operation)
    registry = Registry(strict=False)
    registry.add_observer(_Listener())
    try:
        assert observers.active()
        observed = _ending(_Scripted(list(_SCRIPTS[script])), mode, operation)
    finally:
        observers.install(None)
    assert unobserved == observed
    if operation == "stream":
        kinds = [event[0] for event in unobserved[1]]
        ok = script.endswith("success") or script == "unparsable answer"  # streams parse no answer
        assert kinds[-2:] == (
            [StreamEventType.METADATA, StreamEventType.END] if ok else [StreamEventType.ERROR, StreamEventType.END]
        )
    elif operation == "chat" or script != "unparsable answer":
        assert unobserved[0] == ("returned" if script.endswith("success") else "raised")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")

    a: int
    b: list[int] = Field(default_factory=list)


def test_unvalidated_instances_hold_the_state_model_construct_leaves() -> None:
    fast = unvalidated(_Open, {"a": 1, "b": [2]}, {"a"}, {"x": 3})
    slow = _Open.model_construct(_fields_set={"a"}, a=1, b=[2], x=3)
    assert type(fast) is _Open and fast == slow and fast.__dict__ == slow.__dict__
    assert fast.model_fields_set == slow.model_fields_set and fast.model_extra == {"x": 3}
    assert fast.__pydantic_private__ is slow.__pydantic_private__ is None
    assert pickle.loads(pickle.dumps(fast)) == fast and copy.deepcopy(fast) == fast
    assert fast.model_copy(update={"a": 5}).a == 5 and fast.a == 1
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True) == {"a": 1, "x": 3}
