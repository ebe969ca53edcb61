"""Built-in tools: the tools a provider runs on its side (web search, code execution, URL
context, Google Maps, file search, image generation, remote MCP servers), asked for with the
``builtin_tools=[...]`` option of a chat call, and what they give back.

Each tool's ``type`` is the name of the :class:`~llm_core.features.Feature` a model must offer
for it, so the catalogue says per model which ones it runs, and a router picks a provider that
runs them. What comes back is typed: :class:`Citation` (the sources of a span of the answer)
and :class:`BuiltinToolCall` (one run of a tool: the queries, the code and its result, the files
found); the provider's own items stay in the response's metadata, as sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from llm_core.errors import InvalidInputError
from llm_core.features import BUILTIN_TOOLS, Feature


class BuiltinTool(BaseModel):
    """A tool the provider runs itself. ``type`` names the feature a model needs for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str

    @property
    def feature(self) -> Feature:
        return Feature(self.type)


class WebSearch(BuiltinTool):
    """Search the web (OpenAI ``web_search``, Gemini ``googleSearch``). ``allowed_domains`` and
    ``context_size`` are OpenAI's (``filters.allowed_domains``, ``search_context_size``)."""

    type: Literal["web_search"] = "web_search"
    allowed_domains: list[str] | None = None
    context_size: Literal["low", "medium", "high"] | None = None


class CodeExecution(BuiltinTool):
    """Run code the model writes (OpenAI ``code_interpreter`` in an automatic container,
    Gemini ``codeExecution``). ``file_ids``: OpenAI files put into the container."""

    type: Literal["code_execution"] = "code_execution"
    file_ids: list[str] | None = None


class UrlContext(BuiltinTool):
    """Read the web pages the prompt names (Gemini ``urlContext``)."""

    type: Literal["url_context"] = "url_context"


class GoogleMaps(BuiltinTool):
    """Ground the answer in Google Maps data (Gemini ``googleMaps``)."""

    type: Literal["google_maps"] = "google_maps"


class FileSearch(BuiltinTool):
    """Search the caller's stores of files: OpenAI vector store ids, Gemini file search store
    names (``fileSearchStores/...``). ``max_results``: OpenAI's ``max_num_results``, Gemini's
    ``top_k``."""

    type: Literal["file_search"] = "file_search"
    stores: list[str] = Field(min_length=1)
    max_results: int | None = Field(default=None, ge=1, le=50)


class ImageGeneration(BuiltinTool):
    """Let the model draw (OpenAI ``image_generation``); images come back in
    ``metadata["images"]`` as :class:`~llm_core.responses.ImageResponse`."""

    type: Literal["image_generation"] = "image_generation"
    size: str | None = None
    quality: Literal["low", "medium", "high", "auto"] | None = None
    output_format: Literal["png", "jpeg", "webp"] | None = None


class RemoteMCP(BuiltinTool):
    """A remote MCP server the provider calls itself (OpenAI ``mcp``). Only servers that need
    no credentials: the request (and a cassette of it) would carry them in clear."""

    type: Literal["remote_mcp"] = "remote_mcp"
    server_label: str = Field(min_length=1, max_length=64)
    server_url: str = Field(pattern=r"^https://")
    allowed_tools: list[str] | None = None
    require_approval: Literal["never", "always"] = "never"
    description: str | None = None


AnyBuiltinTool = Annotated[
    WebSearch | CodeExecution | UrlContext | GoogleMaps | FileSearch | ImageGeneration | RemoteMCP,
    Field(discriminator="type"),
]
_ONE_TOOL: TypeAdapter[Any] = TypeAdapter(AnyBuiltinTool)


def coerce_builtin_tools(value: Any, provider: str) -> list[BuiltinTool]:
    """The built-in tools of a call (``builtin_tools=[...]``: tool objects, their mappings, or the
    name of a tool that needs no settings, ``"web_search"``), validated; :class:`InvalidInputError`
    (nothing is sent) for anything that is not a list of tools, an unknown tool, bad settings or
    a tool given twice."""
    if isinstance(value, str | bytes | Mapping | BaseModel) or not isinstance(value, Iterable):
        raise InvalidInputError(
            f"builtin_tools must be a list such as [WebSearch(), 'code_execution'], not {type(value).__name__}",
            provider=provider,
        )
    tools: list[BuiltinTool] = []
    for index, item in enumerate(value):
        tools.append(_tool(index, item, provider))
    kinds = [tool.type for tool in tools]
    if len(set(kinds)) != len(kinds):
        raise InvalidInputError("builtin_tools names a tool twice", provider=provider)
    return tools


