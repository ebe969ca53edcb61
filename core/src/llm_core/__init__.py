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
    "BackgroundObserver": "llm_core.observe.background",
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
    "ToolInterruptedError": "llm_core.conversation",
    "ToolServerError": "llm_core.conversation",
    "PluginError": "llm_core.registry.discovery",
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
    "Grammar": "llm_core.tools",
    **dict.fromkeys(
        (
            "WebSearch",
            "CodeExecution",
            "UrlContext",
            "GoogleMaps",
            "FileSearch",
            "ImageGeneration",
            "RemoteMCP",
            "Citation",
            "BuiltinToolCall",
        ),
        "llm_core.builtin_tools",
    ),
    "Usage": "llm_core.responses",
    "CompletionResponse": "llm_core.responses",
    "VisionResponse": "llm_core.responses",
    "EmbeddingResponse": "llm_core.responses",
    "ImageResponse": "llm_core.responses",
    "TokenCount": "llm_core.responses",
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
    "AsyncProvider": "llm_core.provider",
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
            "UnknownSettingError",
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
            "CancelledCallError",
        ),
        "llm_core.errors",
    ),
}

#: What ``from llm_core import *`` gives. Type checkers read the imports at the bottom of this
#: file instead (a test keeps them equal to ``_EXPORTS``).
__all__ = sorted(_EXPORTS)


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
    from llm_core.builtin_tools import (
        BuiltinToolCall as BuiltinToolCall,
        Citation as Citation,
        CodeExecution as CodeExecution,
        FileSearch as FileSearch,
        GoogleMaps as GoogleMaps,
        ImageGeneration as ImageGeneration,
        RemoteMCP as RemoteMCP,
        UrlContext as UrlContext,
        WebSearch as WebSearch,
    )
    from llm_core.capabilities import (
        DecisionCapable as DecisionCapable,
        DocumentCapable as DocumentCapable,
        EmbeddingCapable as EmbeddingCapable,
        ImageGenerationCapable as ImageGenerationCapable,
        StreamingCapable as StreamingCapable,
        StructuredOutputCapable as StructuredOutputCapable,
        ToolCapable as ToolCapable,
        VisionCapable as VisionCapable,
    )
    from llm_core.config import (
        Secret as Secret,
    )
    from llm_core.conversation import (
        AsyncConversation as AsyncConversation,
        Conversation as Conversation,
        ConversationResponse as ConversationResponse,
        MaxStepsError as MaxStepsError,
        ToolDecision as ToolDecision,
        ToolExecutionError as ToolExecutionError,
        ToolInterruptedError as ToolInterruptedError,
        ToolServerError as ToolServerError,
    )
    from llm_core.decisions import (
        ChoiceQuestion as ChoiceQuestion,
        DecisionAnswer as DecisionAnswer,
        DecisionResponse as DecisionResponse,
        DecisionSubject as DecisionSubject,
        ProbabilityKind as ProbabilityKind,
        ScoreQuestion as ScoreQuestion,
        YesNoQuestion as YesNoQuestion,
    )
    from llm_core.errors import (
        AuthenticationError as AuthenticationError,
        CancelledCallError as CancelledCallError,
        ConfigurationError as ConfigurationError,
        ContentFilteredError as ContentFilteredError,
        ContextLengthExceededError as ContextLengthExceededError,
        DuplicateProviderError as DuplicateProviderError,
        FallbackExhaustedError as FallbackExhaustedError,
        InvalidDecisionResponse as InvalidDecisionResponse,
        InvalidInputError as InvalidInputError,
        InvalidRequestError as InvalidRequestError,
        InvalidResponseError as InvalidResponseError,
        LLMError as LLMError,
        NoMatchingProviderError as NoMatchingProviderError,
        NotFoundError as NotFoundError,
        PermissionDeniedError as PermissionDeniedError,
        PluginLoadError as PluginLoadError,
        ProviderConnectionError as ProviderConnectionError,
        ProviderError as ProviderError,
        ProviderTimeoutError as ProviderTimeoutError,
        RateLimitError as RateLimitError,
        ServerError as ServerError,
        TransientError as TransientError,
        UnknownFeatureError as UnknownFeatureError,
        UnknownProviderError as UnknownProviderError,
        UnknownSettingError as UnknownSettingError,
        UnsupportedFeatureError as UnsupportedFeatureError,
    )
    from llm_core.features import (
        Feature as Feature,
    )
    from llm_core.hooks import (
        hookimpl as hookimpl,
        hookspec as hookspec,
    )
    from llm_core.messages import (
        ChatMessage as ChatMessage,
        DocumentPart as DocumentPart,
        ImagePart as ImagePart,
        Role as Role,
        TextPart as TextPart,
        normalize_messages as normalize_messages,
    )
    from llm_core.observe.background import (
        BackgroundObserver as BackgroundObserver,
    )
    from llm_core.provider import (
        AsyncProvider as AsyncProvider,
        BaseProvider as BaseProvider,
        StreamParser as StreamParser,
    )
    from llm_core.registry import (
        Candidate as Candidate,
        Registry as Registry,
        Selection as Selection,
        get_registry as get_registry,
        reset_registry as reset_registry,
    )
    from llm_core.registry.discovery import (
        PluginError as PluginError,
    )
    from llm_core.requests import (
        ChatRequest as ChatRequest,
        DecisionRequest as DecisionRequest,
        EmbeddingRequest as EmbeddingRequest,
        ImageRequest as ImageRequest,
        Prompt as Prompt,
        ThinkingOptions as ThinkingOptions,
    )
    from llm_core.responses import (
        CompletionResponse as CompletionResponse,
        ConnectionStatus as ConnectionStatus,
        EmbeddingResponse as EmbeddingResponse,
        ImageResponse as ImageResponse,
        TokenCount as TokenCount,
        Usage as Usage,
        VisionResponse as VisionResponse,
    )
    from llm_core.retry import (
        RetryPolicy as RetryPolicy,
    )
    from llm_core.routing import (
        Router as Router,
    )
    from llm_core.specs import (
        ModelInfo as ModelInfo,
        ProviderSpec as ProviderSpec,
    )
    from llm_core.streaming import (
        CallContext as CallContext,
        StreamEvent as StreamEvent,
        StreamEventType as StreamEventType,
        StreamMetadata as StreamMetadata,
        TokenType as TokenType,
    )
    from llm_core.tools import (
        Grammar as Grammar,
        ToolCall as ToolCall,
        ToolSpec as ToolSpec,
    )
