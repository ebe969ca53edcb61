"""Google Gemini provider for llm-core (distribution ``core-gemini-plugin``).

Importing this package is light: the google-genai SDK is imported when the provider is first
used. ``GeminiProvider``, ``VertexProvider`` and ``assistant_message`` are loaded on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from core_gemini_plugin.provider import AsyncGeminiProvider, GeminiProvider, VertexProvider
    from core_gemini_plugin.response_parser import assistant_message

_LAZY = {
    "GeminiProvider": "core_gemini_plugin.provider",
    "AsyncGeminiProvider": "core_gemini_plugin.provider",
    "VertexProvider": "core_gemini_plugin.provider",
    "assistant_message": "core_gemini_plugin.response_parser",
}

__all__ = ["AsyncGeminiProvider", "GeminiProvider", "VertexProvider", "__version__", "assistant_message"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'core_gemini_plugin' has no attribute {name!r}")
