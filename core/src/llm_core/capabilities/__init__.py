"""Capability interfaces, for code that types against what a provider can do.

``isinstance(provider, VisionCapable)`` is true when the provider's class implements vision
(the wire methods of its operations, see :mod:`llm_core.wire`); whether a given model offers it
is ``provider.supports_feature(Feature.VISION, model)``. A provider class does not inherit these
interfaces: each is derived from the feature it names.
"""

from __future__ import annotations

from abc import ABC
from typing import Any, ClassVar

from llm_core.features import Feature
from llm_core.media import ImageInput, to_image_part
from llm_core.provider.base import BaseProvider
from llm_core.responses import decode_json
from llm_core.streaming import async_text_only, text_only
from llm_core.wire import StreamParser


class Capability(BaseProvider, ABC):
    """A provider whose class implements :attr:`feature` (checked by ``isinstance``)."""

    feature: ClassVar[Feature]

    @classmethod
    def __subclasshook__(cls, subclass: type) -> Any:
        feature = vars(cls).get("feature")
        implemented = getattr(subclass, "implemented_features", None)
        if feature is None or implemented is None:
            return NotImplemented
        return feature in implemented()


class StreamingCapable(Capability):
    """``stream_chat_completion`` (typed events) and ``stream_text`` (response text only)."""

    feature = Feature.STREAMING


class ToolCapable(Capability):
    """``chat_completion_with_tools(messages, tools)``."""

    feature = Feature.TOOLS


class VisionCapable(Capability):
    """``analyze_image`` and image parts in chat messages."""

    feature = Feature.VISION


class DocumentCapable(Capability):
    """Inline documents (e.g. PDF) in chat messages."""

    feature = Feature.DOCUMENTS


class StructuredOutputCapable(Capability):
    """``generate_json(prompt, schema=...)``: a Pydantic model gives a validated instance,
    a dict schema or none gives the decoded JSON."""

    feature = Feature.JSON_MODE


class EmbeddingCapable(Capability):
    """``embeddings(input)`` for one string or many."""

    feature = Feature.EMBEDDINGS


class ImageGenerationCapable(Capability):
    """``generate_image`` and ``generate_image_bytes``."""

    feature = Feature.IMAGE


class DecisionCapable(Capability):
    """``decide(subject, questions)`` natively, or through structured output."""

    feature = Feature.DECISION


__all__ = [
    "Capability",
    "DecisionCapable",
    "DocumentCapable",
    "EmbeddingCapable",
    "ImageGenerationCapable",
    "ImageInput",
    "StreamParser",
    "StreamingCapable",
    "StructuredOutputCapable",
    "ToolCapable",
    "VisionCapable",
    "async_text_only",
    "decode_json",
    "text_only",
    "to_image_part",
]
