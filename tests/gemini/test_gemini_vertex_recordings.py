"""Real Vertex AI traffic, recorded by another project (``shared/reference-recordings/vertex``
beside the repository, see its INDEX.md, files 20-25), replayed through the real google-genai
SDK: each recorded answer goes back, in order, to the request our provider sends, which must go
to the recorded Vertex AI path. The files are read where they are, never copied here; the tests
are skipped without them.

File 23 is not replayed: it was recorded with an older SDK that sent ``gemini-embedding-001`` to
``:predict``; google-genai 3.6 sends every Gemini model to ``:embedContent``
(``_transformers.t_is_vertex_embed_content_model``), so its request would not match.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from core_gemini_plugin.provider import VertexProvider
from llm_core.builtin_tools import WebSearch
from llm_core.messages import ChatMessage, ImagePart, TextPart
from llm_core.streaming import StreamEventType

SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference-recordings"
FOLDER = Path(os.environ.get("LLM_CORE_REFERENCE_RECORDINGS") or SHARED) / "vertex" / "pydantic-ai" / "tests"
GOOGLE = FOLDER / "models" / "cassettes" / "test_google"
pytestmark = pytest.mark.skipif(not FOLDER.is_dir(), reason=f"the Vertex AI recordings are not at {FOLDER}")


class Recording:
    """The interactions of one recorded file, answered in order; what the SDK sent is kept."""

    def __init__(self, path: Path) -> None:
        self.interactions = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
        self.sent: list[httpx2.Request] = []

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        recorded = self.interactions[len(self.sent)]
        self.sent.append(request)
        assert str(request.url).partition("?")[0] == recorded["request"]["uri"].partition("?")[0]
        response = recorded["response"]
        if "parsed_body" in response:
            content, kind = json.dumps(response["parsed_body"]).encode(), "application/json"
        else:
            content, kind = response["body"]["string"].encode(), "text/event-stream"
        return httpx2.Response(response["status"]["code"], headers={"content-type": kind}, content=content)

    def body(self, index: int) -> Any:
        return json.loads(self.sent[index].content)

    def provider(self) -> VertexProvider:
        """On the recorded project and location, with a token that needs no refresh."""
        from google.oauth2.credentials import Credentials

        transport = httpx2.MockTransport(self.answer)
        return VertexProvider(project="pydantic-ai", location="global", credentials=Credentials(token="ya29.test"),
                              client_args={"transport": transport}, async_client_args={"transport": transport})


def run(mode: str, call: Any) -> Any:
    """``call(provider_or_aio)`` through the sync API or ``provider.aio``."""
    return call("sync") if mode == "sync" else asyncio.run(call("async"))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_chat(mode: str) -> None:
    recording = Recording(GOOGLE / "test_google_model_vertex_provider.yaml")
    provider = recording.provider()
    messages = [ChatMessage.system("You are a helpful chatbot."), ChatMessage.user("What is the capital of France?")]
    api = provider if mode == "sync" else provider.aio
    result = api.chat_completion(messages, model="gemini-2.0-flash")
    response = result if mode == "sync" else asyncio.run(result)
    assert response.content == "The capital of France is Paris.\n" and response.finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (13, 8, 21)
    assert response.response_id == "1VpeaKq4CfH_2PgPh_z--AY" and response.model == "gemini-2.0-flash"
    recorded = recording.interactions[0]["request"]["parsed_body"]
    sent = recording.body(0)
    assert sent["contents"] == recorded["contents"]
    assert sent["systemInstruction"]["parts"] == recorded["systemInstruction"]["parts"]
    assert recording.sent[0].headers["authorization"] == "Bearer ya29.test"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stream_with_a_thought_signature(mode: str) -> None:
    recording = Recording(GOOGLE / "test_google_vertex_service_tier_flex_stream.yaml")
    provider = recording.provider()

    async def collect() -> list[Any]:
        return [e async for e in provider.aio.stream_chat_completion("Reply with exactly: OK",
                                                                     model="gemini-3-flash-preview")]

    events = (list(provider.stream_chat_completion("Reply with exactly: OK", model="gemini-3-flash-preview"))
              if mode == "sync" else asyncio.run(collect()))
    assert "".join(e.text or "" for e in events if e.type == StreamEventType.TOKEN) == "OK"
    [metadata] = [e.metadata for e in events if e.type == StreamEventType.METADATA]
    assert metadata is not None and metadata.stop_reason == "stop"
    assert (metadata.input_tokens, metadata.output_tokens, metadata.thinking_tokens) == (5, 1, 100)
    assert metadata.response_id == "a9--aa6MOKL4vdIPz7X2iQ4"
    assert recording.sent[0].url.params["alt"] == "sse"


def test_a_cloud_storage_image() -> None:
    recording = Recording(GOOGLE / "test_google_url_input[ImageUrl (gs)].yaml")
    url = "gs://pydantic-ai-dev/wikipedia_screenshot.png"
    message = ChatMessage.user([TextPart(text="What is the main content of this URL?"),
                                ImagePart(url=url, mime_type="image/png")])
    response = recording.provider().chat_completion([message], model="gemini-2.0-flash")
    assert response.content.startswith("The main content of the URL is the Wikipedia homepage")
    recorded = recording.interactions[0]["request"]["parsed_body"]
    assert recording.body(0)["contents"] == recorded["contents"]  # fileData with the gs:// URI, as recorded


def test_count_tokens_with_the_system_text_and_tools_then_a_grounded_answer() -> None:
    """Vertex AI's countTokens takes the system instruction and tools (the Developer API's does not)."""
    recording = Recording(GOOGLE / "test_google_vertexai_count_tokens_forwards_native_tools.yaml")
    provider = recording.provider()
    messages = [ChatMessage.system("You are a helpful chatbot."), ChatMessage.user("What is the capital of France?")]
    counted = provider.count_tokens(messages, model="gemini-2.5-flash", builtin_tools=[WebSearch()])
    assert counted.input_tokens == 13
    recorded = recording.interactions[0]["request"]["parsed_body"]
    sent = recording.body(0)
    assert (sent["contents"], sent["systemInstruction"]["parts"], sent["tools"]) == (
        recorded["contents"], recorded["systemInstruction"]["parts"], recorded["tools"])
    answer = provider.chat_completion(messages, model="gemini-2.5-flash", builtin_tools=[WebSearch()])
    assert answer.content == "The capital of France is Paris."
    assert answer.usage.thinking_tokens == 32 and answer.usage.total_tokens == 52


def test_embeddings_of_gemini_embedding_2() -> None:
    recording = Recording(FOLDER / "cassettes" / "test_embeddings" / "test_google_task_prefix_vertex.yaml")
    text = "task: question answering | query: Hello, world!"
    response = recording.provider().embeddings(text, model="gemini-embedding-2")
    [vector] = response.vectors
    assert len(vector) == 3072 and response.usage.prompt_tokens == 11
    assert recording.body(0)["content"]["parts"] == [{"text": text}]
