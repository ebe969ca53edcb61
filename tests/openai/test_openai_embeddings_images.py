"""Embeddings (dimensions, base64 decoding, usage) and images (generate / edit → bytes)."""

from __future__ import annotations

import pytest

from core_openai_plugin.response_parser import decode_vector
from llm_core.errors import ContentFilteredError, ContextLengthExceededError, InvalidInputError, InvalidResponseError
from llm_core.responses import EmbeddingResponse, ImageResponse
from tests.openai.openai_scenarios import SENTENCES, VECTORS
from tests.openai.openai_wire import JPEG, PNG, float32_base64


async def test_embeddings_with_dimensions_decode_the_sdk_default_base64(player):
    response = await player.play("embeddings_basic")
    assert isinstance(response, EmbeddingResponse)
    assert response.vectors == VECTORS and response.dimensions == 4
    assert response.model == "text-embedding-3-small" and response.provider == "openai"
    assert response.usage.prompt_tokens == 12 and response.usage.total_tokens == 12
    assert player.sent() == {"model": "text-embedding-3-small", "input": SENTENCES, "dimensions": 4,
                             "encoding_format": "base64"}


async def test_float_encoding(player):
    response = await player.play("embeddings_float")
    assert response.vectors == [[0.25, -0.5, 1.0]] and response.model == "text-embedding-3-large"
    assert player.sent()["encoding_format"] == "float"


async def test_base64_asked_for_is_decoded_and_task_type_is_ignored(player):
    response = await player.play("embeddings_base64")
    assert response.vectors == [VECTORS[0]]
    assert player.sent() == {"model": "text-embedding-3-small", "input": ["Hello world"], "encoding_format": "base64"}


async def test_too_long_input_is_a_context_length_error(player):
    with pytest.raises(ContextLengthExceededError, match="8192 tokens"):
        await player.play("embeddings_too_long")


@pytest.mark.parametrize(("options", "message"), [
    ({"model": "text-embedding-ada-002", "dimensions": 256}, "fixed size"),
    ({"dimensions": 4096}, "at most 1536 dimensions"),
    ({"encoding_format": "int8"}, "encoding_format"),
    ({"normalize": True}, "unknown embedding option 'normalize' for OpenAI"),
])
async def test_embedding_requests_are_checked_before_sending(player, no_network, options, message):
    with pytest.raises(InvalidInputError, match=message):
        await player.invoke(lambda p: p.embeddings("Hello", **options))
    assert no_network == []


def test_base64_vectors_are_little_endian_float32():
    assert decode_vector(float32_base64([1.5, -2.0])) == [1.5, -2.0]
    assert decode_vector([1, 2]) == [1.0, 2.0]
    with pytest.raises(InvalidResponseError):
        decode_vector("AAAAAAA=")  # five bytes


async def test_generate_image_bytes(player):
    data, mime = await player.play("image_generate")
    assert (data, mime) == (PNG, "image/png")
    assert player.sent() == {"model": "gpt-image-2", "prompt": "A watercolour fox in the snow", "size": "1024x1024",
                             "quality": "low", "output_format": "png"}
    assert player.cassette.requests[0].path == "/v1/images/generations"


async def test_jpeg_output_aspect_ratio_and_extra_options(player):
    image = await player.play("image_generate_jpeg")
    assert isinstance(image, ImageResponse)
    assert (image.data, image.mime_type) == (JPEG, "image/jpeg")
    assert image.usage.prompt_tokens == 10 and image.usage.completion_tokens == 1056
    assert image.metadata == {"size": "1536x1024", "quality": "medium", "background": "opaque"}
    sent = player.sent()
    assert sent["size"] == "1536x1024" and sent["output_format"] == "jpeg" and sent["background"] == "opaque"


async def test_input_images_go_through_image_edits(player):
    data, mime = await player.play("image_edit")
    assert (data, mime) == (PNG, "image/png")
    request = player.cassette.requests[0]
    assert request.path == "/v1/images/edits"
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    body = request.body
    assert b'name="prompt"\r\n\r\nMake the pixel red' in body and b'name="model"\r\n\r\ngpt-image-1.5' in body
    assert b'filename="image-1.png"' in body and b"Content-Type: image/png" in body and PNG in body


async def test_a_blocked_prompt_is_content_filtered(player):
    with pytest.raises(ContentFilteredError, match="moderation_blocked"):
        await player.play("image_moderation")


@pytest.mark.parametrize(("options", "message"), [
    ({"aspect_ratio": "16:9"}, "aspect ratios"),
    ({"mime_type": "image/gif"}, "PNG, JPEG or WebP"),
    ({"input_images": [(PNG, "")]}, "both bytes and a MIME type"),
])
async def test_image_requests_are_checked_before_sending(player, no_network, options, message):
    with pytest.raises(InvalidInputError, match=message):
        await player.invoke(lambda p: p.generate_image_bytes("A fox", **options))
    assert no_network == []
