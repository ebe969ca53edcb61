"""Feature: the capability vocabulary (stable string values)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from llm_core import Feature, LLMError, UnknownFeatureError
from llm_core.features import parse_features

#: The values users and config files name features by: they never change.
STABLE_VALUES = {
    "chat", "completion", "embeddings", "vision", "streaming", "tools", "json_mode", "audio", "image",
    "text_to_speech", "transcription", "decision", "documents", "thinking", "batch", "token_counting",
    "web_search", "code_execution", "url_context", "google_maps", "file_search", "image_generation", "remote_mcp",
    "custom_tools",
}


def test_values_are_the_stable_names() -> None:
    assert {f.value for f in Feature} == STABLE_VALUES


def test_feature_is_a_str_enum_usable_as_its_value() -> None:
    assert Feature.VISION == "vision"
    assert str(Feature.JSON_MODE) == "json_mode"
    assert f"{Feature.CHAT}" == "chat"


@pytest.mark.parametrize("feature", list(Feature))
def test_parse_is_case_insensitive_and_accepts_members(feature: Feature) -> None:
    assert Feature.parse(feature) is feature
    assert Feature.parse(feature.value.upper()) is feature
    assert Feature.parse(f"  {feature.value.title()} ") is feature
    assert Feature(feature.value.upper()) is feature


def test_dashes_are_read_as_underscores() -> None:
    assert Feature.parse("JSON-MODE") is Feature.JSON_MODE
    assert Feature.parse("text-to-speech") is Feature.TEXT_TO_SPEECH


@pytest.mark.parametrize("bad", ["vison", "", "chat ,", "json mode", 5, None])
def test_unknown_name_raises_a_value_error_listing_every_valid_name(bad: object) -> None:
    with pytest.raises(UnknownFeatureError) as info:
        Feature.parse(bad)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error, ValueError)
    assert isinstance(error, LLMError)
    assert error.value == bad
    assert set(error.valid) == STABLE_VALUES
    for name in STABLE_VALUES:
        assert name in str(error)


@given(st.text(max_size=20))
def test_any_text_either_parses_to_its_feature_or_raises_unknown_feature(text: str) -> None:
    normalised = text.strip().lower().replace("-", "_")
    if normalised in STABLE_VALUES:
        assert Feature.parse(text).value == normalised
    else:
        with pytest.raises(UnknownFeatureError):
            Feature.parse(text)


def test_parse_features_parses_all_and_the_first_unknown_raises() -> None:
    assert parse_features(["chat", Feature.VISION, "Streaming"]) == {
        Feature.CHAT, Feature.VISION, Feature.STREAMING,
    }
    with pytest.raises(UnknownFeatureError, match="'telepathy'"):
        parse_features(["chat", "telepathy"])
