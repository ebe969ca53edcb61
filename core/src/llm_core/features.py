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
    # tools the provider runs itself, asked for with ``builtin_tools=[...]`` (llm_core.builtin_tools)
    WEB_SEARCH = "web_search"
    CODE_EXECUTION = "code_execution"
    URL_CONTEXT = "url_context"
    GOOGLE_MAPS = "google_maps"
    FILE_SEARCH = "file_search"
    IMAGE_GENERATION = "image_generation"
    REMOTE_MCP = "remote_mcp"
    #: freeform tools: the model calls them with plain text, not JSON arguments
    CUSTOM_TOOLS = "custom_tools"

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


#: The built-in (provider-side) tools: options of a chat call, each offered per model.
BUILTIN_TOOLS = frozenset(
    {
        Feature.WEB_SEARCH,
        Feature.CODE_EXECUTION,
        Feature.URL_CONTEXT,
        Feature.GOOGLE_MAPS,
        Feature.FILE_SEARCH,
        Feature.IMAGE_GENERATION,
        Feature.REMOTE_MCP,
    }
)
#: Features that are options of every chat call rather than calls of their own: a provider class
#: implements them by mapping the option; whether a model offers one is its catalogue's word.
CHAT_OPTIONS = frozenset({Feature.THINKING, Feature.CUSTOM_TOOLS}) | BUILTIN_TOOLS


def parse_features(values: Iterable[Feature | str]) -> frozenset[Feature]:
    """Parse many feature names at once; the first unknown one raises."""
    return frozenset(Feature.parse(v) for v in values)
