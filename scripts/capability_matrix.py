"""Regenerate docs/capabilities.md from the installed Gemini and OpenAI plugins."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = "core-gemini-plugin,core-openai-plugin"


def render() -> str:
    os.environ["LLM_CORE_PLUGINS"] = PLUGINS
    from llm_core.cli.matrix import capability_matrix
    from llm_core.registry import Registry

    return capability_matrix(Registry.discover(strict=True))


if __name__ == "__main__":
    target = ROOT / "docs" / "capabilities.md"
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)
