"""llm-core: a provider registry for large language models.

The whole public contract is listed here. Names are loaded on first access so that
``import llm_core`` plus discovery and selection stay light (no Pydantic, no provider SDK).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # capabilities and specs (light)
    "Feature": "llm_core.features",
    "ProviderSpec": "llm_core.specs",
    "ModelInfo": "llm_core.specs",
    "hookimpl": "llm_core.hooks",
    "hookspec": "llm_core.hooks",
    "BackgroundObserver": "llm_core.background_observer",
    # registry and routing
    "Registry": "llm_core.registry",
    "Selection": "llm_core.registry",
    "Candidate": "llm_core.registry",
    "get_registry": "llm_core.registry",
    "reset_registry": "llm_core.registry",
    "Router": "llm_core.routing",
    "FallbackExhaustedError": "llm_core.errors",
    # conversations
    "Conversation": "llm_core.conversation",
    "AsyncConversation": "llm_core.conversation",
    "ConversationResponse": "llm_core.conversation",
    "ToolDecision": "llm_core.conversation",
    "MaxStepsError": "llm_core.conversation",
    "ToolExecutionError": "llm_core.conversation",
    "PluginError": "llm_core.discovery",
    "RetryPolicy": "llm_core.retry",
    "Secret": "llm_core.config",
    # data types
    "Role": "llm_core.messages",
    "ChatMessage": "llm_core.messages",
    "TextPart": "llm_core.messages",
    "ImagePart": "llm_core.messages",
    "DocumentPart": "llm_core.messages",
    "normalize_messages": "llm_core.messages",
    "ToolSpec": "llm_core.tools",
    "ToolCall": "llm_core.tools",
    "Usage": "llm_core.responses",
    "CompletionResponse": "llm_core.responses",
    "VisionResponse": "llm_core.responses",
    "EmbeddingResponse": "llm_core.responses",
    "ImageResponse": "llm_core.responses",
    "ConnectionStatus": "llm_core.responses",
    "Prompt": "llm_core.requests",
    "ThinkingOptions": "llm_core.requests",
    "ChatRequest": "llm_core.requests",
    "EmbeddingRequest": "llm_core.requests",
    "ImageRequest": "llm_core.requests",
    "DecisionRequest": "llm_core.requests",
    "StreamEvent": "llm_core.streaming",
    "StreamEventType": "llm_core.streaming",
    "StreamMetadata": "llm_core.streaming",
    "TokenType": "llm_core.streaming",
    "CallContext": "llm_core.streaming",
    "DecisionSubject": "llm_core.decisions",
    "YesNoQuestion": "llm_core.decisions",
    "ChoiceQuestion": "llm_core.decisions",
    "ScoreQuestion": "llm_core.decisions",
    "DecisionAnswer": "llm_core.decisions",
    "DecisionResponse": "llm_core.decisions",
    "ProbabilityKind": "llm_core.decisions",
    # provider base and capability interfaces
    "BaseProvider": "llm_core.provider",
    "StreamParser": "llm_core.provider",
    "AsyncProvider": "llm_core.aio",
    "StreamingCapable": "llm_core.capabilities",
    "ToolCapable": "llm_core.capabilities",
    "VisionCapable": "llm_core.capabilities",
    "DocumentCapable": "llm_core.capabilities",
    "StructuredOutputCapable": "llm_core.capabilities",
    "EmbeddingCapable": "llm_core.capabilities",
    "ImageGenerationCapable": "llm_core.capabilities",
    "DecisionCapable": "llm_core.capabilities",
    # errors
    **dict.fromkeys(
        (
            "LLMError",
            "ConfigurationError",
            "UnknownFeatureError",
            "PluginLoadError",
            "DuplicateProviderError",
            "UnknownProviderError",
            "UnsupportedFeatureError",
            "NoMatchingProviderError",
            "InvalidInputError",
            "ProviderError",
            "AuthenticationError",
            "PermissionDeniedError",
            "NotFoundError",
            "InvalidRequestError",
            "ContextLengthExceededError",
            "ContentFilteredError",
            "InvalidResponseError",
            "InvalidDecisionResponse",
            "TransientError",
            "RateLimitError",
            "ServerError",
            "ProviderTimeoutError",
            "ProviderConnectionError",
        ),
        "llm_core.errors",
    ),
}

#: Literal, so that type checkers see what ``from llm_core import ...`` may import (kept equal to
#: the keys of ``_EXPORTS``).
__all__ = [
    "AsyncConversation",
    "AsyncProvider",
    "AuthenticationError",
    "BackgroundObserver",
    "BaseProvider",
    "CallContext",
    "Candidate",
    "ChatMessage",
    "ChatRequest",
    "ChoiceQuestion",
    "CompletionResponse",
    "ConfigurationError",
    "ConnectionStatus",
    "ContentFilteredError",
    "ContextLengthExceededError",
    "Conversation",
    "ConversationResponse",
    "DecisionAnswer",
    "DecisionCapable",
    "DecisionRequest",
    "DecisionResponse",
    "DecisionSubject",
    "DocumentCapable",
    "DocumentPart",
    "DuplicateProviderError",
    "EmbeddingCapable",
    "EmbeddingRequest",
    "EmbeddingResponse",
    "FallbackExhaustedError",
    "Feature",
    "ImageGenerationCapable",
    "ImagePart",
    "ImageRequest",
    "ImageResponse",
    "InvalidDecisionResponse",
    "InvalidInputError",
    "InvalidRequestError",
    "InvalidResponseError",
    "LLMError",
    "MaxStepsError",
    "ModelInfo",
    "NoMatchingProviderError",
    "NotFoundError",
    "PermissionDeniedError",
    "PluginError",
    "PluginLoadError",
    "ProbabilityKind",
    "Prompt",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderSpec",
    "ProviderTimeoutError",
    "RateLimitError",
    "Registry",
    "RetryPolicy",
    "Role",
    "Router",
    "ScoreQuestion",
    "Secret",
    "Selection",
    "ServerError",
    "StreamEvent",
    "StreamEventType",
    "StreamMetadata",
    "StreamParser",
    "StreamingCapable",
    "StructuredOutputCapable",
    "TextPart",
    "ThinkingOptions",
    "TokenType",
    "ToolCall",
    "ToolCapable",
    "ToolDecision",
    "ToolExecutionError",
    "ToolSpec",
    "TransientError",
    "UnknownFeatureError",
    "UnknownProviderError",
    "UnsupportedFeatureError",
    "Usage",
    "VisionCapable",
    "VisionResponse",
    "YesNoQuestion",
    "get_registry",
    "hookimpl",
    "hookspec",
    "normalize_messages",
    "reset_registry",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from llm_core.aio import AsyncProvider
    from llm_core.background_observer import BackgroundObserver
    from llm_core.capabilities import (
        DecisionCapable,
        DocumentCapable,
        EmbeddingCapable,
        ImageGenerationCapable,
        StreamingCapable,
        StructuredOutputCapable,
        ToolCapable,
        VisionCapable,
    )
    from llm_core.config import Secret
    from llm_core.conversation import (
        AsyncConversation,
        Conversation,
        ConversationResponse,
        MaxStepsError,
        ToolDecision,
        ToolExecutionError,
    )
    from llm_core.decisions import (
        ChoiceQuestion,
        DecisionAnswer,
        DecisionResponse,
        DecisionSubject,
        ProbabilityKind,
        ScoreQuestion,
        YesNoQuestion,
    )
    from llm_core.discovery import PluginError
    from llm_core.errors import (
        AuthenticationError,
        ConfigurationError,
        ContentFilteredError,
        ContextLengthExceededError,
        DuplicateProviderError,
        FallbackExhaustedError,
        InvalidDecisionResponse,
        InvalidInputError,
        InvalidRequestError,
        InvalidResponseError,
        LLMError,
        NoMatchingProviderError,
        NotFoundError,
        PermissionDeniedError,
        PluginLoadError,
        ProviderConnectionError,
        ProviderError,
        ProviderTimeoutError,
        RateLimitError,
        ServerError,
        TransientError,
        UnknownFeatureError,
        UnknownProviderError,
        UnsupportedFeatureError,
    )
    from llm_core.features import Feature
    from llm_core.hooks import hookimpl, hookspec
    from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart, normalize_messages
    from llm_core.provider import BaseProvider, StreamParser
    from llm_core.registry import Candidate, Registry, Selection, get_registry, reset_registry
    from llm_core.requests import (
        ChatRequest,
        DecisionRequest,
        EmbeddingRequest,
        ImageRequest,
        Prompt,
        ThinkingOptions,
    )
    from llm_core.responses import (
        CompletionResponse,
        ConnectionStatus,
        EmbeddingResponse,
        ImageResponse,
        Usage,
        VisionResponse,
    )
    from llm_core.retry import RetryPolicy
    from llm_core.routing import Router
    from llm_core.specs import ModelInfo, ProviderSpec
    from llm_core.streaming import CallContext, StreamEvent, StreamEventType, StreamMetadata, TokenType
    from llm_core.tools import ToolCall, ToolSpec
