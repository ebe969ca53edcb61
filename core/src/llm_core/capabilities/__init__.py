"""Capability interfaces. A provider class inherits the ones it implements: each brings the
request builder and the hooks of its operations (:mod:`llm_core.operations`), so a feature in
the spec must be backed by the class (``supports_feature`` and the registry check it)."""

from llm_core.capabilities.chat import (
    DocumentCapable,
    ImageInput,
    StreamingCapable,
    StructuredOutputCapable,
    ToolCapable,
    VisionCapable,
    to_image_part,
)
from llm_core.capabilities.decisions import DecisionCapable
from llm_core.capabilities.embeddings import EmbeddingCapable
from llm_core.capabilities.images import ImageGenerationCapable
from llm_core.provider.streams import StreamParser
from llm_core.responses import decode_json
from llm_core.streaming import async_text_only, text_only

__all__ = [
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
