"""OpenAI provider plugin for llm-core.

Importing this package is light: the SDK is imported by :mod:`core_openai_plugin.provider` only
when a client is first needed.
"""

__version__ = "0.1.0"
