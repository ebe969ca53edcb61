"""Answers that are not answers: an HTTP 200 whose body is a Responses answer with one field of
the wrong type, nested deeper than any parser recurses, or whose function-call arguments nest
5,000 deep raises InvalidResponseError (which a router falls back on), never a generic
ProviderError or a raw RecursionError / TypeError. Real SDK, loopback server, sync and async,
calls and streams; one request each.

Each body is ``tests/reliability/upstreams.py``'s real answer with the one field named in its
case changed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from llm_core.errors import InvalidResponseError
from tests.openai.test_openai_malformed import call, event, mode, server, with_fields
from tests.reliability import upstreams as up
from tests.reliability.fault_server import FaultServer, respond, sse
from tests.reliability.stream_endings import ending_error

__all__ = ["mode", "server"]  # the fixtures, shared with test_openai_malformed

#: Deeper than Python's recursion limit: json.loads, pydantic and any recursive walk give up.
DEEP = 100_000
#: Deep enough for json.loads of the arguments alone (the body around them is shallow).
DEEP_ARGUMENTS = 5_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_in(body: dict[str, Any], field: str, depth: int = DEEP) -> str:
    """``body`` as JSON with ``field``'s value replaced by lists nested ``depth`` deep."""
    marker = "__deep__"
    return json.dumps({**body, field: marker}).replace(json.dumps(marker), nested(depth), 1)


def function_call(arguments: object) -> dict[str, Any]:
    """A function_call output item as the API sends it (ResponseFunctionToolCall)."""
    return {"id": "fc_rel_1", "type": "function_call", "status": "completed", "call_id": "call_rel_1",
            "name": "lookup", "arguments": arguments}


DEEP_CALL = function_call(nested(DEEP_ARGUMENTS))

#: (body, what the error names)
CALLS: dict[str, tuple[str, str]] = {
    # usage: an object with token counts, here a list
    "usage a list": (json.dumps(with_fields(usage=[1, 2])), "usage"),
    # usage.input_tokens: an int, here an object
    "input_tokens an object": (json.dumps(with_fields(usage={**up.openai_usage(), "input_tokens": {"n": 7}})),
                               "usage"),
    # metadata: a flat object, here lists nested 100,000 deep (json.loads raises RecursionError)
    "body nested deep": (deep_in(up.openai_text("Paris."), "metadata"), "nested too deep"),
    # function_call.arguments: a JSON object in a string, here the object itself (not a string)
    "arguments an object": (json.dumps(up.openai_response([function_call({"city": "Paris"})])),
                            "could not be read"),
    # function_call.arguments: a JSON object in a string, here lists nested 5,000 deep
    "arguments nested deep": (json.dumps(up.openai_response([DEEP_CALL])), "nested too deep"),
}

#: (events, what the error names)
STREAMS: dict[str, tuple[list[str], str]] = {
    # the completed event's response.usage: an object, here a list
    "usage a list": ([*up.openai_sse_events(["Paris."])[:-1],
                      event("response.completed", response=with_fields(usage=[1, 2]))], "usage"),
    # the completed event's response.usage.output_tokens: an int, here text
    "output_tokens text": ([*up.openai_sse_events(["Paris."])[:-1],
                            event("response.completed",
                                  response=with_fields(usage={**up.openai_usage(), "output_tokens": "five"}))],
                           "usage"),
    # an event's response.metadata: a flat object, here lists nested 100,000 deep
    "event nested deep": (
        ["event: response.completed\ndata: "
         + deep_in({"type": "response.completed", "sequence_number": 0,
                    "response": {**up.openai_text("Paris."), "metadata": "__deep__"}}, "x", 1)
         .replace(json.dumps("__deep__"), nested(DEEP)) + "\n\n"],
        "nested too deep"),
    # function_call_arguments.delta's delta: a piece of the arguments string, here a number
    "arguments delta a number": (
        [event("response.output_item.added", output_index=0, item={**DEEP_CALL, "arguments": ""}),
         event("response.function_call_arguments.delta", item_id="fc_rel_1", output_index=0, delta=42)],
        "could not be read"),
    # the same deep event after the first text delta: the driver's mid-stream failure path
    "event nested deep mid-stream": (
        [*up.openai_sse_events(["Par", "is."])[:5],
         "event: response.output_text.delta\ndata: "
         + deep_in({"type": "response.output_text.delta", "sequence_number": 5, "item_id": "msg_rel_1",
                    "output_index": 0, "content_index": 0, "delta": "is."}, "logprobs") + "\n\n"],
        "nested too deep"),
    # the done function_call item's arguments: a JSON object in a string, here lists nested 5,000 deep
    "arguments nested deep": (
        [event("response.output_item.done", output_index=0, item=DEEP_CALL),
         event("response.completed", response=up.openai_response([DEEP_CALL]))],
        "nested too deep"),
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
