"""Images (input_image) and PDFs (input_file): formats and sizes checked before any request."""

from __future__ import annotations

import pytest

from core_openai_plugin.provider import OpenAIProvider
from llm_core.errors import InvalidInputError, InvalidRequestError, UnsupportedFeatureError
from llm_core.messages import DocumentPart, ImagePart
from llm_core.responses import VisionResponse
from tests.openai.openai_scenarios import IMAGE_URL
from tests.openai.openai_wire import JPEG, PDF, PNG


async def test_image_bytes_go_as_a_base64_data_url(player):
    response = await player.play("vision_bytes")
    assert isinstance(response, VisionResponse)
    assert response.content == "It is a single, fully transparent pixel."
    [message] = player.sent()["input"]
    text, image = message["content"]
    assert text == {"type": "input_text", "text": "What is in this image?"}
    assert image["type"] == "input_image" and image["detail"] == "auto"
    assert image["image_url"] == "data:image/png;base64," + ImagePart(data=PNG).base64()


async def test_image_urls_are_passed_through(player):
    response = await player.play("vision_url")
    assert response.content == "Two dice on a checkerboard."
    image = player.sent()["input"][0]["content"][1]
    assert image == {"type": "input_image", "image_url": IMAGE_URL, "detail": "auto"}


async def test_several_images_keep_their_own_mime_types_and_detail(player):
    await player.play("vision_two_images")
    _, png, jpeg = player.sent()["input"][0]["content"]
    assert png["image_url"].startswith("data:image/png;base64,")
    assert jpeg["image_url"].startswith("data:image/jpeg;base64,/9j/")
    assert png["detail"] == jpeg["detail"] == "low"


async def test_pdfs_go_as_input_file_with_inline_data(player):
    response = await player.play("document_pdf")
    assert response.content == "The report says Q3 revenue grew 12%."
    document = player.sent()["input"][0]["content"][1]
    assert document == {"type": "input_file", "filename": "report.pdf",
                        "file_data": "data:application/pdf;base64," + DocumentPart(data=PDF).base64()}


async def test_an_image_the_api_cannot_read_is_an_invalid_request(player):
    with pytest.raises(InvalidRequestError, match="invalid_image_format"):
        await player.play("vision_invalid_image")


def test_declared_formats_and_limits():
    assert OpenAIProvider.supported_image_formats == ("png", "jpeg", "webp", "gif")
    assert OpenAIProvider.max_image_size == 20 * 1024 * 1024
    assert OpenAIProvider.supported_document_formats == ("pdf",)
    assert OpenAIProvider.max_document_size == 32 * 1024 * 1024


@pytest.mark.parametrize(("image", "mime", "message"), [
    (b"BM" + b"\0" * 60, "image/bmp", "format 'bmp' is not supported"),
    (JPEG, "image/png", "not the declared image/png"),
    (PNG + b"\0" * (20 * 1024 * 1024), "image/png", "at most 20,971,520 bytes"),
])
async def test_images_are_checked_before_sending(player, no_network, image, mime, message):
    with pytest.raises(InvalidInputError, match=message):
        await player.invoke(lambda p: p.analyze_image(image, "What is it?", mime_type=mime, model="gpt-4.1"))
    assert no_network == []


async def test_documents_are_checked_before_sending(player, no_network):
    word = DocumentPart(data=b"PK\x03\x04" + b"\0" * 20, mime_type="application/msword")
    with pytest.raises(InvalidInputError, match="'msword' is not supported"):
        await player.invoke(lambda p: p.chat_completion([{"role": "user", "content": [word]}], model="gpt-4.1"))
    big = DocumentPart(data=PDF + b"\0" * (32 * 1024 * 1024), mime_type="application/pdf")
    with pytest.raises(InvalidInputError, match="at most 33,554,432 bytes"):
        await player.invoke(lambda p: p.chat_completion([{"role": "user", "content": [big]}], model="gpt-4.1"))
    assert no_network == []


async def test_a_model_without_vision_refuses_images_before_sending(player, no_network):
    with pytest.raises(UnsupportedFeatureError, match="text-embedding-3-small"):
        await player.invoke(lambda p: p.analyze_image(PNG, "What is it?", model="text-embedding-3-small"))
    assert no_network == []
