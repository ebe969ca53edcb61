"""The providers under test: the core with its FakeProvider, and the two real plugins, each
pointed at a loopback fault server.

A target knows how to build its provider (base URL, key, timeout, retry policy) and how its
service words each fault on the wire (error bodies, streams), so that one scenario table drives
every provider.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from llm_core.provider import BaseProvider
from llm_core.retry import RetryPolicy
from tests.reliability import upstreams as up
from tests.reliability.fault_server import Behaviour, Request, cut_body, json_response, respond, sse

TEST_KEY = "test-key"


@dataclass(frozen=True)
class Target:
    """A provider driven over HTTP by the fault server."""

    name: str
    module: str  # the plugin's provider module
    cls: str
    base_suffix: str
    upstream: Callable[[Request], Behaviour]
    status: Callable[..., Behaviour]  # status(code, headers=..., retry_delay=...)
    text_body: Callable[[str], Any]
    stream_events: Callable[[Sequence[str]], list[str]]
    error_event: Callable[[int], str]  # an in-stream error event (server error)
    bad_json_event: str

    @property
    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def provider_class(self) -> type[BaseProvider]:
        module = importlib.import_module(self.module)
        cls: type[BaseProvider] = getattr(module, self.cls)
        return cls

    def build(
        self, base_url: str, *, retry: RetryPolicy | None = None, timeout: float = 5.0, api_key: str = TEST_KEY,
        **options: Any,
    ) -> BaseProvider:
        return self.provider_class()(
            api_key=api_key,
            base_url=base_url + self.base_suffix,
            timeout=timeout,
            retry=retry or RetryPolicy.none(),
            **options,
        )

    # faults in this service's words

    def ok(self, text: str = "all good") -> Behaviour:
        return json_response(200, self.text_body(text))

    def stream(self, pieces: Sequence[str], *, cut_after: int | None = None) -> Behaviour:
        return sse(self.stream_events(pieces), cut_after=cut_after)

    def stream_cut(self, pieces: Sequence[str], keep_tokens: int) -> Behaviour:
        """The stream is cut (connection closed mid-body) after ``keep_tokens`` text events."""
        events = self.stream_events(pieces)
        first_text = next(i for i, e in enumerate(events) if _is_text_event(self.name, e))
        return sse(events, cut_after=first_text + keep_tokens)

    def stream_with_error(self, pieces: Sequence[str], keep_tokens: int) -> Behaviour:
        """``keep_tokens`` text events, then the service's in-stream error event."""
        events = self.stream_events(pieces)
        first_text = next(i for i, e in enumerate(events) if _is_text_event(self.name, e))
        return sse([*events[: first_text + keep_tokens], self.error_event(500)])

    def stream_with_bad_json(self, pieces: Sequence[str], keep_tokens: int) -> Behaviour:
        events = self.stream_events(pieces)
        first_text = next(i for i, e in enumerate(events) if _is_text_event(self.name, e))
        return sse([*events[: first_text + keep_tokens], self.bad_json_event])

    def stream_ends_early(self, pieces: Sequence[str], keep_tokens: int) -> Behaviour:
        """A well-formed stream that simply ends after ``keep_tokens`` text events, without the
        service's final event (no finish reason / no ``response.completed``)."""
        events = self.stream_events(pieces)
        first_text = next(i for i, e in enumerate(events) if _is_text_event(self.name, e))
        return sse(events[: first_text + keep_tokens])

    def malformed(self) -> Behaviour:
        """A complete 200 answer whose JSON is cut short (Content-Length matches)."""
        body = __import__("json").dumps(self.text_body("this answer is cut short"))
        return respond(200, body[: len(body) // 2])

    def body_cut(self) -> Behaviour:
        """``Content-Length`` promises the whole answer; the connection closes half-way."""
        body = __import__("json").dumps(self.text_body("this answer is cut short"))
        return cut_body(200, body, keep=len(body) // 2)


def _is_text_event(target: str, event: str) -> bool:
    if target == "openai":
        return event.startswith("event: response.output_text.delta")
    return '"text"' in event


def _gemini_error_event(code: int) -> str:
    body = up.gemini_error(code, up.GEMINI_STATUS.get(code, "INTERNAL"), "test fault inside the stream")
    return f"data: {__import__('json').dumps(body)}\r\n\r\n"


def _openai_error_event(code: int) -> str:
    import json

    data = {"type": "error", "code": "server_error", "message": "test fault inside the stream", "param": None,
            "sequence_number": 99}
    return f"event: error\ndata: {json.dumps(data)}\n\n"


GEMINI = Target(
    name="gemini",
    module="core_gemini_plugin.provider",
    cls="GeminiProvider",
    base_suffix="",
    upstream=up.gemini_upstream,
    status=up.gemini_status,
    text_body=up.gemini_text,
    stream_events=up.gemini_sse_events,
    error_event=_gemini_error_event,
    bad_json_event='data: {"candidates": [{"content": {"parts": [{"text": "bro\r\n\r\n',
)

OPENAI = Target(
    name="openai",
    module="core_openai_plugin.provider",
    cls="OpenAIProvider",
    base_suffix="/v1",
    upstream=up.openai_upstream,
    status=lambda code, headers=None, retry_delay=None: up.openai_status(code, headers=headers),
    text_body=up.openai_text,
    stream_events=up.openai_sse_events,
    error_event=_openai_error_event,
    bad_json_event='event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "del\n\n',
)

HTTP_TARGETS = (GEMINI, OPENAI)
