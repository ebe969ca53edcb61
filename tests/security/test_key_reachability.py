"""No object the library hands out holds a canary key in clear, wherever one looks: errors and
everything reachable from them (the chained SDK exceptions' requests, responses, headers, URL
query, bodies and ``details``, walked attribute by attribute), their pickles, every logger at
DEBUG, and ``vars()`` of providers and routers (key options included).

Both plugins run through the real SDKs against a 127.0.0.1 server that quotes the key back in a
response header and in the body. The key also travels as a credential-named option (OpenAI
``default_query={"key": ...}``, Gemini ``client_args={"params": {"key": ...}}``), so that the URL
query of every request carries it too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import traceback
from collections.abc import Callable
from typing import Any

import pytest

from llm_core.errors import (
    AuthenticationError,
    InvalidResponseError,
    LLMError,
    ProviderConnectionError,
    ServerError,
)
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEvent
from tests.reliability.fault_server import Behaviour, FaultServer, Request, json_response, reset, respond, sse
from tests.reliability.fault_targets import GEMINI, OPENAI, Target
from tests.reliability.operations import OPERATIONS
from tests.security.canary import make_canary
from tests.security.reach import reachable

TARGETS = [GEMINI, OPENAI]
LOGGERS = ("llm_core", "llm_core.calls", "openai", "httpx2", "httpcore2", "google_genai", "google")


def _key_of(request: Request) -> str:
    return request.headers.get("authorization", "").removeprefix("Bearer ") or request.headers.get(
        "x-goog-api-key", ""
    )


def _rejected(target: Target) -> Callable[[Request], Behaviour]:
    """401, the key quoted in the error message and in a response header."""

    def answer(request: Request) -> Behaviour:
        key = _key_of(request)
        if target is GEMINI:
            body = {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": f"API key not valid: {key}."}}
        else:  # the Responses API's error body (see upstreams.openai_error)
            body = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error",
                              "param": None, "code": "invalid_api_key"}}
        return json_response(401, body, headers={"X-Echoed-Key": key, "Set-Cookie": f"session={key}"})

    return answer


def _server_error(target: Target) -> Callable[[Request], Behaviour]:
    def answer(request: Request) -> Behaviour:
        key = _key_of(request)
        if target is GEMINI:
            body = {"error": {"code": 500, "status": "INTERNAL", "message": f"internal error for {key}"}}
        else:
            body = {"error": {"message": f"server error for {key}", "type": "server_error", "param": None,
                              "code": "server_error"}}
        return json_response(500, body, headers={"X-Echoed-Key": key})

    return answer


def _malformed(target: Target) -> Callable[[Request], Behaviour]:
    """A 200 whose body quotes the key and cannot be read: Gemini's ``generateContent`` parts are
    not objects (the SDK's pydantic validation fails and quotes its input); other answers are JSON
    cut short."""

    def answer(request: Request) -> Behaviour:
        key = _key_of(request)
        if request.path.endswith(":streamGenerateContent") or "stream" in request.text:
            return sse([f"data: {{\"candidates\": [{{\"content\": {{\"parts\": [\"{key}\"]}}}}]}}\r\n\r\n"]
                       if target is GEMINI else
                       [f'event: response.created\ndata: {{"type": "response.created", "note": "{key}", "x\n\n'])
        if target is GEMINI and request.path.endswith(":generateContent"):
            return json_response(200, {"candidates": [{"content": {"parts": [key], "role": "model"}}]})
        return respond(200, json.dumps({"id": key, "object": "response", "output": [{"type": "message"}]})[:-9])

    return answer


def _stream_error(target: Target) -> Callable[[Request], Behaviour]:
    """A stream that starts, then reports an error quoting the key (each service's error event)."""

    def answer(request: Request) -> Behaviour:
        key = _key_of(request)
        events = target.stream_events(["one", " two"])
        if target is GEMINI:
            error = {"error": {"code": 500, "status": "INTERNAL", "message": f"stream broke for {key}"}}
            return sse([*events[:1], f"data: {json.dumps(error)}\r\n\r\n"])
        error = {"type": "error", "code": "server_error", "message": f"stream broke for {key}", "param": None,
                 "sequence_number": 99}
        return sse([*events[:5], f"event: error\ndata: {json.dumps(error)}\n\n"])

    return answer


FAILURES: dict[str, tuple[Callable[[Target], Callable[[Request], Behaviour]], type[LLMError]]] = {
    "rejected": (_rejected, AuthenticationError),
    "server-error": (_server_error, ServerError),
    "malformed": (_malformed, InvalidResponseError),
    "reset": (lambda target: lambda request: reset(), ProviderConnectionError),
}


def _key_options(target: Target, key: str) -> dict[str, Any]:
    if target is GEMINI:
        return {"client_args": {"params": {"key": key}}, "async_client_args": {"params": {"key": key}}}
    return {"default_query": {"key": key}}


def _sdk_client(obj: object) -> bool:
    """SDK clients must hold the key to send it; they are what ``provider.client`` returns."""
    module = type(obj).__module__
    return not isinstance(obj, BaseException) and module.startswith(("openai", "google.genai", "httpx2", "httpcore2"))


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def _errors_of(provider: Any, operation: str, mode: str) -> list[LLMError]:
    """The error(s) ``operation`` ends with: raised by a call, or carried by a stream event."""
    if operation == "stream":
        if mode == "sync":
            events: list[StreamEvent] = list(provider.stream_chat_completion("hi"))
        else:
            async def collect() -> list[StreamEvent]:
                return [e async for e in provider.aio.stream_chat_completion("hi")]
            events = asyncio.run(collect())
        return [e.error for e in events if e.error is not None]
    call, acall = OPERATIONS[operation]
    try:
        if mode == "sync":
            call(provider)
        else:
            asyncio.run(acall(provider))
    except LLMError as exc:
        return [exc]
    return []


def _assert_nothing_shows(error: LLMError, key: str) -> None:
    where = reachable(error, key)
    assert where == [], f"the key is reachable from the error at {where[:8]}"
    text = "".join(traceback.format_exception(error))
    assert key not in text and key[8:20] not in text
    data = pickle.dumps(error)
    assert key.encode() not in data
    loaded = pickle.loads(data)
    assert type(loaded) is type(error) and str(loaded) == str(error)
    link: BaseException | None = error
    while link is not None:  # every link that pickles at all pickles without the key
        try:
            link_data = pickle.dumps(link)
        except Exception:  # some SDK exceptions do not pickle; nothing leaks then
            link_data = b""
        assert key.encode() not in link_data, type(link).__name__
        link = link.__cause__ or link.__context__


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_no_error_holds_the_key_anywhere(
    target: Target, failure: str, mode: str, debug_logs: pytest.LogCaptureFixture
) -> None:
    key = make_canary("shaped", target.name)
    behaviour, expected = FAILURES[failure]
    policy = RetryPolicy(max_attempts=2, jitter=0.0, sleep=lambda s: None, async_sleep=_no_wait)
    operations = [*OPERATIONS, "stream"]
    with FaultServer(behaviour(target)) as server:
        provider = target.build(server.url, retry=policy, api_key=key, **_key_options(target, key))
        errors = {operation: _errors_of(provider, operation, mode) for operation in operations}
        requests = list(server.requests)
    assert requests and all(_key_of(r) == key and r.query.get("key") == [key] for r in requests), (
        "the key was sent, as the key header and as the key query parameter"
    )
    for operation, found in errors.items():
        assert len(found) == 1, f"{operation}: {found}"
        error = found[0]
        assert isinstance(error, expected), f"{operation}: {type(error).__name__}: {error}"
        _assert_nothing_shows(error, key)
    logged = debug_logs.text + "".join(repr(r.args) + r.getMessage() for r in debug_logs.records)
    assert key not in logged and key[8:20] not in logged


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_a_stream_error_event_quoting_the_key_holds_it_nowhere(target: Target, mode: str) -> None:
    key = make_canary("plain", target.name)
    with FaultServer(_stream_error(target)) as server:
        provider = target.build(server.url, api_key=key)
        found = _errors_of(provider, "stream", mode)
    assert len(found) == 1 and isinstance(found[0], ServerError), found
    _assert_nothing_shows(found[0], key)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_vars_of_a_provider_hold_no_key_after_calls(target: Target) -> None:
    key = make_canary("shaped", target.name)
    with FaultServer(target.upstream) as server:
        provider = target.build(server.url, api_key=key, **_key_options(target, key))
        assert provider.chat_completion("hi").content == "echo: hi"
        assert asyncio.run(provider.aio.chat_completion("hi")).content == "echo: hi"
        provider.configure({"api_key": key, "timeout": 7})
        assert provider.chat_completion("hi again").content == "echo: hi again"
        assert all(r.query.get("key") == [key] for r in server.requests), "the option key reached the wire"
    assert reachable(vars(provider), key, opaque=_sdk_client) == []
    assert key not in repr(vars(provider)) and key not in repr(provider.options)


def test_vars_of_a_router_hold_no_key() -> None:
    """Keys passed as router configuration (per provider) stay ``Secret`` in the router and in
    the providers it builds."""
    from core_gemini_plugin.plugin import SPEC as GEMINI_SPEC
    from core_openai_plugin.plugin import SPEC as OPENAI_SPEC

    keys = {"gemini": make_canary("shaped", "gemini"), "openai": make_canary("shaped", "openai")}
    registry = Registry()
    registry.register(GEMINI_SPEC)
    registry.register(OPENAI_SPEC)
    with FaultServer(GEMINI.upstream) as gemini, FaultServer(OPENAI.upstream) as openai:
        router = registry.router(
            "chat",
            prefer=["openai", "gemini"],
            openai={"api_key": keys["openai"], "base_url": openai.url + "/v1",
                    "default_headers": {"X-Api-Key": keys["openai"]}},
            gemini={"api_key": keys["gemini"], "base_url": gemini.url, "vertex_api_key": keys["gemini"]},
        )
        assert router.chat_completion("hi").content == "echo: hi"
        openai.always(json_response(503, {"error": {"message": "busy", "type": "server_error", "param": None,
                                                    "code": "server_error"}}))
        assert router.chat_completion("hi").provider == "gemini"
        assert openai.requests[0].headers["x-api-key"] == keys["openai"]
    for key in keys.values():
        assert reachable(vars(router), key, opaque=_sdk_client) == []
        assert key not in repr(vars(router)) and key not in repr(router.config)


async def _no_wait(seconds: float) -> None:
    return None
