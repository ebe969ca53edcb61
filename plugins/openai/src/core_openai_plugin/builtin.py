"""Built-in tools on the Responses API, both ways: :class:`~llm_core.builtin_tools.BuiltinTool`
options → ``tools`` entries (and the ``include`` that brings their results back), and their
output items → :class:`~llm_core.builtin_tools.BuiltinToolCall` and url/file citations.

Shapes from the installed SDK: ``WebSearchToolParam``, ``CodeInterpreter``, ``FileSearchToolParam``,
``ImageGeneration``, ``Mcp`` (``types/responses/tool_param.py``), ``ResponseIncludable``; the
output items ``ResponseFunctionWebSearch``, ``ResponseCodeInterpreterToolCall``,
``ResponseFileSearchToolCall``, ``McpCall`` / ``McpListTools``, and the ``output_text``
annotations (``url_citation``, ``file_citation``, ``container_file_citation``). Items are read
as plain dicts (the parsers dump them first), so fields the SDK does not know are tolerated.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from llm_core.builtin_tools import (
    BuiltinTool,
    BuiltinToolCall,
    Citation,
    CodeExecution,
    CodeOutput,
    FileSearch,
    FileSearchResult,
    ImageGeneration,
    RemoteMCP,
    WebSearch,
)
from llm_core.errors import InvalidInputError, InvalidResponseError
from llm_core.features import Feature
from llm_core.requests import ChatRequest
from llm_core.responses import ImageResponse

PROVIDER = "openai"

#: The ``include`` values that bring each tool's results back (sources, outputs, results).
INCLUDES = {
    Feature.WEB_SEARCH: "web_search_call.action.sources",
    Feature.CODE_EXECUTION: "code_interpreter_call.outputs",
    Feature.FILE_SEARCH: "file_search_call.results",
}
#: Output item type → the built-in tool that made it.
ITEM_TOOLS = {
    "web_search_call": Feature.WEB_SEARCH,
    "code_interpreter_call": Feature.CODE_EXECUTION,
    "file_search_call": Feature.FILE_SEARCH,
    "mcp_call": Feature.REMOTE_MCP,
    "image_generation_call": Feature.IMAGE_GENERATION,
}
_ANNOTATION_TOOLS = {
    "url_citation": Feature.WEB_SEARCH,
    "file_citation": Feature.FILE_SEARCH,
    "container_file_citation": Feature.CODE_EXECUTION,
}


def builtin_tools(request: ChatRequest, reasoning: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The ``tools`` entries of the request's built-in tools; combinations the API refuses are
    refused here, before anything is sent."""
    tools = request.builtin_tools or []
    effort = (reasoning or {}).get("effort")
    if effort == "minimal" and any(tool.feature is Feature.WEB_SEARCH for tool in tools):
        # OpenAI's web search guide: web search is not supported with minimal reasoning
        raise InvalidInputError(
            "OpenAI's web search does not run with minimal reasoning: ask for thinking level "
            "'low' or more, or leave web search out",
            provider=PROVIDER,
        )
    return [_tool(tool) for tool in tools]


def _tool(tool: BuiltinTool) -> dict[str, Any]:
    if isinstance(tool, WebSearch):
        spec: dict[str, Any] = {"type": "web_search"}
        if tool.allowed_domains:
            spec["filters"] = {"allowed_domains": list(tool.allowed_domains)}
        if tool.context_size is not None:
            spec["search_context_size"] = tool.context_size
        return spec
    if isinstance(tool, CodeExecution):
        container: dict[str, Any] = {"type": "auto"}
        if tool.file_ids:
            container["file_ids"] = list(tool.file_ids)
        return {"type": "code_interpreter", "container": container}
    if isinstance(tool, FileSearch):
        spec = {"type": "file_search", "vector_store_ids": list(tool.stores)}
        if tool.max_results is not None:
            spec["max_num_results"] = tool.max_results
        return spec
    if isinstance(tool, ImageGeneration):
        spec = {"type": "image_generation"}
        spec.update(tool.model_dump(exclude={"type"}, exclude_none=True))
        return spec
    if isinstance(tool, RemoteMCP):
        spec = {
            "type": "mcp",
            "server_label": tool.server_label,
            "server_url": tool.server_url,
            "require_approval": tool.require_approval,
        }
        if tool.allowed_tools is not None:
            spec["allowed_tools"] = list(tool.allowed_tools)
        if tool.description:
            spec["server_description"] = tool.description
        return spec
    # the catalogue offers no other built-in tool on OpenAI: the builder refused it already
    raise InvalidInputError(f"OpenAI has no built-in {tool.type} tool", provider=PROVIDER)


def includes(request: ChatRequest) -> list[str]:
    """The ``include`` values the request's built-in tools need."""
    return [INCLUDES[tool.feature] for tool in request.builtin_tools or () if tool.feature in INCLUDES]


# -- output items → typed results -------------------------------------------------------------

#: Metadata key of annotations of the answer's text that are no citation (``file_path``: a file the code
#: interpreter made), as sent.
ANNOTATIONS = "annotations"
_CITATIONS = frozenset({"url_citation", "file_citation", "container_file_citation"})


