"""No silent success: an HTTP 200 that is not a finished Responses answer raises
InvalidResponseError naming what was wrong, through the real SDK against a loopback server
(127.0.0.1), sync and async, calls and streams; one request each (not retried on the same
provider). SSE comment lines (``: keep-alive``) are legal and ignored.

The well-formed bodies come from ``tests/reliability/upstreams.py`` (modelled on the SDK types and
real traffic); each malformed one changes one thing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from llm_core.errors import InvalidResponseError
from llm_core.responses import ImageResponse
from llm_core.streaming import StreamEventType
from tests.openai.openai_scenarios import make_provider
from tests.reliability import upstreams as up
from tests.reliability.fault_server import Behaviour, FaultServer, respond, sse
from tests.reliability.stream_endings import ending_error

MODEL = "gpt-4.1"


def with_fields(**changes: Any) -> dict[str, Any]:
    return {**up.openai_text("Paris."), **changes}


def event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': 0, **fields})}\n\n"


#: (body, content type, what the error names)
CALLS: dict[str, tuple[str, str, str]] = {
    "html": ("<html><body>Gateway</body></html>", "text/html", r"text '<html><body>Gateway"),
    "empty object": ("{}", "application/json", "output is null, not a list"),
    "array": ("[]", "application/json", "a JSON array instead of a response object"),
    "null": ("null", "application/json", "null instead of a response object"),
    "bare string": ('"Paris."', "application/json", r"text 'Paris\.' instead of a response object"),
    "bare number": ("42", "application/json", "the bare value 42"),
    "failed without error": (json.dumps(with_fields(status="failed")), "application/json", "failed without saying"),
    "in progress": (json.dumps(with_fields(status="in_progress")), "application/json", "'in_progress', not completed"),
    "queued": (json.dumps(with_fields(status="queued")), "application/json", "'queued', not completed"),
    "no status": (json.dumps({k: v for k, v in up.openai_text("x").items() if k != "status"}), "application/json",
                  "status is missing"),
    "incomplete without output": (
        json.dumps(with_fields(status="incomplete", output=[], incomplete_details={"reason": "max_output_tokens"})),
        "application/json", r"incomplete \(max_output_tokens\) before any output: raise max_tokens"),
    "no output": (json.dumps(with_fields(output=[])), "application/json", "carries no text, tool call"),
    "output not a list": (json.dumps(with_fields(output={"type": "message"})), "application/json",
                          "output is a dict, not a list"),
    "item not an object": (json.dumps(with_fields(output=["Paris."])), "application/json",
                           r"output item 0 is text 'Paris\.', not an object"),
    "part not an object": (
        json.dumps(with_fields(output=[{**up.openai_message("x"), "content": ["Paris."]}])), "application/json",
        "neither output_text nor refusal"),
}

INCOMPLETE = up.openai_response([up.openai_message("Half")], status="incomplete")
#: (events, what the error names)
STREAMS: dict[str, tuple[list[str], str]] = {
    "html": (["<html><body>Gateway</body></html>\n"], "carried no events"),
    "array event": (["data: []\n\n"], "a stream event that is a JSON array"),
    "bare string event": (['data: "Paris."\n\n'], r"a stream event that is text 'Paris\.'"),
    "event without a type": (["data: {}\n\n"], "an object without a type"),
    "completed but in progress": (
        [event("response.completed", response=up.openai_response([], status="in_progress"))],
        "'in_progress', not completed"),
    "completed without output": ([event("response.completed", response=up.openai_response([]))],
                                 "carries no text, tool call"),
    "incomplete without output": (
        [event("response.incomplete", response={**INCOMPLETE, "output": [],
                                                "incomplete_details": {"reason": "max_output_tokens"}})],
        "before any output"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def model_for(method: str) -> str:
    return "dall-e-3" if method == "generate_image" else MODEL


def call(server: FaultServer, mode: str, behaviour: Behaviour, method: str = "chat_completion") -> Any:
    server.clear()
    server.script(behaviour)
    provider = make_provider(base_url=server.url + "/v1")
    if mode == "sync":
        result = getattr(provider, method)("Capital of France?", model=model_for(method))
        return list(result) if method == "stream_chat_completion" else result

    async def run() -> Any:
        result = getattr(provider.aio, method)("Capital of France?", model=model_for(method))
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


def test_an_incomplete_answer_cut_at_max_output_tokens_is_a_truncated_answer(server: FaultServer, mode: str) -> None:
    """The API's meaning: ``incomplete`` + ``max_output_tokens`` with text is the text so far."""
    body = {**INCOMPLETE, "incomplete_details": {"reason": "max_output_tokens"}}
    response = call(server, mode, respond(200, json.dumps(body)))
    assert (response.content, response.finish_reason, response.is_truncated) == ("Half", "length", True)


