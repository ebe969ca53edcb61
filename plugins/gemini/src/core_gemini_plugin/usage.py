"""Token counts of a Gemini answer (``usageMetadata``) → :class:`Usage`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_core.responses import Usage

if TYPE_CHECKING:
    from google.genai import types


def usage_from(
    metadata: types.GenerateContentResponseUsageMetadata | None, tool_uses: dict[str, int] | None = None
) -> Usage:
    """A response's ``usage_metadata`` as :class:`Usage` (zeros when it has none).
    ``cached_content_token_count`` (context caching, implicit or explicit) is part of
    ``prompt_token_count``, as Gemini reports it. What built-in tools read into the prompt
    (``tool_use_prompt_token_count``: search results, fetched pages) is billed as input: it
    counts as prompt tokens. ``tool_uses``: the built-in tool runs billed per use."""
    if metadata is None:
        return Usage(tool_uses=tool_uses)
    return Usage(
        prompt_tokens=(metadata.prompt_token_count or 0) + (metadata.tool_use_prompt_token_count or 0),
        completion_tokens=metadata.candidates_token_count or 0,
        total_tokens=metadata.total_token_count or 0,
        thinking_tokens=metadata.thoughts_token_count,
        cached_tokens=metadata.cached_content_token_count,
        tool_uses=tool_uses,
    )