def other_annotations(part: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The annotations of an ``output_text`` part that :func:`citations` does not type."""
    notes = part.get("annotations")
    if not isinstance(notes, list):
        return []
    return [dict(note) for note in notes if isinstance(note, Mapping) and note.get("type") not in _CITATIONS]


def tool_uses(
    request: ChatRequest, calls: Sequence[BuiltinToolCall], items: Sequence[dict[str, Any]]
) -> dict[str, int] | None:
    """Billed uses of built-in tools, as OpenAI's price list counts them: each web search and
    file search call, and each code interpreter container. With ``container: auto`` the API
    makes a container for every response offered the tool, used or not, so that is at least one."""
    counted: dict[str, int] = {}
    for call in calls:
        if call.tool in ("web_search", "file_search"):
            counted[call.tool] = counted.get(call.tool, 0) + 1
    containers = {item.get("container_id") for item in items if item.get("type") == "code_interpreter_call"}
    if containers or any(tool.type == "code_execution" for tool in request.builtin_tools or ()):
        counted["code_execution"] = max(1, len(containers))
    return counted or None


def generated_image(item: Mapping[str, Any], model: str) -> ImageResponse:
    """An ``image_generation_call`` output item (the built-in image tool) as an image; the item's
    other keys are its metadata."""
    result = item.get("result")
    if not isinstance(result, str) or not result:
        raise InvalidResponseError("OpenAI's image_generation_call carries no image", provider=PROVIDER)
    try:
        data = base64.b64decode(result, validate=True)
    except ValueError as exc:
        raise InvalidResponseError("OpenAI's generated image is not valid base64", provider=PROVIDER) from exc
    fmt = item.get("output_format") or "png"
    details = {key: value for key, value in item.items() if key not in ("result", "revised_prompt")}
    return ImageResponse(
        data=data,
        mime_type=f"image/{fmt}",
        model=model,
        provider=PROVIDER,
        revised_prompt=_text(item.get("revised_prompt")),
        metadata=details,
    )


def builtin_call(item: Mapping[str, Any]) -> BuiltinToolCall | None:
    """The built-in tool run an output item reports (``None`` for any other item)."""
    tool = ITEM_TOOLS.get(str(item.get("type")))
    if tool is None:
        return None
    common: dict[str, Any] = {"tool": tool.value, "id": _text(item.get("id")), "status": _text(item.get("status"))}
    if tool is Feature.WEB_SEARCH:
        return BuiltinToolCall(**common, **_web_search(item.get("action")))
    if tool is Feature.CODE_EXECUTION:
        return BuiltinToolCall(
            **common,
            code=_text(item.get("code")),
            language="python",  # the code interpreter runs Python
            outputs=[_code_output(output) for output in _list(item.get("outputs"))],
        )
    if tool is Feature.FILE_SEARCH:
        return BuiltinToolCall(
            **common,
            queries=[str(query) for query in _list(item.get("queries"))],
            results=[_file_result(result) for result in _list(item.get("results"))],
        )
    if tool is Feature.REMOTE_MCP:
        error = item.get("error")
        return BuiltinToolCall(
            **common,
            server=_text(item.get("server_label")),
            name=_text(item.get("name")),
            arguments=_text(item.get("arguments")),
            output=_text(item.get("output")),
            error=None if error is None else str(error.get("message", error) if isinstance(error, Mapping) else error),
        )
    return BuiltinToolCall(**common)  # image generation: the image itself is in metadata["images"]


def _web_search(action: Any) -> dict[str, Any]:
    if not isinstance(action, Mapping):
        return {}
    queries = [str(q) for q in _list(action.get("queries"))] or ([str(action["query"])] if action.get("query") else [])
    if action.get("type") == "find_in_page" and action.get("pattern"):
        queries = [str(action["pattern"])]
    # a source is a page (``url``) or one of OpenAI's own data sources (``type: api``, a ``name``)
    found = [source for source in _list(action.get("sources")) if isinstance(source, Mapping)]
    if action.get("type") in ("open_page", "find_in_page") and action.get("url"):
        found.append({"url": action["url"]})
    sources = [
        Citation(tool=Feature.WEB_SEARCH.value, url=_text(source.get("url")), title=_text(source.get("name")))
        for source in found
    ]
    return {"queries": queries, "sources": sources}


def _code_output(output: Any) -> CodeOutput:
    data = output if isinstance(output, Mapping) else {}
    return CodeOutput(type=str(data.get("type", "")), text=_text(data.get("logs")), url=_text(data.get("url")))


def _file_result(result: Any) -> FileSearchResult:
    data = result if isinstance(result, Mapping) else {}
    score = data.get("score")
    return FileSearchResult(
        file_id=_text(data.get("file_id")),
        filename=_text(data.get("filename")),
        score=float(score) if isinstance(score, int | float) else None,
        text=_text(data.get("text")),
    )


def citations(part: Mapping[str, Any], offset: int) -> list[Citation]:
    """The citations of one ``output_text`` part whose text starts at ``offset`` of the answer.
    URL citations carry start/end character indexes into the part; a file citation an ``index``
    (where it applies)."""
    text = _text(part.get("text")) or ""
    found: list[Citation] = []
    for note in _list(part.get("annotations")):
        if not isinstance(note, Mapping):
            continue
        tool = _ANNOTATION_TOOLS.get(str(note.get("type")))
        if tool is None:
            continue  # file_path and others: no source of the text (kept in the message item)
        start, end = note.get("start_index"), note.get("end_index")
        if not isinstance(start, int) or not isinstance(end, int):
            start = end = note.get("index") if isinstance(note.get("index"), int) else None
        found.append(
            Citation(
                tool=tool.value,
                url=_text(note.get("url")),
                title=_text(note.get("title")) or _text(note.get("filename")),
                start=None if start is None else offset + start,
                end=None if end is None else offset + end,
                text=text[start:end] if isinstance(start, int) and isinstance(end, int) and end > start else None,
                file_id=_text(note.get("file_id")),
            )
        )
    return found


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()
