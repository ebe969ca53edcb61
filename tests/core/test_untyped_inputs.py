"""Bad input of the wrong type, or a URL a provider must not be handed, is ``InvalidInputError``
with a clear message, raised before anything is sent (never Pydantic's ``ValidationError``, never
a ``TypeError``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from llm_core.errors import InvalidInputError
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, TextPart
from llm_core.testing.fake import FakeProvider

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

REFUSED_URLS = [
    "file:///etc/passwd",
    "FILE:///etc/passwd",
    "ftp://example.com/a.png",
    "javascript:alert(1)",
    "gopher://example.com/",
    " https://example.com/a.png",  # not a URL the provider would be given as typed
    "//example.com/a.png",
]


def _refused(call: Callable[[], Any], match: str) -> InvalidInputError:
    with pytest.raises(InvalidInputError, match=match) as caught:
        call()
    assert not isinstance(caught.value, ValidationError)
    return caught.value


@pytest.mark.parametrize("url", REFUSED_URLS)
@pytest.mark.parametrize("part", [ImagePart, DocumentPart])
def test_parts_refuse_urls_other_than_http_https_and_data(part: type[ImagePart], url: str) -> None:
    _refused(lambda: part(url=url), "http\\(s\\) or data: URL")


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_analyze_image_refuses_those_urls_before_sending(fake: FakeProvider, url: str) -> None:
    _refused(lambda: fake.analyze_image(url), "http\\(s\\) or data: URL")
    _refused(lambda: fake.analyze_image(ImagePart.model_construct(url=url, mime_type="image/png")), "URL")
    assert fake.requests == []


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: TextPart(text=None), "TextPart is invalid: text: Input should be a valid string"),
        (lambda: TextPart(text=b"bytes"), "text"),
        (lambda: ImagePart(url=5), "url"),
        (lambda: ImagePart(data=PNG_1X1, mime_type=3), "mime_type"),
        (lambda: DocumentPart(data=b"%PDF-", name=7), "name"),
        (lambda: ChatMessage(role="boss", content="hi"), "role must be one of"),
        (lambda: ChatMessage(role="user", content=3.5), "content"),
        (lambda: ChatMessage.user(None), "a user message is a string or a list of parts, not NoneType"),
        (lambda: ChatMessage.user([None]), "content"),
        (lambda: ChatMessage.tool(None, "result"), "tool_call_id"),
    ],
)
def test_parts_and_messages_built_by_hand_raise_invalid_input(build: Callable[[], Any], match: str) -> None:
    _refused(build, match)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p: p.analyze_image(PNG_1X1, prompt=None), "prompt must be a string, not NoneType"),
        (lambda p: p.analyze_image(PNG_1X1, prompt=b"what is it"), "prompt must be a string, not bytes"),
        (lambda p: p.analyze_image(PNG_1X1, mime_type=5), "mime_type"),
        (lambda p: p.analyze_image(None), "an image must be"),
        (lambda p: p.analyze_image([PNG_1X1, 5]), "an image must be"),
        (lambda p: p.chat_completion("hi", system=5), "system"),
        (lambda p: p.chat_completion([{"role": "user", "content": None}]), "message 0"),
        (lambda p: p.chat_completion([{"role": "user", "content": [{"type": "image", "url": "file:///x"}]}]),
         "http\\(s\\) or data: URL"),
        (lambda p: p.generate_image(None), "prompt must be a string"),
        (lambda p: p.embeddings([None]), "non-empty strings"),
    ],
)
def test_provider_calls_refuse_untyped_input_before_sending(
    fake: FakeProvider, call: Callable[[FakeProvider], Any], match: str
) -> None:
    error = _refused(lambda: call(fake), match)
    assert error.provider in (None, fake.identifier)
    assert fake.requests == []


def test_parsing_still_reports_pydantic_errors() -> None:
    """``model_validate`` (parsing saved data) keeps Pydantic's error, which callers of it catch."""
    with pytest.raises(ValidationError):
        ImagePart.model_validate({"url": "file:///etc/passwd"})
