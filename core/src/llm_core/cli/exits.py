"""Exit codes of ``llm-core`` and the error → code mapping every command shares.

0 success; 1 the provider call failed; 2 bad usage or invalid input; 3 configuration (e.g. a
missing API key or a missing extra); 4 no provider fits (unknown provider, unsupported feature,
no match); 5 plugin load errors (``plugins --strict``).
"""

from __future__ import annotations

from llm_core.errors import (
    ConfigurationError,
    InvalidInputError,
    NoMatchingProviderError,
    PluginLoadError,
    UnknownFeatureError,
    UnknownProviderError,
    UnsupportedFeatureError,
)

EXIT_OK, EXIT_CALL, EXIT_USAGE, EXIT_CONFIG, EXIT_NO_PROVIDER, EXIT_PLUGINS = 0, 1, 2, 3, 4, 5


def exit_code_for(error: BaseException) -> int:
    if isinstance(error, ConfigurationError):
        return EXIT_CONFIG
    if isinstance(error, UnknownProviderError | UnsupportedFeatureError | NoMatchingProviderError):
        return EXIT_NO_PROVIDER
    if isinstance(error, InvalidInputError | UnknownFeatureError | FileNotFoundError | ValueError):
        return EXIT_USAGE
    if isinstance(error, PluginLoadError):
        return EXIT_PLUGINS
    return EXIT_CALL
