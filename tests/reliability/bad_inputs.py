"""The bad-input catalogue: invalid inputs across the public API and the CLI.

Each entry must raise a typed error (an ``LLMError``) whose message says what to fix, before any
request is sent. ``fix`` is a fragment that the message must contain (case-insensitive): the
part that tells the caller what to change. Provider calls are run on the FakeProvider and on
both plugins (sync and, where the call has one, async); the CLI entries run ``llm-core``
in-process against the same providers.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from llm_core.errors import (
    ConfigurationError,
    InvalidInputError,
    LLMError,
    UnknownFeatureError,
    UnknownProviderError,
    UnknownSettingError,
    UnsupportedFeatureError,
)
from llm_core.messages import DocumentPart, ImagePart
from tests.reliability.upstreams import PNG_1X1

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
TOOL = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
YES_NO = {"key": "relevant", "kind": "yes_no", "instructions": "Is it relevant?"}


class Opaque:
    """A type Pydantic cannot describe in JSON schema."""


class Unusable(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    thing: Opaque


@dataclass
class NotAModel:
    name: str


def _user(content: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": content}]


def _assistant_call(arguments: Any, name: str = "get_weather") -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": name, "arguments": arguments}]},
    ]


@dataclass(frozen=True)
class Case:
    """A provider call ``method(*args, **kwargs)`` (sync and ``aio``) that must be refused."""

    key: str
    what: str
    method: str
    args: tuple[Any, ...]
    error: type[LLMError]
    fix: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    providers: tuple[str, ...] = ("fake", "gemini", "openai")
    has_async: bool = True
    #: The parameter the message must name (when ``fix`` does not already).
    param: str = ""

    def call(self, provider: Any) -> Any:
        return _consume(getattr(provider, self.method)(*self.args, **self.kwargs))

    async def acall(self, provider: Any) -> Any:
        result = getattr(provider.aio, self.method)(*self.args, **self.kwargs)
        if hasattr(result, "__aiter__"):
            return [item async for item in result]
        return await result


def _consume(result: Any) -> Any:
    if hasattr(result, "__next__"):
        return list(result)
    return result


def _big(size: int, head: bytes) -> bytes:
    return head + bytes(size - len(head) + 1)


API_CASES: tuple[Case, ...] = (
    # -- messages ------------------------------------------------------------------------------
    Case("empty-prompt", "empty prompt", "chat_completion", ("",), InvalidInputError, "prompt is empty"),
    Case("blank-prompt", "blank prompt", "chat_completion", (" \n\t ",), InvalidInputError, "prompt is empty"),
    Case("no-messages", "empty message list", "chat_completion", ([],), InvalidInputError, "at least one user message"),
    Case("none-messages", "None as messages", "chat_completion", (None,), InvalidInputError,
         "must be a string or a list"),
    Case("mapping-not-list", "one mapping instead of a list", "chat_completion", ({"role": "user", "content": "hi"},),
         InvalidInputError, "must be a string or a list"),
    Case("bytes-messages", "bytes as messages", "chat_completion", (b"hi",), InvalidInputError,
         "must be a string or a list"),
    Case("non-mapping-message", "a number in the message list", "chat_completion", ([42],), InvalidInputError,
         "message 0 must be a chatmessage or a mapping"),
    Case("unknown-role", "unknown role", "chat_completion", ([{"role": "wizard", "content": "hi"}],),
         InvalidInputError, "role must be one of system, user, assistant, tool"),
    Case("missing-role", "message without role", "chat_completion", ([{"content": "hi"}],), InvalidInputError,
         "message 0 is invalid: role must be one of"),
    Case("only-system", "only system messages", "chat_completion", ([{"role": "system", "content": "be nice"}],),
         InvalidInputError, "add a user message"),
    Case("tool-without-id", "tool result without tool_call_id", "chat_completion",
         ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}],), InvalidInputError,
         "needs tool_call_id"),
    Case("user-tool-calls", "tool_calls on a user message", "chat_completion",
         ([{"role": "user", "content": "hi", "tool_calls": [{"id": "c", "name": "f"}]}],), InvalidInputError,
         "only assistant messages carry tool_calls"),
    Case("content-number", "content that is a number", "chat_completion", (_user(42),), InvalidInputError,
         "message 0 is invalid: content: input should be a valid string"),
    Case("unknown-part", "content part of unknown type", "chat_completion", (_user([{"type": "audio", "x": 1}]),),
         InvalidInputError, "expected tags: 'text', 'image', 'document'"),
    Case("tool-result-parts", "tool result given as parts", "chat_completion",
         ([*_assistant_call({}), {"role": "tool", "tool_call_id": "call_1", "content": ["parts"]}],),
         InvalidInputError, "tool result must be a string"),
    # -- tool-call arguments ----------------------------------------------------------------------
    Case("args-not-json", "tool-call arguments that are not JSON", "chat_completion",
         (_assistant_call("{city: Paris"),), InvalidInputError, "not valid json"),
    Case("args-not-object", "tool-call arguments that are a JSON list", "chat_completion",
         (_assistant_call("[1, 2]"),), InvalidInputError, "must decode to a json object"),
    Case("call-empty-name", "tool call with an empty name", "chat_completion", (_assistant_call({}, name=""),),
         InvalidInputError, "tool_calls.0.name"),
    # -- images and documents -------------------------------------------------------------------
    Case("image-wrong-bytes", "JPEG bytes declared as PNG", "analyze_image",
         (ImagePart(data=JPEG, mime_type="image/png"),), InvalidInputError, "fix mime_type"),
    Case("image-not-image", "text bytes declared as PNG", "analyze_image",
         (ImagePart(data=b"hello, not a picture", mime_type="image/png"),), InvalidInputError,
         "not a valid png file"),
    Case("image-format", "unsupported image format (BMP)", "analyze_image",
         (ImagePart(data=b"BM\x00\x00", mime_type="image/bmp"),), InvalidInputError, "use one of"),
    Case("image-unknown-type", "image bytes of unknown type, no MIME type", "analyze_image", (b"\x00\x01\x02\x03",),
         InvalidInputError, "pass mime_type"),
    Case("image-url-format", "image URL of an unsupported format", "analyze_image",
         ("https://example.com/picture.tiff",), InvalidInputError, "pass mime_type"),
    Case("image-too-big", "image over the size limit", "analyze_image",
         (ImagePart(data=_big(20 * 1024 * 1024, PNG_1X1[:16]), mime_type="image/png"),), InvalidInputError,
         "accepts at most", providers=("fake", "openai")),
    Case("image-too-big-gemini", "image over Gemini's inline limit", "analyze_image",
         (ImagePart(data=_big(15 * 1024 * 1024, PNG_1X1[:16]), mime_type="image/png"),), InvalidInputError,
         "accepts at most", providers=("gemini",)),
    Case("image-not-an-image", "a number as the image", "analyze_image", (42,), InvalidInputError,
         "an image must be bytes, an imagepart, or an http(s) or data: url"),
    Case("image-none-given", "analyze_image with no image", "analyze_image", ([],), InvalidInputError,
         "needs at least one image"),
    Case("image-empty-part", "image part with empty data", "chat_completion",
         (_user([{"type": "image", "data": b"", "mime_type": "image/png"}]),), InvalidInputError, "data is empty"),
    Case("image-two-sources", "image part with both data and url", "chat_completion",
         (_user([{"type": "image", "data": PNG_1X1, "url": "https://x/y.png"}]),), InvalidInputError,
         "exactly one of data (bytes) or url"),
    Case("image-bad-base64", "image data that is not base64", "chat_completion",
         (_user([{"type": "image", "data": "%%% not base64 %%%", "mime_type": "image/png"}]),),
         InvalidInputError, "bytes or base64 text"),
    Case("image-data-url-empty", "data: URL without payload", "chat_completion",
         (_user([{"type": "image", "data": "data:image/png;base64"}]),), InvalidInputError, "needs a ','"),
    Case("document-wrong-bytes", "PNG bytes declared as PDF", "chat_completion",
         (_user(["Summarise", DocumentPart(data=PNG_1X1, mime_type="application/pdf")]),), InvalidInputError,
         "fix mime_type"),
    Case("document-format", "unsupported document format (Word)", "chat_completion",
         (_user(["Summarise", DocumentPart(data=b"PK\x03\x04", mime_type="application/msword")]),),
         InvalidInputError, "use one of pdf"),
    Case("document-too-big", "document over the size limit", "chat_completion",
         (_user(["Summarise", DocumentPart(data=_big(15 * 1024 * 1024, PDF), mime_type="application/pdf")]),),
         InvalidInputError, "accepts at most", providers=("gemini",)),
    # -- features, providers, settings ----------------------------------------------------------
    Case("unknown-feature", "supports_feature('vison')", "supports_feature", ("vison",), UnknownFeatureError,
         "valid features are: chat", has_async=False),
    Case("unsupported-model-feature", "vision on a model without vision", "analyze_image",
         (PNG_1X1,), UnsupportedFeatureError, "models that do:", kwargs={"model": "text-only"},
         providers=("fake",)),
    Case("thinking-unsupported", "thinking on a model that cannot think", "chat_completion", ("hi",),
         UnsupportedFeatureError, "does not support thinking", kwargs={"thinking": True, "model": "text-only"},
         providers=("fake",)),
    # -- tools ---------------------------------------------------------------------------------
    Case("tool-empty-name", "tool spec with an empty name", "chat_completion_with_tools",
         ("hi", [{"name": ""}]), InvalidInputError, "tool name must be 1-128 characters"),
    Case("tool-name-spaces", "tool name with spaces", "chat_completion_with_tools",
         ("hi", [{"name": "get weather"}]), InvalidInputError, "letters, digits"),
    Case("tool-not-object", "tool parameters of type array", "chat_completion_with_tools",
         ("hi", [{"name": "f", "parameters": {"type": "array"}}]), InvalidInputError, "type 'object'"),
    Case("tool-properties-list", "tool properties given as a list of names", "chat_completion_with_tools",
         ("hi", [{"name": "f", "parameters": {"type": "object", "properties": ["city"]}}]), InvalidInputError,
         "'properties' must be an object"),
    Case("tool-required-unknown", "tool 'required' naming no property", "chat_completion_with_tools",
         ("hi", [{"name": "f", "parameters": {"type": "object", "properties": {}, "required": ["city"]}}]),
         InvalidInputError, "must list names from 'properties'"),
    Case("tool-duplicate", "two tools with one name", "chat_completion_with_tools", ("hi", [TOOL, TOOL]),
         InvalidInputError, "tool names must be unique"),
    Case("tool-none", "no tools", "chat_completion_with_tools", ("hi", []), InvalidInputError,
         "needs at least one tool"),
    Case("tool-not-mapping", "a tool given as a string", "chat_completion_with_tools", ("hi", ["get_weather"]),
         InvalidInputError, "tool 0 must be a toolspec or a mapping"),
    Case("tool-choice-blank", "blank tool_choice", "chat_completion_with_tools", ("hi", [TOOL]), InvalidInputError,
         "tool_choice must be", kwargs={"tool_choice": " "}),
    # -- decisions -----------------------------------------------------------------------------
    Case("decision-key-case", "question key with capitals", "decide",
         ("triage", [{**YES_NO, "key": "Relevant"}]), InvalidInputError, "must match"),
    Case("decision-key-digit", "question key starting with a digit", "decide",
         ("triage", [{**YES_NO, "key": "1st"}]), InvalidInputError, "lower-case letter first"),
    Case("decision-blank-instructions", "blank question instructions", "decide",
         ("triage", [{**YES_NO, "instructions": "  "}]), InvalidInputError, "must not be blank"),
    Case("decision-one-option", "choice with one option", "decide",
         ("triage", [{"key": "pick", "kind": "choice", "instructions": "Pick", "options": ["a"]}]),
         InvalidInputError, "2 to 255 entries, got 1"),
    Case("decision-duplicate-options", "choice with duplicate options", "decide",
         ("triage", [{"key": "pick", "kind": "choice", "instructions": "Pick", "options": ["a", "a"]}]),
         InvalidInputError, "must be unique"),
    Case("decision-foreign-description", "description for an option not offered", "decide",
         ("triage", [{"key": "pick", "kind": "choice", "instructions": "Pick", "options": ["a", "b"],
                      "option_descriptions": {"c": "?"}}]), InvalidInputError, "options not offered"),
    Case("decision-eleven-levels", "score with 11 levels", "decide",
         ("triage", [{"key": "rate", "kind": "score", "instructions": "Rate", "levels": [str(i) for i in range(11)]}]),
         InvalidInputError, "2 to 10 entries"),
    Case("decision-unknown-kind", "question of unknown kind", "decide",
         ("triage", [{**YES_NO, "kind": "maybe"}]), InvalidInputError, "expected tags: 'yes_no', 'choice', 'score'"),
    Case("decision-duplicate-keys", "two questions with one key", "decide", ("triage", [YES_NO, YES_NO]),
         InvalidInputError, "duplicate decision question keys"),
    Case("decision-no-questions", "no questions", "decide", ("triage", []), InvalidInputError,
         "at least one question"),
    Case("decision-empty-subject", "empty subject", "decide", ({}, [YES_NO]), InvalidInputError,
         "needs a task, a candidate or some evidence"),
    # -- structured output ----------------------------------------------------------------------
    Case("schema-number", "a number as the schema", "generate_json", ("a person", 42), InvalidInputError,
         "pydantic model class or a json-schema dict"),
    Case("schema-dataclass", "a dataclass as the schema", "generate_json", ("a person", NotAModel),
         InvalidInputError, "pydantic model class or a json-schema dict"),
    Case("schema-unusable", "a model Pydantic cannot describe", "generate_json", ("a thing", Unusable),
         InvalidInputError, "cannot be turned into json schema"),
    # -- options -------------------------------------------------------------------------------
    Case("temperature-negative", "temperature -1", "chat_completion", ("hi",), InvalidInputError,
         "temperature: input should be greater than or equal to 0", kwargs={"temperature": -1.0}),
    Case("temperature-absurd", "temperature 50", "chat_completion", ("hi",), InvalidInputError,
         "temperature: input should be less than or equal to 2", kwargs={"temperature": 50.0}),
    Case("max-tokens-zero", "max_tokens 0", "chat_completion", ("hi",), InvalidInputError,
         "max_tokens: input should be greater than or equal to 1", kwargs={"max_tokens": 0}),
    Case("max-tokens-negative", "max_tokens -5", "chat_completion", ("hi",), InvalidInputError,
         "max_tokens: input should be greater than or equal to 1", kwargs={"max_tokens": -5}),
    Case("top-p-absurd", "top_p 1.5", "chat_completion", ("hi",), InvalidInputError,
         "top_p: input should be less than or equal to 1", kwargs={"top_p": 1.5}),
    Case("thinking-budget", "thinking budget -2", "chat_completion", ("hi",), InvalidInputError,
         "budget: input should be greater than or equal to -1", kwargs={"thinking": {"budget": -2}}),
    Case("thinking-level", "thinking level 'extreme'", "chat_completion", ("hi",), InvalidInputError,
         "'minimal', 'low', 'medium' or 'high'", kwargs={"thinking": {"level": "extreme"}}),
    Case("call-context", "unknown call_context", "chat_completion", ("hi",), InvalidInputError,
         "use one of agent_thought, final_synthesis", kwargs={"call_context": "DAYDREAM"}),
    Case("stream-temperature", "stream with temperature -1", "stream_chat_completion", ("hi",), InvalidInputError,
         "temperature: input should be greater than or equal to 0", kwargs={"temperature": -1.0}),
    Case("stream-empty", "stream of an empty prompt", "stream_chat_completion", ("",), InvalidInputError,
         "prompt is empty"),
    Case("unknown-option", "an unknown per-call option", "chat_completion", ("hi",), InvalidInputError,
         "unknown chat option", kwargs={"frobnicate": 1}, providers=("gemini", "openai")),
    Case("stream-unknown-option", "stream with an unknown option", "stream_chat_completion", ("hi",),
         InvalidInputError, "unknown chat option", kwargs={"frobnicate": 1}, providers=("gemini", "openai")),
    Case("embed-nothing", "embeddings of an empty list", "embeddings", ([],), InvalidInputError,
         "one or more non-empty strings"),
    Case("embed-blank", "embeddings of a blank string", "embeddings", ([""],), InvalidInputError,
         "one or more non-empty strings"),
    Case("embed-dimensions", "embedding dimensions 0", "embeddings", (["hi"],), InvalidInputError,
         "dimensions: input should be greater than or equal to 1", kwargs={"dimensions": 0}),
    Case("image-prompt-empty", "image prompt empty", "generate_image_bytes", ("",), InvalidInputError,
         "image prompt is empty"),
    Case("image-input-shape", "input image not (bytes, mime)", "generate_image_bytes", ("a cat",),
         InvalidInputError, "(bytes, mime_type) or an imagepart", kwargs={"input_images": [PNG_1X1]}),
    # -- wrong types: refused before sending, naming the parameter ----------------------------------
    Case("thinking-text", "thinking='yes'", "chat_completion", ("hi",), InvalidInputError,
         "thinking must be true, false", kwargs={"thinking": "yes"}, param="thinking"),
    Case("thinking-number", "thinking=5", "chat_completion", ("hi",), InvalidInputError,
         "thinking must be true, false", kwargs={"thinking": 5}, param="thinking"),
    Case("system-number", "system=5", "chat_completion", ("hi",), InvalidInputError, "system must be a string",
         kwargs={"system": 5}, param="system"),
    Case("system-list", "system as a list", "chat_completion", ("hi",), InvalidInputError,
         "system must be a string", kwargs={"system": ["be brief"]}, param="system"),
    Case("system-blank", "whitespace-only system", "chat_completion", ("hi",), InvalidInputError, "system is blank",
         kwargs={"system": "  \n"}, param="system"),
    Case("model-number", "model=5", "chat_completion", ("hi",), InvalidInputError, "must be a model name",
         kwargs={"model": 5}, param="model"),
    Case("model-blank", "model='  '", "chat_completion", ("hi",), InvalidInputError, "must be a model name",
         kwargs={"model": "  "}, param="model"),
    Case("embed-model-number", "embeddings with model=[1]", "embeddings", ("hi",), InvalidInputError,
         "must be a model name", kwargs={"model": [1]}, param="model"),
    Case("prompt-number", "complete(42)", "complete", (42,), InvalidInputError, "must be a string or a list",
         param="messages"),
    Case("tools-none", "tools=None", "chat_completion_with_tools", ("hi", None), InvalidInputError,
         "tools must be a list", param="tools"),
    Case("tools-number", "tools=5", "chat_completion_with_tools", ("hi", 5), InvalidInputError,
         "tools must be a list", param="tools"),
    Case("tools-mapping", "one tool mapping instead of a list", "chat_completion_with_tools", ("hi", TOOL),
         InvalidInputError, "tools must be a list", param="tools"),
    Case("questions-none", "questions=None", "decide", ("triage", None), InvalidInputError,
         "questions must be a list", param="questions"),
    Case("questions-mapping", "one question instead of a list", "decide", ("triage", YES_NO), InvalidInputError,
         "questions must be a list", param="questions"),
    Case("questions-number-item", "a number as a question", "decide", ("triage", [5]), InvalidInputError,
         "decision question 0 is invalid", param="question"),
    Case("subject-number", "subject=5", "decide", (5, [YES_NO]), InvalidInputError,
         "subject must be a string, a mapping", param="subject"),
    Case("embed-number", "embeddings(5)", "embeddings", (5,), InvalidInputError,
         "input must be a string or a list of strings", param="input"),
    Case("embed-none", "embeddings(None)", "embeddings", (None,), InvalidInputError,
         "input must be a string or a list of strings", param="input"),
    Case("embed-number-item", "a number among the embedding inputs", "embeddings", (["hi", 3],), InvalidInputError,
         "one or more non-empty strings (input[1] is 3)", param="input[1]"),
    Case("image-prompt-number", "image prompt 5", "generate_image_bytes", (5,), InvalidInputError,
         "prompt must be a string", param="prompt"),
    # -- images and documents: refused before sending, naming the parameter -------------------------
    Case("image-empty-bytes", "analyze_image(b'')", "analyze_image", (b"",), InvalidInputError, "data is empty",
         param="image"),
    Case("image-data-url-bad-base64", "data: URL with a payload that is not base64", "analyze_image",
         ("data:image/png;base64,%%%not-base64%%%",), InvalidInputError, "bytes or base64 text", param="image"),
    Case("image-data-url-wrong-type", "data: URL declaring PNG, carrying JPEG", "analyze_image",
         ("data:image/png;base64," + base64.b64encode(JPEG).decode(),), InvalidInputError, "fix mime_type",
         param="image"),
    Case("image-url-file", "file: URL as an image part", "chat_completion",
         (_user([{"type": "image", "url": "file:///etc/passwd", "mime_type": "image/png"}]),), InvalidInputError,
         "url must be an http(s) or data: url", param="url"),
    Case("image-url-ftp", "ftp: URL as an image", "analyze_image", ("ftp://example.com/cat.png",),
         InvalidInputError, "an image must be bytes, an imagepart, or an http(s) or data: url", param="image"),
    Case("image-heic-no-magic", "text bytes declared as HEIC", "analyze_image",
         (ImagePart(data=b"not really a heic file", mime_type="image/heic"),), InvalidInputError,
         "not a valid heic file", providers=("gemini",), param="image"),
    Case("input-image-wrong-bytes", "image-generation input: JPEG bytes declared as PNG", "generate_image_bytes",
         ("a cat",), InvalidInputError, "fix mime_type", kwargs={"input_images": [(JPEG, "image/png")]},
         param="input_images[0]"),
    Case("input-image-not-image", "image-generation input: text declared as PNG", "generate_image_bytes",
         ("a cat",), InvalidInputError, "not a valid png file", kwargs={"input_images": [(b"hello", "image/png")]},
         param="input_images[0]"),
    Case("input-image-empty", "image-generation input: empty bytes", "generate_image_bytes", ("a cat",),
         InvalidInputError, "data is empty", kwargs={"input_images": [(b"", "image/png")]}, param="input image"),
    Case("input-image-too-big", "image-generation input over the size limit", "generate_image_bytes", ("a cat",),
         InvalidInputError, "accepts at most", kwargs={"input_images": [(_big(20 * 1024 * 1024, PNG_1X1[:16]),
                                                                           "image/png")]},
         param="input_images[0]"),
    Case("system-image", "an image in a system message", "chat_completion",
         ([{"role": "system", "content": [{"type": "image", "data": PNG_1X1, "mime_type": "image/png"}]},
           {"role": "user", "content": "What is in it?"}],), InvalidInputError, "system instructions are text only",
         param="message 0"),
    Case("system-document", "a document in a system message", "chat_completion",
         ([{"role": "system", "content": [DocumentPart(data=PDF, mime_type="application/pdf")]},
           {"role": "user", "content": "Summarise it"}],), InvalidInputError, "put the document in a user message",
         param="message 0"),
    # -- text ---------------------------------------------------------------------------------------
    Case("surrogate-prompt", "a lone surrogate in the prompt", "chat_completion", ("hi \ud800 there",),
         InvalidInputError, "lone surrogate", param="messages[0].content"),
    Case("surrogate-system", "a lone surrogate in system", "chat_completion", ("hi",), InvalidInputError,
         "lone surrogate", kwargs={"system": "be \udfff brief"}, param="messages[0].content"),
    Case("surrogate-tool", "a lone surrogate in a tool description", "chat_completion_with_tools",
         ("hi", [{**TOOL, "description": "weather \ud83d"}]), InvalidInputError, "lone surrogate",
         param="tools[0].description"),
    Case("surrogate-embedding", "a lone surrogate in an embedding input", "embeddings", (["ok", "bad \ud800"],),
         InvalidInputError, "lone surrogate", param="input[1]"),
    Case("surrogate-decision", "a lone surrogate in a decision subject", "decide", ("triage \ud800", [YES_NO]),
         InvalidInputError, "lone surrogate", param="subject.task"),
    Case("empty-user-turn", "a user turn with empty content", "chat_completion",
         ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
           {"role": "user", "content": "   "}],), InvalidInputError, "is empty: give it some text",
         param="message 2"),
    Case("empty-assistant-turn", "an assistant turn with nothing in it", "chat_completion",
         ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""},
           {"role": "user", "content": "again"}],), InvalidInputError, "is empty: give it some text",
         param="message 1"),
    # -- tool names each provider refuses ---------------------------------------------------------
    Case("tool-name-dot-openai", "tool name with a dot (OpenAI function names)", "chat_completion_with_tools",
         ("hi", [{**TOOL, "name": "weather.get"}]), InvalidInputError, "1 to 64 letters, digits", providers=("openai",),
         param="tools[0]"),
    Case("tool-name-long-openai", "tool name of 65 characters (OpenAI)", "chat_completion_with_tools",
         ("hi", [{**TOOL, "name": "f" * 65}]), InvalidInputError, "1 to 64 letters, digits", providers=("openai",),
         param="tools[0]"),
)


@dataclass(frozen=True)
class SetupCase:
    """An invalid setting or registry use (no provider call involved)."""

    key: str
    what: str
    run: Callable[[Any], Any]  # given the registry under test
    error: type[LLMError]
    fix: str


def _retry(**values: Any) -> Any:
    from llm_core.retry import RetryPolicy

    return RetryPolicy(**values)


SETUP_CASES: tuple[SetupCase, ...] = (
    SetupCase("select-unknown-feature", "select('telepathy')", lambda r: r.select("telepathy"), UnknownFeatureError,
              "valid features are"),
    SetupCase("unknown-provider", "get('nope')", lambda r: r.get("nope"), UnknownProviderError,
              "registered providers:"),
    SetupCase("timeout-negative", "timeout=-1", lambda r: r.get("openai", api_key="k", timeout=-1),
              ConfigurationError, "timeout must be positive"),
    SetupCase("timeout-text", "timeout='soon'", lambda r: r.get("gemini", api_key="k", timeout="soon"),
              ConfigurationError, "timeout must be a number of seconds"),
    SetupCase("retry-zero", "RetryPolicy(max_attempts=0)", lambda r: _retry(max_attempts=0), ConfigurationError,
              "max_attempts must be at least 1"),
    SetupCase("retry-negative-delay", "RetryPolicy(initial_delay=-1)", lambda r: _retry(initial_delay=-1.0),
              ConfigurationError, "must not be negative"),
    SetupCase("retry-unknown-setting", "retry={'attempts': 5}", lambda r: r.get("openai", api_key="k",
              retry={"attempts": 5}), ConfigurationError, "known: ['deadline'"),
    SetupCase("retry-negative-multiplier", "RetryPolicy(multiplier=-2)", lambda r: _retry(multiplier=-2.0),
              ConfigurationError, "multiplier must be a finite number that is not negative"),
    SetupCase("retry-negative-max-retry-after", "RetryPolicy(max_retry_after=-1)",
              lambda r: _retry(max_retry_after=-1.0), ConfigurationError, "max_retry_after must be a finite number"),
    SetupCase("retry-nan-delay", "RetryPolicy(initial_delay=nan)", lambda r: _retry(initial_delay=float("nan")),
              ConfigurationError, "initial_delay must be a finite number"),
    SetupCase("retry-text-delay", "retry={'max_delay': 'soon'}", lambda r: r.get("openai", api_key="k",
              retry={"max_delay": "soon"}), ConfigurationError, "max_delay must be a finite number"),
    SetupCase("retry-fractional-attempts", "RetryPolicy(max_attempts=2.5)", lambda r: _retry(max_attempts=2.5),
              ConfigurationError, "max_attempts must be at least 1 (a whole number)"),
    SetupCase("retry-infinite-deadline", "RetryPolicy(deadline=inf)", lambda r: _retry(deadline=float("inf")),
              ConfigurationError, "deadline must be positive"),
    SetupCase("retry-not-a-table", "retry='fast'", lambda r: r.get("gemini", api_key="k", retry="fast"),
              ConfigurationError, "retry settings must be a table"),
    SetupCase("missing-key", "no API key", lambda r: r.get("gemini"), ConfigurationError, "GEMINI_API_KEY"),
    SetupCase("unknown-setting", "get('gemini', tempreature=0.1)", lambda r: r.get("gemini", api_key="k",
              tempreature=0.1), UnknownSettingError, "did you mean 'temperature'?"),
    SetupCase("unknown-default", "get('openai', top_k=20) (no such OpenAI option)", lambda r: r.get("openai",
              api_key="k", top_k=20), UnknownSettingError, "unknown setting 'top_k' passed to OpenAIProvider"),
    SetupCase("unknown-setting-configure", "configure({'timout': 5})", lambda r: r.get("openai", api_key="k")
              .configure({"timout": 5}), UnknownSettingError, "did you mean 'timeout'?"),
)


@dataclass(frozen=True)
class CliCase:
    """``llm-core`` arguments that must exit with ``code`` and print what to fix."""

    key: str
    argv: tuple[str, ...]
    code: int
    fix: str
    files: dict[str, str] = field(default_factory=dict)


CLI_CASES: tuple[CliCase, ...] = (
    CliCase("cli-empty-prompt", ("chat", ""), 2, "prompt is empty"),
    CliCase("cli-temperature", ("chat", "hi", "--temperature", "-1"), 2,
            "temperature: input should be greater than or equal to 0"),
    CliCase("cli-temperature-text", ("chat", "hi", "--temperature", "hot"), 2, "invalid float value"),
    CliCase("cli-max-tokens", ("chat", "hi", "--max-tokens", "0"), 2,
            "max_tokens: input should be greater than or equal to 1"),
    CliCase("cli-unknown-feature", ("route", "vison"), 2, "valid features are"),
    CliCase("cli-unknown-provider", ("chat", "hi", "--provider", "nope"), 4, "registered providers"),
    CliCase("cli-schema-missing", ("json", "a person", "--schema", "missing.json"), 2, "missing.json"),
    CliCase("cli-schema-list", ("json", "a person", "--schema", "schema.json"), 2, "json-schema dict",
            files={"schema.json": "[1, 2]"}),
    CliCase("cli-question-key", ("decide", "--subject", "triage", "--questions", "q.json"), 2, "must match",
            files={"q.json": '[{"key": "Bad Key", "kind": "yes_no", "instructions": "ok?"}]'}),
    CliCase("cli-questions-shape", ("decide", "--subject", "triage", "--questions", "q.json"), 2,
            "expected a list of questions", files={"q.json": '{"questions": 3}'}),
    CliCase("cli-embed-nothing", ("embed",), 2, "give texts as arguments or --file"),
    CliCase("cli-embed-dimensions", ("embed", "hi", "--dimensions", "-3"), 2,
            "dimensions: input should be greater than or equal to 1"),
    CliCase("cli-image-prompt", ("image", " "), 2, "image prompt is empty"),
)


def total_inputs() -> int:
    return len(API_CASES) + len(SETUP_CASES) + len(CLI_CASES)
