"""The ``llm-core`` command line. See ``docs/cli.md``."""

from llm_core.cli.main import main

__all__ = ["main"]
