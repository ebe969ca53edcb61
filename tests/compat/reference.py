"""Real Chat Completions traffic, recorded against OpenAI, DeepSeek, Groq, OpenRouter, Ollama and
Gemini's OpenAI-compatible layer by other projects (``shared/reference-recordings``, beside the
repository; see its INDEX.md), replayed through the real openai SDK: each recorded answer goes
back, in order, to the requests our provider sends, and our requests are kept so that a test can
compare them with the recorded ones. The files are read where they are, never copied here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import yaml

from llm_core.provider import BaseProvider
from llm_core.registry import Registry

#: ``shared/reference-recordings/chat-completions`` beside the repository (``$LLM_CORE_REFERENCE_RECORDINGS``
#: names another folder of the same layout).
SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference-recordings"
FOLDER = Path(os.environ.get("LLM_CORE_REFERENCE_RECORDINGS") or SHARED) / "chat-completions"


class Recording:
    """One recorded file: its chat-completions interactions, answered in order."""

    def __init__(self, name: str) -> None:
        (path,) = [path for path in FOLDER.rglob("*.yaml") if path.stem == name]
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        self.interactions = [i for i in data["interactions"] if i["request"]["uri"].endswith("/chat/completions")]
        self.sent: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return str(self.interactions[0]["request"]["uri"]).removesuffix("/chat/completions")

    def request(self, index: int) -> dict[str, Any]:
        """The recorded request body of interaction ``index``."""
        body: dict[str, Any] = self.interactions[index]["request"]["parsed_body"]
        return body

    def response(self, index: int) -> Any:
        response = self.interactions[index]["response"]
        return response.get("parsed_body") or response["body"]["string"]

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        index = len(self.sent)
        assert index < len(self.interactions), f"no recorded answer left for {request.url}"
        self.sent.append(json.loads(request.read()))
        recorded = self.interactions[index]["response"]
        if "parsed_body" in recorded:
            content, kind = json.dumps(recorded["parsed_body"]).encode(), "application/json"
        else:
            kind = recorded["headers"].get("content-type", ["application/json"])[0]  # one file kept no headers
            content = recorded["body"]["string"].encode()
        return httpx2.Response(recorded["status"]["code"], headers={"content-type": kind}, content=content)

    def provider(self, **settings: Any) -> BaseProvider:
        """An endpoint provider (``settings``: ``preset``, ``api_key``, ...) whose every request
        this recording answers; no retries (each recorded failure is answered once)."""
        registry = Registry.discover()
        settings.setdefault("base_url", self.base_url)
        registry.add_endpoint("recorded", plugin="openai", retry={"max_attempts": 1},
                              client_args={"transport": httpx2.MockTransport(self.answer)}, **settings)  # fmt: skip
        return registry.get("recorded")
