"""Image generation: Gemini image models (a 4K request the model rejects is retried once with 2K)
and Imagen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_core.config import Secret
from llm_core.errors import ContentFilteredError, InvalidInputError, InvalidRequestError, InvalidResponseError
from llm_core.messages import ImagePart
from llm_core.responses import ImageResponse
from tests.gemini.gemini_inputs import KEY, PNG
from tests.gemini.gemini_support import Offline, Runner, cassette, sent_body

FOX = "A watercolor painting of a red fox in the snow."
JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")
imagen_deprecated = pytest.mark.filterwarnings("ignore:The generate_images method is deprecated")


def test_first_inline_image_and_its_mime_type(run: Runner) -> None:
    with cassette("image_basic") as recorded:
        data, mime = run("generate_image_bytes", FOX, aspect_ratio="1:1")
    assert recorded.requests[0].uri.endswith("/v1/models/gemini-2.5-flash-image:generateContent")
    assert sent_body(recorded) == {"contents": [{"parts": [{"text": FOX}], "role": "user"}], "generationConfig": {
        "responseModalities": ["IMAGE"], "imageConfig": {"aspectRatio": "1:1"}}}
    assert (data, mime) == (PNG, "image/png")


def test_generate_image_keeps_the_text_part(run: Runner) -> None:
    with cassette("image_basic") as recorded:
        image = run("generate_image", FOX, aspect_ratio="1:1")
    assert isinstance(image, ImageResponse)
    assert image.metadata["text"] == "Here is your watercolor fox." and image.usage is not None
    assert image.response_id == json.loads(recorded.responses[0]["body"]["string"])["responseId"]


def test_input_images_follow_the_prompt_in_one_user_turn(run: Runner) -> None:
    with cassette("image_input_images") as recorded:
        data, mime = run("generate_image_bytes", "Turn this pixel blue.", input_images=[(PNG, "image/png")])
    [turn] = sent_body(recorded)["contents"]
    assert turn["role"] == "user"
    assert [list(p) for p in turn["parts"]] == [["text"], ["inlineData"]]
    assert turn["parts"][1]["inlineData"]["mime_type"] == "image/png"
    assert (data, mime) == (PNG, "image/png")


def test_requested_mime_type_is_only_the_fallback(run: Runner) -> None:
    with cassette("image_mime_fallback") as recorded:
        data, mime = run("generate_image_bytes", "A tiny blue square.", mime_type="image/webp")
    assert "webp" not in recorded.requests[0].body.decode()  # not sent as a response MIME type
    assert data.startswith(b"RIFF") and mime == "image/webp"


def test_a_rejected_4k_request_is_retried_once_with_2k(run: Runner, delays: list[float]) -> None:
    with cassette("image_4k_retry") as recorded:
        data, _ = run("generate_image_bytes", FOX, model="gemini-3-pro-image", size="4K")
    sizes = [sent_body(recorded, i)["generationConfig"]["imageConfig"]["imageSize"] for i in range(2)]
    assert sizes == ["4K", "2K"] and data == PNG
    assert delays == []  # not a retry of the policy: a changed request


def test_the_2k_retry_happens_exactly_once(run: Runner) -> None:
    with cassette("image_4k_retry_fails") as recorded, pytest.raises(InvalidRequestError, match="not available"):
        run("generate_image_bytes", FOX, model="gemini-3-pro-image", size="4K")
    assert recorded.play_count == 2


def test_an_answer_without_an_image_is_an_error_and_not_retried(run: Runner) -> None:
    with cassette("image_no_image") as recorded, pytest.raises(InvalidResponseError, match="no image") as caught:
        run("generate_image_bytes", FOX, model="gemini-3-pro-image", size="4K")
    assert caught.value.raw == "I can describe it instead: a red fox curled up in fresh snow."
    assert recorded.play_count == 1


def test_an_image_stopped_by_safety_filters(run: Runner) -> None:
    with cassette("image_blocked"), pytest.raises(ContentFilteredError, match="IMAGE_SAFETY"):
        run("generate_image_bytes", "A photo of a real politician in a prison cell.")


@pytest.mark.parametrize(("options", "message"), [
    ({"input_images": [ImagePart(url="https://example.com/a.png", mime_type="image/png")]}, "bytes and a MIME"),
    ({"input_images": [(PNG, "")]}, "bytes and a MIME"),
    ({"size": "8K"}, "not one of 1K, 2K, 4K"),
    ({"model": "gemini-2.5-flash"}, "does not support image"),
])
def test_invalid_image_calls_send_nothing(offline: Offline, options: dict[str, Any], message: str) -> None:
    provider, sent = offline()
    with pytest.raises(Exception, match=message):
        provider.generate_image_bytes(FOX, **options)
    assert sent == []


@imagen_deprecated
def test_imagen_sends_the_requested_output_mime_type(run: Runner) -> None:
    with cassette("imagen_basic") as recorded:
        data, mime = run("generate_imagen_bytes", "A lighthouse at dusk, oil painting.")
    request = recorded.requests[0]
    assert request.uri == ("https://aiplatform.googleapis.com/v1beta1/publishers/google/models/"
                           "imagen-4.0-generate-001:predict")
    assert sent_body(recorded) == {"instances": [{"prompt": "A lighthouse at dusk, oil painting."}],
                                   "parameters": {"outputOptions": {"mimeType": "image/jpeg"}}}
    assert (data, mime) == (JPEG, "image/jpeg")


@imagen_deprecated
def test_an_imagen_model_also_works_through_generate_image_bytes(run: Runner) -> None:
    with cassette("imagen_basic"):
        data, _ = run("generate_image_bytes", "A lighthouse at dusk, oil painting.", model="imagen-4.0-generate-001",
                      mime_type="image/jpeg")
    assert data == JPEG


@imagen_deprecated
def test_imagen_filtered(run: Runner) -> None:
    with cassette("imagen_filtered"), pytest.raises(ContentFilteredError, match="usage guidelines"):
        run("generate_imagen_bytes", "A photo of a real politician in a prison cell.", include_rai_reason=True)


def test_imagen_refuses_other_models_and_input_images(offline: Offline) -> None:
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="not an Imagen model"):
        provider.generate_imagen_bytes("x", model="gemini-2.5-flash-image")
    with pytest.raises(InvalidInputError, match="no input images"):
        provider.generate_image_bytes("x", model="imagen-4.0-generate-001", input_images=[(PNG, "image/png")])
    assert sent == []


def test_imagen_uses_vertex_ai_with_its_own_key_kept_secret() -> None:
    from core_gemini_plugin.provider import GeminiProvider

    provider = GeminiProvider(api_key=KEY, vertex_api_key="vertex-test-key")
    assert provider.vertex_api_key == Secret("vertex-test-key")
    assert "vertex-test-key" not in repr(provider) and "vertex_api_key" not in provider.options
    assert "vertex-test-key" not in repr(vars(provider))
    provider.configure({"vertex_api_key": "other-vertex-test-key"})
    assert provider.vertex_api_key == Secret("other-vertex-test-key")
    assert "other-vertex-test-key" not in repr(vars(provider))
    assert provider.imagen_client.vertexai
    assert provider.http_options(imagen=True).api_version is None