def test_keep_alive_comments_in_the_stream_are_ignored(server: FaultServer, mode: str) -> None:
    """SSE comment lines are legal (the SDK's SSE decoder skips lines starting with ':')."""
    events = up.openai_sse_events(["Par", "is."])
    with_comments = [": keep-alive\n\n", *[e + ": keep-alive\n\n" for e in events]]
    streamed = call(server, mode, sse(with_comments), "stream_chat_completion")
    assert "".join(e.text or "" for e in streamed if e.type is StreamEventType.TOKEN) == "Paris."
    assert [e.type for e in streamed][-2:] == [StreamEventType.METADATA, StreamEventType.END]
    assert server.count == 1


# -- output items the library does not map are never dropped silently -----------------------------

#: An image_generation_call item as the real API sends it, result shortened.
JPEG = b"\xff\xd8\xff\xe0fake-jpeg"
IMAGE_CALL = {"id": "ig_rel_1", "type": "image_generation_call", "status": "completed", "background": "opaque",
              "output_format": "jpeg", "quality": "high", "size": "1536x1024",
              "revised_prompt": "A pink axolotl underwater.", "result": base64.b64encode(JPEG).decode()}
#: A web_search_call item (openai.types.responses.ResponseFunctionWebSearch), which has no typed field.
SEARCH = {"id": "ws_rel_1", "type": "web_search_call", "status": "completed",
          "action": {"type": "search", "query": "axolotl"}}
ITEMS = [IMAGE_CALL, SEARCH, up.openai_message("Here it is.")]


def check_items(metadata: dict[str, Any]) -> None:
    [image] = metadata["images"]
    assert isinstance(image, ImageResponse)
    assert (image.data, image.mime_type, image.revised_prompt) == (JPEG, "image/jpeg", "A pink axolotl underwater.")
    assert image.metadata["size"] == "1536x1024" and "result" not in image.metadata
    assert metadata["output_items"] == [SEARCH]


def test_image_generation_and_other_items_are_kept_in_a_call(server: FaultServer, mode: str) -> None:
    response = call(server, mode, respond(200, json.dumps(up.openai_response(ITEMS))))
    assert response.content == "Here it is."
    check_items(response.metadata)


def test_image_generation_and_other_items_are_kept_in_a_stream(server: FaultServer, mode: str) -> None:
    events = [event("response.output_item.done", output_index=i, item=item) for i, item in enumerate(ITEMS)]
    events.append(event("response.completed", response=up.openai_response(ITEMS)))
    streamed = call(server, mode, sse(events), "stream_chat_completion")
    metadata = streamed[-2].metadata
    assert metadata is not None
    check_items(metadata.extra)


def test_an_image_server_answering_with_a_url_gets_a_typed_error(server: FaultServer, mode: str) -> None:
    """A DALL-E-style compatible server that ignores response_format=b64_json; nothing is downloaded."""
    url = "https://images.example/x.png"
    with pytest.raises(InvalidResponseError, match="URL instead of image bytes") as raised:
        call(server, mode, respond(200, json.dumps({"created": 1, "data": [{"url": url}]})), "generate_image")
    assert raised.value.raw == url
    assert server.count == 1 and server.requests[0].json["response_format"] == "b64_json"
