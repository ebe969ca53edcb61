"""Vision and documents (inline data, formats and size checked before sending) and embeddings."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from llm_core.errors import InvalidInputError, InvalidRequestError, NotFoundError, UnsupportedFeatureError
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, TextPart
from llm_core.responses import EmbeddingResponse, VisionResponse
from tests.gemini.gemini_inputs import BROKEN_PNG, EMPTY_PDF, PDF, PNG
from tests.gemini.gemini_support import Offline, Runner, cassette, sent_body

# -- vision and documents ------------------------------------------------------------------------


@pytest.mark.parametrize("image", [PNG, "data:image/png;base64," + base64.b64encode(PNG).decode()])
def test_analyze_image_sends_inline_data(run: Runner, image: bytes | str) -> None:
    with cassette("vision_png") as recorded:
        response = run("analyze_image", image, "What is in this image?", mime_type="image/png")
    assert sent_body(recorded)["contents"] == [{"role": "user", "parts": [
        {"text": "What is in this image?"},
        {"inlineData": {"data": base64.urlsafe_b64encode(PNG).decode(), "mime_type": "image/png"}},  # SDK: URL-safe
    ]}]
    assert isinstance(response, VisionResponse)
    assert response.content == "The image is a single transparent pixel."


def test_pdf_document_in_a_chat_message(run: Runner) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "What is the invoice total?"},
                                           {"type": "document", "data": PDF, "mime_type": "application/pdf"}]}
    with cassette("document_pdf") as recorded:
        response = run("chat_completion", [message])
    parts = sent_body(recorded)["contents"][0]["parts"]
    assert parts[1] == {"inlineData": {"data": base64.urlsafe_b64encode(PDF).decode(), "mime_type": "application/pdf"}}
    assert response.content == "The invoice total is 99 EUR."


def test_an_image_the_service_cannot_read(run: Runner) -> None:
    with cassette("vision_invalid_image"), pytest.raises(InvalidRequestError, match="Unable to process input image"):
        run("analyze_image", BROKEN_PNG, "What is in this image?", mime_type="image/png")


def test_a_document_the_service_rejects(run: Runner) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "What is the invoice total?"},
                                           {"type": "document", "data": EMPTY_PDF, "mime_type": "application/pdf"}]}
    with cassette("document_no_pages") as recorded, pytest.raises(InvalidRequestError, match="no pages"):
        run("chat_completion", [message])
    assert recorded.play_count == 1  # a bad request is not retried


def test_declared_formats_and_limits(offline: Offline) -> None:
    provider, _ = offline()
    assert provider.supports_vision() and provider.supports_documents()
    assert provider.supported_image_formats == ("png", "jpeg", "webp", "heic")
    assert provider.supported_document_formats == ("pdf",)
    assert provider.max_image_size == provider.max_document_size == 15 * 1024 * 1024


GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"


@pytest.mark.parametrize(("content", "message"), [
    ([{"type": "image", "data": GIF, "mime_type": "image/gif"}], "format 'gif' is not supported"),
    ([{"type": "image", "data": PNG, "mime_type": "image/jpeg"}], "not the declared image/jpeg"),
    ([{"type": "image", "data": b"\x89PNG\r\n\x1a\n" + bytes(15 * 1024 * 1024)}], "accepts at most"),
    ([{"type": "document", "data": b"PK\x03\x04docx", "mime_type": "application/msword"}], "not supported"),
    ([{"type": "document", "data": b"%PDF-" + bytes(15 * 1024 * 1024), "mime_type": "application/pdf"}],
     "accepts at most"),
])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_media_is_refused_and_nothing_is_sent(offline: Offline, mode: str, content: list[dict[str, Any]],
                                                  message: str) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match=message):
        Runner(provider, mode)("chat_completion", [{"role": "user", "content": ["Look:", *content]}])
    assert sent == []


def test_analyze_image_needs_an_image_model(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(UnsupportedFeatureError, match="vision"):
        provider.analyze_image(PNG, model="gemini-embedding-001")
    assert sent == []


# -- embeddings ----------------------------------------------------------------------------------


def test_one_input(run: Runner) -> None:
    with cassette("embed_one") as recorded:
        response = run("embeddings", "Hello, world!")
    assert recorded.requests[0].uri.endswith("/v1/models/gemini-embedding-001:batchEmbedContents")
    assert sent_body(recorded) == {"requests": [{"content": {"parts": [{"text": "Hello, world!"}], "role": "user"},
                                                 "model": "models/gemini-embedding-001"}]}
    assert isinstance(response, EmbeddingResponse)
    assert len(response.vectors) == 1 and response.dimensions == 3072
    assert response.model == "gemini-embedding-001" and response.provider == "gemini"


def test_many_inputs_with_dimensions_and_task_type(run: Runner) -> None:
    texts = ["The cat sat on the mat.", "A feline rested on the rug.", "Stock markets fell sharply today."]
    with cassette("embed_many") as recorded:
        response = run("embeddings", texts, dimensions=768, task_type="semantic_similarity")
    requests = sent_body(recorded)["requests"]
    assert [r["content"]["parts"][0]["text"] for r in requests] == texts
    assert {(r["taskType"], r["outputDimensionality"]) for r in requests} == {("SEMANTIC_SIMILARITY", 768)}
    assert len(response.vectors) == 3 and response.dimensions == 768
    assert response.similarity(0, 1) > response.similarity(0, 2)


def test_unknown_embedding_model(run: Runner) -> None:
    with cassette("embed_not_found"), pytest.raises(NotFoundError, match="text-embedding-000"):
        run("embeddings", "Hello, world!", model="text-embedding-000")


@pytest.mark.parametrize(("args", "options", "error"), [
    (["", "x"], {}, InvalidInputError),
    ([], {}, InvalidInputError),
    ("x", {"dimensions": 0}, InvalidInputError),
    ("x", {"model": "gemini-2.5-flash"}, UnsupportedFeatureError),
])
def test_invalid_embedding_calls_send_nothing(offline: Offline, args: Any, options: dict[str, Any],
                                              error: type[Exception]) -> None:
    provider, sent = offline()
    with pytest.raises(error):
        provider.embeddings(args, **options)
    assert sent == []


@pytest.mark.parametrize("part", [
    DocumentPart(data=b"\x00\x00\x00\x18ftypmp42video", mime_type="video/mp4"),
    ImagePart(data=b"\x00\x00\x00\x18ftypmp42video", mime_type="video/mp4"),
    DocumentPart(url="https://example.com/clip.webm", mime_type="video/webm"),
])
def test_inline_video_is_refused_as_video_not_as_a_document(part: Any, offline: Offline) -> None:
    """Gemini accepts video, but llm-core has no video part yet: refused before sending (decision)."""
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="is video input, which llm-core does not support") as raised:
        provider.chat_completion([ChatMessage.user([TextPart(text="What happens?"), part])])
    assert "document" not in str(raised.value) and sent == []