def _tool(index: int, item: Any, provider: str) -> BuiltinTool:
    if isinstance(item, BuiltinTool):
        return item
    if isinstance(item, str):
        item = {"type": item.strip().lower().replace("-", "_")}
    if not isinstance(item, Mapping):
        raise InvalidInputError(
            f"builtin_tools[{index}] must be a tool (WebSearch(), ...), a mapping or a name, not {type(item).__name__}",
            provider=provider,
        )
    if item.get("type") not in {feature.value for feature in BUILTIN_TOOLS}:
        names = ", ".join(sorted(feature.value for feature in BUILTIN_TOOLS))
        raise InvalidInputError(
            f"builtin_tools[{index}]: unknown built-in tool {item.get('type')!r}; the tools are {names}",
            provider=provider,
        )
    try:
        tool: BuiltinTool = _ONE_TOOL.validate_python(dict(item))
        return tool
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error.get("loc", ())[1:])
        raise InvalidInputError(
            f"builtin_tools[{index}] ({item['type']}){' ' + where if where else ''}: {error['msg']}",
            provider=provider,
        ) from None


# -- what comes back ----------------------------------------------------------------------------


class Citation(BaseModel):
    """A source the answer cites for a span of its text. ``start``/``end`` are character
    offsets into the response's ``content`` (``None`` where the provider gives none), ``text``
    the cited span. ``tool`` names the built-in tool that found the source."""

    model_config = ConfigDict(frozen=True)

    tool: str
    url: str | None = None
    title: str | None = None
    start: int | None = None
    end: int | None = None
    text: str | None = None
    file_id: str | None = None


class CodeOutput(BaseModel):
    """One output of a code run: text (``logs``) or a file or image it made (``url``/``file_id``)."""

    model_config = ConfigDict(frozen=True)

    type: str
    text: str | None = None
    url: str | None = None
    file_id: str | None = None


class FileSearchResult(BaseModel):
    """A passage file search found."""

    model_config = ConfigDict(frozen=True)

    file_id: str | None = None
    filename: str | None = None
    score: float | None = None
    text: str | None = None


class BuiltinToolCall(BaseModel):
    """One run of a built-in tool, as the provider reported it. ``tool`` is the feature name
    (``web_search``, ``code_execution``, ...); the other fields are filled where they apply:

    - web search: ``queries`` and the ``sources`` consulted (URL, title);
    - code execution: ``code``, ``language``, ``outcome`` and ``outputs``;
    - file search: ``queries`` and ``results``;
    - URL context: ``statuses``, each URL read with its retrieval status;
    - remote MCP: ``server``, ``name``, ``arguments`` (text), ``output``, ``error``.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    id: str | None = None
    status: str | None = None
    queries: list[str] = Field(default_factory=list)
    sources: list[Citation] = Field(default_factory=list)
    statuses: dict[str, str] = Field(default_factory=dict)
    code: str | None = None
    language: str | None = None
    outcome: str | None = None
    outputs: list[CodeOutput] = Field(default_factory=list)
    results: list[FileSearchResult] = Field(default_factory=list)
    server: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | None = None
    error: str | None = None


def features_of_call(args: Iterable[Any], options: Mapping[str, Any]) -> frozenset[Feature]:
    """The features a call's tools need: each built-in tool's, and custom tools' (a router asks
    its providers for them). A malformed value needs nothing here: the provider refuses it."""
    wanted: set[Feature] = set()
    with suppress(InvalidInputError):
        wanted.update(tool.feature for tool in coerce_builtin_tools(options.get("builtin_tools") or (), "router"))
    for value in (*args, options.get("tools")):
        if isinstance(value, list | tuple) and any(getattr(tool, "kind", None) == "custom" for tool in value):
            wanted.add(Feature.CUSTOM_TOOLS)
    return frozenset(wanted)
