"""The capability vocabulary shared by providers, specs and routing."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from llm_core.errors import UnknownFeatureError


class Feature(StrEnum):
    """A capability a provider (or one of its models) may offer.

    Values are stable strings.
    ``Feature("vison")`` raises :class:`UnknownFeatureError` listing the valid names.
    """

    CHAT = "chat"
    COMPLETION = "completion"
    EMBEDDINGS = "embeddings"
    VISION = "vision"
    STREAMING = "streaming"
    TOOLS = "tools"
    JSON_MODE = "json_mode"
    AUDIO = "audio"
    IMAGE = "image"
    TEXT_TO_SPEECH = "text_to_speech"
    TRANSCRIPTION = "transcription"
    DECISION = "decision"
    DOCUMENTS = "documents"
    THINKING = "thinking"
    BATCH = "batch"
    TOKEN_COUNTING = "token_counting"  # noqa: S105 - a feature name, not a secret

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _missing_(cls, value: object) -> Feature:
        if isinstance(value, str):
            normalised = value.strip().lower().replace("-", "_")
            for member in cls:
                if member.value == normalised or member.name.lower() == normalised:
                    return member
        raise UnknownFeatureError(value, [m.value for m in cls])

    @classmethod
    def parse(cls, value: Feature | str) -> Feature:
        """Return the feature named by ``value`` (enum member or name, case-insensitive)."""
        return value if isinstance(value, Feature) else cls(value)


def parse_features(values: Iterable[Feature | str]) -> frozenset[Feature]:
    """Parse many feature names at once; the first unknown one raises."""
    return frozenset(Feature.parse(v) for v in values)
