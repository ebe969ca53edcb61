"""Built-in tools on Gemini, both ways: :class:`~llm_core.builtin_tools.BuiltinTool` options →
``tools`` entries (``ToolDict``: ``google_search``, ``code_execution``, ``url_context``,
``google_maps``, ``file_search``), and what comes back → typed results: the candidate's
``groundingMetadata`` (queries, sources, the spans they support) and ``urlContextMetadata``,
and the ``executableCode`` / ``codeExecutionResult`` parts of the model's turn.

Shapes from the installed SDK (``google/genai/types.py``: ``Tool``, ``GroundingMetadata``,
``GroundingChunk``, ``GroundingSupport``, ``Segment``, ``UrlContextMetadata``,
``ExecutableCode``, ``CodeExecutionResult``) and the recorded answers of the Gemini API. Nothing
here imports the SDK: objects are read by attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core_gemini_plugin.models import model_info, thinking_style
from llm_core.builtin_tools import (
    BuiltinTool,
    BuiltinToolCall,
    Citation,
    CodeExecution,
    CodeOutput,
    FileSearch,
    WebSearch,
)
from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.requests import ChatRequest

PROVIDER = "gemini"
#: Metadata keys of an answer: the grounding and URL-context metadata as Gemini sent them.
GROUNDING_METADATA = "grounding_metadata"
URL_CONTEXT_METADATA = "url_context_metadata"

_TOOL_KEYS = {
    Feature.WEB_SEARCH: "google_search",
    Feature.CODE_EXECUTION: "code_execution",
    Feature.URL_CONTEXT: "url_context",
    Feature.GOOGLE_MAPS: "google_maps",
    Feature.FILE_SEARCH: "file_search",
}


def builtin_tools(request: ChatRequest) -> list[dict[str, Any]]:
    """The ``tools`` entries of the request's built-in tools, one tool each. Refused before
    sending: settings Gemini has no counterpart for, and built-in tools beside function
    declarations or a JSON answer on a model that cannot combine them (before Gemini 3)."""
    tools = request.builtin_tools or []
    beside = "function tools" if request.tools else "a JSON answer" if request.json_mode else None
    if tools and beside:
        info = model_info(request.model)
        if info is not None and not info.extra.get("builtin_combined"):
            raise InvalidInputError(
                f"{request.model} cannot use built-in tools and {beside} in one request (Gemini 3 models "
                "can): drop one of them or use a Gemini 3 model",
                provider=PROVIDER,
            )
    unknown = [tool.type for tool in tools if tool.feature not in _TOOL_KEYS]
    if unknown:  # a model outside the catalogue given these features by its settings
        raise InvalidInputError(f"Gemini has no built-in {', '.join(unknown)} tool", provider=PROVIDER)
    return [{_TOOL_KEYS[tool.feature]: _settings(tool)} for tool in tools]


def _settings(tool: BuiltinTool) -> dict[str, Any]:
    if isinstance(tool, WebSearch) and (tool.allowed_domains or tool.context_size):
        raise InvalidInputError(
            "Gemini's Google Search takes no allowed_domains or context_size (OpenAI's settings)", provider=PROVIDER
        )
    if isinstance(tool, CodeExecution) and tool.file_ids:
        raise InvalidInputError("Gemini's code execution takes no file_ids (OpenAI files)", provider=PROVIDER)
    if isinstance(tool, FileSearch):
        search: dict[str, Any] = {"file_search_store_names": list(tool.stores)}
        if tool.max_results is not None:
            search["top_k"] = tool.max_results
        return search
    return {}


# -- what comes back -----------------------------------------------------------------------------


def code_calls(parts: Sequence[Mapping[str, Any]]) -> list[BuiltinToolCall]:
    """One call per ``executable_code`` part of the saved model turn, with the result that
    answers it (by ``id``, else the next result part)."""
    results = [part["code_execution_result"] for part in parts if isinstance(part.get("code_execution_result"), dict)]
    by_id = {result.get("id"): result for result in results if result.get("id")}
    calls: list[BuiltinToolCall] = []
    pending = iter(result for result in results if not result.get("id"))
    for part in parts:
        code = part.get("executable_code")
        if not isinstance(code, dict):
            continue
        result = by_id.get(code.get("id")) if code.get("id") else next(pending, None)
        result = result or {}
        output = result.get("output")
        calls.append(
            BuiltinToolCall(
                tool=Feature.CODE_EXECUTION.value,
                id=code.get("id"),
                status="completed" if result else "in_progress",
                code=code.get("code"),
                language=str(code.get("language") or "").lower() or None,
                outcome=result.get("outcome"),
                outputs=[CodeOutput(type="logs", text=output)] if isinstance(output, str) else [],
            )
        )
    return calls


def grounding(
    candidate: Any, content: str, *, per_query: bool
) -> tuple[list[Citation], list[BuiltinToolCall], dict[str, Any], dict[str, int]]:
    """Citations, tool runs, the metadata as sent (dumped) and the billed tool uses of a
    candidate's ``grounding_metadata`` and ``url_context_metadata``. ``per_query``: Google
    Search is billed per query (Gemini 3), else per grounded answer."""
    citations: list[Citation] = []
    calls: list[BuiltinToolCall] = []
    kept: dict[str, Any] = {}
    uses: dict[str, int] = {}
    meta = getattr(candidate, "grounding_metadata", None)
    url_meta = getattr(candidate, "url_context_metadata", None)
    if meta is not None:
        kept[GROUNDING_METADATA] = _dump(meta)
        queries = [q for q in getattr(meta, "web_search_queries", None) or () if isinstance(q, str)]
        # web pages found by no search were read by URL context
        web_tool = Feature.URL_CONTEXT if url_meta is not None and not queries else Feature.WEB_SEARCH
        sources = [_source(chunk, web_tool) for chunk in getattr(meta, "grounding_chunks", None) or ()]
        for support in getattr(meta, "grounding_supports", None) or ():
            citations.extend(_supported(support, sources, content))
        web = [source for source in sources if source.tool == Feature.WEB_SEARCH.value]
        if queries or web:
            calls.append(
                BuiltinToolCall(tool=Feature.WEB_SEARCH.value, status="completed", queries=queries, sources=web)
            )
            uses[Feature.WEB_SEARCH.value] = len(queries) if per_query else 1
        maps = [source for source in sources if source.tool == Feature.GOOGLE_MAPS.value]
        if maps:
            calls.append(BuiltinToolCall(tool=Feature.GOOGLE_MAPS.value, status="completed", sources=maps))
            uses[Feature.GOOGLE_MAPS.value] = 1
        files = [source for source in sources if source.tool == Feature.FILE_SEARCH.value]
        if files:
            retrieval = [q for q in getattr(meta, "retrieval_queries", None) or () if isinstance(q, str)]
            calls.append(
                BuiltinToolCall(tool=Feature.FILE_SEARCH.value, status="completed", queries=retrieval, sources=files)
            )
            uses[Feature.FILE_SEARCH.value] = 1
    if url_meta is not None:
        kept[URL_CONTEXT_METADATA] = _dump(url_meta)
        statuses = {
            str(entry.retrieved_url): _enum(getattr(entry, "url_retrieval_status", None)) or "unknown"
            for entry in getattr(url_meta, "url_metadata", None) or ()
            if getattr(entry, "retrieved_url", None)
        }
        calls.append(BuiltinToolCall(tool=Feature.URL_CONTEXT.value, status="completed", statuses=statuses))
    return citations, calls, kept, uses


def _source(chunk: Any, web_tool: Feature) -> Citation:
    """A grounding chunk as the source it names: a web page (found by ``web_tool``), a Maps
    place, a file."""
    web, maps, context = (getattr(chunk, key, None) for key in ("web", "maps", "retrieved_context"))
    if maps is not None:
        return Citation(tool=Feature.GOOGLE_MAPS.value, url=getattr(maps, "uri", None), title=maps.title)
    if context is not None:
        return Citation(
            tool=Feature.FILE_SEARCH.value,
            url=getattr(context, "uri", None),
            title=context.title,
            file_id=getattr(context, "document_name", None),
        )
    return Citation(tool=web_tool.value, url=getattr(web, "uri", None), title=getattr(web, "title", None))


def _supported(support: Any, sources: Sequence[Citation], content: str) -> list[Citation]:
    """The sources of one grounding support, each with the span of the answer it supports.
    Gemini counts a segment's indexes in UTF-8 bytes; they become character offsets."""
    segment = getattr(support, "segment", None)
    text = getattr(segment, "text", None)
    start, end = _span(content, getattr(segment, "start_index", None), getattr(segment, "end_index", None), text)
    found: list[Citation] = []
    for index in getattr(support, "grounding_chunk_indices", None) or ():
        if isinstance(index, int) and 0 <= index < len(sources):
            found.append(sources[index].model_copy(update={"start": start, "end": end, "text": text}))
    return found


def _span(content: str, start: int | None, end: int | None, text: str | None) -> tuple[int | None, int | None]:
    if isinstance(end, int):
        encoded = content.encode("utf-8")
        first = len(encoded[: start or 0].decode("utf-8", errors="ignore"))
        last = len(encoded[:end].decode("utf-8", errors="ignore"))
        if text is None or content[first:last] == text:
            return first, last
    if text:  # indexes that do not match the text (another part's): find the text itself
        at = content.find(text)
        if at >= 0:
            return at, at + len(text)
    return None, None


def _dump(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(mode="json", exclude_none=True)
    return dumped


def _enum(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def builtin_results(
    candidate: Any, parts: list[dict[str, Any]], content: str, model: str
) -> tuple[list[Citation], list[BuiltinToolCall], dict[str, Any], dict[str, int]]:
    """What built-in tools did in an answer: citations, tool runs (code from the saved parts,
    the rest from the candidate's grounding), the grounding metadata as sent, billed uses."""
    citations, calls, kept, uses = grounding(candidate, content, per_query=thinking_style(model) == "level")
    code = code_calls(parts)
    if code:
        uses[Feature.CODE_EXECUTION.value] = len(code)
    return citations, code + calls, kept, uses
