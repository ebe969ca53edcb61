"""Chat messages and content parts: normalisation, extra keys, media decoding, errors."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from llm_core import ChatMessage, DocumentPart, ImagePart, InvalidInputError, Role, TextPart, normalize_messages
from llm_core.messages import split_system
from llm_core.testing.fake import PNG_1X1

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"


def test_a_string_becomes_one_user_message() -> None:
    [message] = normalize_messages("Hello")
    assert message.role is Role.USER
    assert message.content == "Hello"


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_a_blank_prompt_is_refused(blank: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        normalize_messages(blank)


def test_plain_mappings_are_normalised_and_typed_messages_kept() -> None:
    typed = ChatMessage.assistant("Earlier answer.")
    messages = normalize_messages([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        typed,
    ])
    assert [m.role for m in messages] == [Role.SYSTEM, Role.USER, Role.ASSISTANT]
    assert messages[2] is typed
    assert all(isinstance(m, ChatMessage) for m in messages)


def test_extra_keys_of_plain_mappings_are_kept_in_model_extra() -> None:
    [message] = normalize_messages([
        {"role": "user", "content": "Hi", "cache_control": {"type": "ephemeral"}, "x_trace": 7},
    ])
    assert message.model_extra == {"cache_control": {"type": "ephemeral"}, "x_trace": 7}


def test_multi_part_content_from_mappings_strings_and_parts() -> None:
    encoded = base64.b64encode(PNG_1X1).decode()
    [message] = normalize_messages([{
        "role": "user",
        "content": [
            "Look at ",
            {"type": "text", "text": "this:"},
            {"type": "image", "data": encoded, "mime_type": "image/png"},
            {"type": "document", "data": base64.b64encode(PDF).decode(), "name": "a.pdf"},
        ],
    }])
    text1, text2, image, document = message.parts
    assert isinstance(text1, TextPart) and text1.text == "Look at "
    assert isinstance(text2, TextPart)
    assert isinstance(image, ImagePart) and image.data == PNG_1X1
    assert isinstance(document, DocumentPart) and document.data == PDF and document.name == "a.pdf"
    assert message.text == "Look at this:"


def test_parts_of_string_content() -> None:
    assert ChatMessage.user("x").parts == [TextPart(text="x")]
    assert ChatMessage.assistant("").parts == []
    assert ChatMessage(role="user", content=None).content == ""


@pytest.mark.parametrize(
    ("messages", "index"),
    [
        ([{"role": "wizard", "content": "hi"}], 0),
        ([{"role": "user", "content": "ok"}, {"role": "robot", "content": "hi"}], 1),
        ([{"role": "user", "content": "ok"}, {"content": "no role"}], 1),
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": 42}], 1),
        ([{"role": "user", "content": [{"type": "video", "url": "x"}]}], 0),
        ([{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}, ("user", "hi")], 2),
        ([{"role": "user", "content": [{"type": "image", "data": "%%% not base64"}]}], 0),
        ([{"role": "tool", "content": "42"}], 0),  # a tool result needs its call id
        ([{"role": "user", "content": "x", "tool_calls": [{"id": "1", "name": "f"}]}], 0),
    ],
)
def test_malformed_messages_raise_invalid_input_naming_the_index(messages: list[Any], index: int) -> None:
    with pytest.raises(InvalidInputError, match=f"message {index}"):
        normalize_messages(messages)


def test_unknown_role_error_lists_the_valid_roles() -> None:
    with pytest.raises(InvalidInputError, match="system, user, assistant, tool"):
        normalize_messages([{"role": "wizard", "content": "hi"}])


def test_empty_list_and_system_only_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="no messages"):
        normalize_messages([])
    with pytest.raises(InvalidInputError, match="user message"):
        normalize_messages([{"role": "system", "content": "Be brief."}])


@pytest.mark.parametrize("bad", [None, 42, 3.5, object(), {"role": "user", "content": "hi"}, ChatMessage.user("hi")])
def test_something_that_is_not_a_message_list_is_invalid_input(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        normalize_messages(bad)  # type: ignore[arg-type]


def test_tool_messages_and_assistant_tool_calls() -> None:
    call = {"id": "call_1", "name": "lookup", "arguments": '{"q": "x"}'}
    messages = normalize_messages([
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"answer": 1}'},
    ])
    assert messages[1].tool_calls is not None
    assert messages[1].tool_calls[0].arguments == {"q": "x"}
    assert messages[2].tool_call_id == "call_1"


def test_split_system_joins_system_text_with_blank_lines() -> None:
    system, rest = split_system(normalize_messages([
        {"role": "system", "content": "A"}, {"role": "user", "content": "u"}, {"role": "system", "content": "B"},
    ]))
    assert system == "A\n\nB"
    assert [m.role for m in rest] == [Role.USER]
    assert split_system([ChatMessage.user("u")])[0] is None


# -- image and document parts ------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ImagePart, DocumentPart])
@given(payload=st.binary(min_size=1, max_size=200))
def test_base64_text_and_data_urls_decode_to_the_same_bytes(cls: type[ImagePart], payload: bytes) -> None:
    encoded = base64.b64encode(payload).decode()
    assert cls(data=encoded).data == payload
    assert cls(data=base64.urlsafe_b64encode(payload).decode()).data == payload
    assert cls(data=f"data:application/octet-stream;base64,{encoded}").data == payload
    assert cls(data=payload).data == payload
    assert cls(data=payload).base64() == encoded


def test_a_data_url_declares_the_mime_type_when_none_is_given() -> None:
    encoded = base64.b64encode(PNG_1X1).decode()
    assert ImagePart(data=f"data:image/png;base64,{encoded}").mime_type == "image/png"
    assert DocumentPart(data=f"data:application/pdf;base64,{base64.b64encode(PDF).decode()}").mime_type == (
        "application/pdf"
    )
    assert ImagePart(data=f"data:image/png;base64,{encoded}", mime_type="image/webp").mime_type == "image/webp"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},  # neither data nor url
        {"data": b"x", "url": "https://example.com/a.png"},  # both
        {"data": b""},
        {"data": ""},
        {"data": "not base64 at all!"},
        {"data": "data:image/png;base64"},  # a data: URL without payload
        {"data": "data:image/png;base64,@@@"},
    ],
)
def test_invalid_binary_parts_raise_invalid_input(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        ImagePart(**kwargs)


@given(payload=st.binary(min_size=1, max_size=5000))
def test_repr_and_str_never_dump_the_bytes(payload: bytes) -> None:
    part = ImagePart(data=payload, mime_type="image/png")
    for text in (repr(part), str(part), repr(ChatMessage.user([part])), str(ChatMessage.user([part]))):
        assert f"{len(payload)} bytes" in text
        assert repr(payload) not in text
        assert base64.b64encode(payload).decode() not in text


def test_url_parts_show_their_url() -> None:
    part = ImagePart(url="https://example.com/cat.png")
    assert "https://example.com/cat.png" in repr(part)
    assert part.size == 0


def test_messages_are_immutable() -> None:
    message = ChatMessage.user("hi")
    with pytest.raises(ValidationError):
        message.content = "changed"  # type: ignore[misc]


def test_messages_with_binary_parts_round_trip_through_json() -> None:
    message = ChatMessage.user(["see", ImagePart(data=PNG_1X1, mime_type="image/png"), DocumentPart(data=PDF)])
    dumped = message.model_dump(mode="json")
    assert dumped["content"][1]["data"] == base64.b64encode(PNG_1X1).decode()
    assert ChatMessage.model_validate(dumped) == message
    assert ChatMessage.model_validate_json(message.model_dump_json()) == message


roles = st.sampled_from(["system", "user", "assistant", "tool", "wizard", "", "USER"])
contents = st.one_of(st.text(max_size=5), st.integers(), st.none(),
                     st.lists(st.one_of(st.text(max_size=5), st.fixed_dictionaries({"type": st.just("text"),
                                                                                    "text": st.text(max_size=5)}),
                                        st.just({"type": "video"})), max_size=3))
mappings = st.fixed_dictionaries({"role": roles, "content": contents}, optional={"tool_call_id": st.just("c1"),
                                                                                 "extra": st.integers()})


@given(st.lists(st.one_of(mappings, st.integers(), st.text(max_size=3)), max_size=5))
def test_normalisation_either_succeeds_or_raises_invalid_input(messages: list[Any]) -> None:
    try:
        result = normalize_messages(messages)
    except InvalidInputError as exc:
        error: InvalidInputError | None = exc
    else:
        error = None
    if error is not None:
        assert "message" in str(error)
        return
    assert len(result) == len(messages)
    assert all(isinstance(m, ChatMessage) for m in result)
    for raw, message in zip(messages, result, strict=True):
        assert message.role.value == raw["role"]
        if "extra" in raw:
            assert message.model_extra == {"extra": raw["extra"]}
