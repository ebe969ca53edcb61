"""No silent success: an HTTP 200 that is not a generateContent answer raises
InvalidResponseError naming what was wrong, through the real SDK against a loopback server
(127.0.0.1), sync and async, calls and streams; one request each (not retried on the same
provider). SSE comment lines (``: keep-alive``) are legal and ignored.

The well-formed bodies come from ``tests/reliability/upstreams.py`` (modelled on the SDK types and
the recorded cassettes); each malformed one changes one thing.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from core_gemini_plugin.provider import GeminiProvider
from llm_core.errors import InvalidResponseError
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEventType
from tests.gemini.gemini_inputs import KEY
from tests.reliability import upstreams as up
from tests.reliability.fault_server import Behaviour, FaultServer, respond, sse
from tests.reliability.stream_endings import ending_error

NO_CANDIDATES = "has no candidates"
UNREADABLE = "answer could not be read"
EMPTY_CANDIDATE = "neither content nor a finish reason"
#: (body, content type, what the error names)
CALLS: dict[str, tuple[str, str, str]] = {
    "html": ("<html><body>Gateway</body></html>", "text/html", "not JSON"),
    "empty object": ("{}", "application/json", NO_CANDIDATES),
    "array": ("[]", "application/json", NO_CANDIDATES),
    "null": ("null", "application/json", NO_CANDIDATES),
    "bare string": ('"Paris."', "application/json", NO_CANDIDATES),
    "candidates a string": ('{"candidates": "Paris."}', "application/json", EMPTY_CANDIDATE),
    "candidate null": ('{"candidates": [null]}', "application/json", EMPTY_CANDIDATE),
    "no parts": (json.dumps(up.gemini_content([])), "application/json", r"finished \(STOP\) without any content"),
    # the SDK fails on these after sending (a TypeError / pydantic error), mapped in errors.py
    "bare number": ("42", "application/json", UNREADABLE),
    "candidates an object": ('{"candidates": {"content": {}}}', "application/json", UNREADABLE),
    "parts not objects": ('{"candidates": [{"content": {"parts": ["Paris."]}}]}', "application/json", UNREADABLE),
}
#: (events, what the error names)
STREAMS: dict[str, tuple[list[str], str]] = {
    "html": (["<html><body>Gateway</body></html>\n"], "not JSON"),
    "empty objects": (["data: {}\r\n\r\n"], "without a finish reason"),
    "no parts": ([f"data: {json.dumps(up.gemini_content([]))}\r\n\r\n"], "without any content part"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def call(server: FaultServer, mode: str, behaviour: Behaviour, method: str = "chat_completion") -> Any:
    server.clear()
    server.script(behaviour)
    provider = GeminiProvider(api_key=KEY, base_url=server.url, retry=RetryPolicy(max_attempts=3, initial_delay=0))
    if mode == "sync":
        result = getattr(provider, method)("Capital of France?")
        return list(result) if method == "stream_chat_completion" else result

    async def run() -> Any:
        result = getattr(provider.aio, method)("Capital of France?")
        if method == "stream_chat_completion":
            return [item async for item in result]
        return await result

    return asyncio.run(run())


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_200_that_is_not_an_answer_raises_naming_what_was_wrong(server: FaultServer, mode: str, case: str) -> None:
    body, content_type, names = CALLS[case]
    with pytest.raises(InvalidResponseError, match=names) as raised:
        call(server, mode, respond(200, body, content_type=content_type))
    assert server.count == 1  # not asked again
    assert raised.value.fallback  # but a router may ask the next provider


@pytest.mark.parametrize("case", sorted(STREAMS))
def test_a_stream_that_is_not_an_answer_ends_with_an_error(server: FaultServer, mode: str, case: str) -> None:
    events, names = STREAMS[case]
    streamed = call(server, mode, sse(events), "stream_chat_completion")
    error = ending_error(streamed)
    assert isinstance(error, InvalidResponseError) and re.search(names, str(error)), repr(error)
    assert server.count == 1


def test_keep_alive_comments_in_the_stream_are_ignored(server: FaultServer, mode: str) -> None:
    """SSE comment lines are legal; google-genai's line reader would take them for JSON (the
    guarded client of llm_core.transport drops them first)."""
    events = up.gemini_sse_events(["Par", "is."])
    with_comments = [": keep-alive\r\n\r\n", *[e + ":\r\n: ping\r\n\r\n" for e in events]]
    streamed = call(server, mode, sse(with_comments), "stream_chat_completion")
    assert "".join(e.text or "" for e in streamed if e.type is StreamEventType.TOKEN) == "Paris."
    assert [e.type for e in streamed][-2:] == [StreamEventType.METADATA, StreamEventType.END]
    assert server.count == 1

