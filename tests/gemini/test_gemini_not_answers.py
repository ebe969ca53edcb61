"""Answers that are not answers: an HTTP 200 whose body is a generateContent answer with one
field of the wrong type or missing, or nested deeper than any parser recurses, raises
InvalidResponseError (which a router falls back on), never a generic ProviderError, a raw
RecursionError, or an error saying the request was refused. Real SDK, loopback server, sync and
async, calls and streams; one request each.

Each body is ``tests/reliability/upstreams.py``'s real answer with the one field named in its
case changed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from llm_core.errors import InvalidResponseError
from tests.gemini.test_gemini_malformed import call, mode, server
from tests.reliability import upstreams as up
from tests.reliability.fault_server import FaultServer, respond, sse
from tests.reliability.stream_endings import ending_error

__all__ = ["mode", "server"]  # the fixtures, shared with test_gemini_malformed

#: Deeper than Python's recursion limit: json.loads, pydantic and any recursive walk give up.
DEEP = 100_000
#: The depth of function-call arguments in the outside report (the body's json.loads gives up).
DEEP_ARGUMENTS = 5_000
MARKER = "__deep__"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep(body: dict[str, Any], depth: int) -> str:
    """``body`` as JSON with the value ``MARKER`` replaced by lists nested ``depth`` deep."""
    return json.dumps(body).replace(json.dumps(MARKER), nested(depth), 1)


def with_usage(**changes: Any) -> dict[str, Any]:
    return {**up.gemini_text("Paris."), **changes}


#: A functionCall part as Gemini sends it.
CALL = {"functionCall": {"name": "lookup", "args": {"city": "Paris"}}}
NAMELESS = {"functionCall": {"args": {"city": "Paris"}}}

#: (body, what the error names)
CALLS: dict[str, tuple[str, str]] = {
    # functionCall.name: the function to call, here missing
    "function call without a name": (json.dumps(up.gemini_content([NAMELESS])), "function call without a name"),
    # modelVersion: a string, here lists nested 100,000 deep (json.loads raises RecursionError)
    "body nested deep": (deep(with_usage(modelVersion=MARKER), DEEP), "nested too deep"),
    # functionCall.args: an object, here lists nested 5,000 deep
    "arguments nested deep": (
        deep(up.gemini_content([{"functionCall": {"name": "lookup", "args": {"q": MARKER}}}]), DEEP_ARGUMENTS),
        "nested too deep"),
    # the cases below google-genai's own validation of the answer (GenerateContentResponse)
    # already refuses, mapped in errors.py; kept so that it stays an InvalidResponseError
    # functionCall.name: a string, here an object
    "function call name an object": (
        json.dumps(up.gemini_content([{"functionCall": {**CALL["functionCall"], "name": {"n": 1}}}])),
        "answer could not be read"),
    # usageMetadata: an object with token counts, here a list
    "usage a list": (json.dumps(with_usage(usageMetadata=[1, 2])), "answer could not be read"),
    # usageMetadata.promptTokenCount: an int, here an object
    "prompt tokens an object": (
        json.dumps(with_usage(usageMetadata={**up.gemini_usage(), "promptTokenCount": {"n": 7}})),
        "answer could not be read"),
}


def one_event(body: dict[str, Any], depth: int = 0) -> list[str]:
    return [f"data: {deep(body, depth) if depth else json.dumps(body)}\r\n\r\n"]


#: (events, what the error names)
STREAMS: dict[str, tuple[list[str], str]] = {
    # a chunk's functionCall.name: the function to call, here missing
    "function call without a name": (one_event(up.gemini_content([NAMELESS])), "function call without a name"),
    # a chunk's modelVersion: a string, here lists nested 100,000 deep
    "chunk nested deep": (one_event(with_usage(modelVersion=MARKER), DEEP), "nested too deep"),
    # the same deep chunk after a first text chunk: the driver's mid-stream failure path
    "chunk nested deep mid-stream": ([*up.gemini_sse_events(["Par", "is."])[:1],
                                      *one_event(with_usage(modelVersion=MARKER), DEEP)], "nested too deep"),
    # a chunk's functionCall.args: an object, here lists nested 5,000 deep
    "arguments nested deep": (
        one_event(up.gemini_content([{"functionCall": {"name": "lookup", "args": {"q": MARKER}}}]), DEEP_ARGUMENTS),
        "nested too deep"),
    # the last chunk's usageMetadata: an object with token counts, here a list (refused by
    # google-genai's validation, as in a call)
    "usage a list": ([*up.gemini_sse_events(["Par"]), *one_event(with_usage(usageMetadata=[1, 2]))],
                     "answer could not be read"),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_200_that_is_not_an_answer_is_an_invalid_response(server: FaultServer, mode: str, case: str) -> None:
    body, names = CALLS[case]
    with pytest.raises(InvalidResponseError, match=names) as raised:
        call(server, mode, respond(200, body))
    assert server.count == 1
    assert raised.value.fallback


@pytest.mark.parametrize("case", sorted(STREAMS))
def test_a_stream_that_is_not_an_answer_ends_with_an_invalid_response(
    server: FaultServer, mode: str, case: str
) -> None:
    events, names = STREAMS[case]
    streamed = call(server, mode, sse(events), "stream_chat_completion")
    error = ending_error(streamed)
    assert isinstance(error, InvalidResponseError) and re.search(names, str(error)), repr(error)
    assert server.count == 1
