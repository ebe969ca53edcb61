"""Replay of real built-in-tool traffic through the plugins and the real SDKs.

The recordings are vcrpy cassettes another project recorded against the real OpenAI and Gemini
APIs (web search, code execution, file search, remote MCP, URL context): the folder named by
``LLM_CORE_BUILTIN_RECORDINGS``, else ``reference-recordings/builtin-tools`` in the ``shared``
folder beside the repository. They are read where they lie, never copied into the repository;
tests that need them are skipped when they are absent.

A :class:`Recording` answers the SDK's requests, in order, with the recorded responses (a
JSON body stored as ``parsed_body`` is turned back into JSON text), checks that each request
goes to the recorded endpoint, and keeps what the SDK sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path(
    os.environ.get("LLM_CORE_BUILTIN_RECORDINGS") or ROOT.parent / "shared" / "reference-recordings" / "builtin-tools"
)
OPENAI = FOLDER / "pydantic-ai/tests/models/cassettes/test_openai_responses"
GEMINI = FOLDER / "pydantic-ai/tests/models/cassettes/test_google"
GEMINI_CODE = FOLDER / "pydantic-ai/tests/models/google/cassettes/test_code_execution"
OPENAI_CHAT = FOLDER / "pydantic-ai/tests/models/cassettes/test_openai"
#: Google Search beside function declarations on Gemini 3 was recorded on Vertex AI.
VERTEX = FOLDER.parent / "vertex/pydantic-ai/tests/models/cassettes/test_google"
#: The image generation tool is in the older set beside the folder (the same project's recordings).
OPENAI_IMAGES = FOLDER.parent / "tests/models/cassettes/test_openai_responses"
KEY = "test-key-not-a-secret"

needs_recordings = pytest.mark.skipif(not FOLDER.is_dir(), reason=f"the built-in tool recordings are not at {FOLDER}")
#: The model API calls of a recording (setup calls such as file uploads are left out).
_MODEL_CALLS = ("/responses", "/chat/completions", ":generateContent", ":streamGenerateContent")


class Recording:
    """The model calls of one recorded cassette, served in order to the SDK."""

    def __init__(self, path: Path) -> None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        self.name = path.stem
        self.interactions = [
            item for item in data["interactions"] if urlpath(item["request"]["uri"]).endswith(_MODEL_CALLS)
        ]
        self.sent: list[Any] = []

    def request(self, index: int) -> dict[str, Any]:
        """The JSON body of recorded request ``index``."""
        body: dict[str, Any] = _json(self.interactions[index]["request"])
        return body

    def response(self, index: int) -> Any:
        """The JSON body of recorded answer ``index`` (``None`` for an event stream)."""
        answer = self.interactions[index]["response"]
        return None if _is_stream(answer) else _json(answer)

    def events(self, index: int) -> list[dict[str, Any]]:
        """The server-sent events of recorded answer ``index``."""
        text = self.interactions[index]["response"]["body"]["string"]
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self._answer)

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        index = len(self.sent)
        assert index < len(self.interactions), f"{self.name}: more requests than recorded ({index + 1})"
        recorded = self.interactions[index]
        wanted = urlpath(recorded["request"]["uri"]).rsplit("/", 1)[-1]
        assert request.url.path.endswith(wanted), f"{self.name}: sent {request.url.path}, recorded {wanted}"
        self.sent.append(json.loads(request.read()))
        answer = recorded["response"]
        if _is_stream(answer):
            content, kind = answer["body"]["string"].encode(), "text/event-stream"
        else:
            content, kind = json.dumps(_json(answer)).encode(), "application/json"
        return httpx2.Response(answer["status"]["code"], headers={"content-type": kind}, content=content)

    @property
    def all_played(self) -> bool:
        return len(self.sent) == len(self.interactions)


def _json(message: dict[str, Any]) -> Any:
    """A recorded JSON body: stored parsed (``parsed_body``) or as text (``body``)."""
    if "parsed_body" in message:
        return message["parsed_body"]
    body = message["body"]
    return json.loads(body["string"] if isinstance(body, dict) else body)


def _is_stream(answer: dict[str, Any]) -> bool:
    kinds = [
        value
        for name, values in answer.get("headers", {}).items()
        if name.lower() == "content-type"
        for value in values
    ]
    return any("event-stream" in kind for kind in kinds)


def urlpath(uri: str) -> str:
    return httpx2.URL(uri).path


def openai_provider(recording: Recording) -> Any:
    from core_openai_plugin.provider import OpenAIProvider

    return OpenAIProvider(api_key=KEY, client_args={"transport": recording.transport()})


def gemini_provider(recording: Recording) -> Any:
    from core_gemini_plugin.provider import GeminiProvider

    transport = recording.transport()
    return GeminiProvider(api_key=KEY, client_args={"transport": transport}, async_client_args={"transport": transport})


def openai_chat_endpoint(recording: Recording) -> Any:
    """An endpoint of OpenAI's Chat Completions API (the ``openai`` preset) answered by ``recording``."""
    from llm_core.registry import Registry

    registry = Registry.discover()
    transport = recording.transport()
    registry.add_endpoint(
        "recorded", plugin="openai", preset="openai", api_key=KEY, client_args={"transport": transport}
    )
    return registry.get("recorded")


def vertex_provider(recording: Recording, project: str) -> Any:
    """A Vertex AI provider on ``project`` (location ``global``) with a token that needs no refresh."""
    from google.oauth2.credentials import Credentials

    from core_gemini_plugin.provider import VertexProvider

    transport = recording.transport()
    return VertexProvider(
        project=project,
        location="global",
        credentials=Credentials(token="ya29.test-token"),
        client_args={"transport": transport},
        async_client_args={"transport": transport},
    )
