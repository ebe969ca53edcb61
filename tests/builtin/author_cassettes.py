"""Author the cassettes of docs/builtin-tools.md offline: each call of the page runs through the
real provider and SDK, a mock transport answers it, and the exchange is recorded as the
repository's cassettes record it. The requests are therefore exactly what the page's calls send;
the answers are written here, in the shapes of the SDKs' types (``ResponseFunctionWebSearch``,
``ResponseOutputText`` annotations, ``ResponseCustomToolCall``; Gemini ``ExecutableCode``,
``CodeExecutionResult``, ``GroundingMetadata``, ``UrlContextMetadata``) and of real traffic.

Run from the repository root:

    python -m tests.builtin.author_cassettes
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from llm_core.builtin_tools import UrlContext, WebSearch
from llm_core.routing import Router
from llm_core.testing.cassettes import SECRET_HEADERS, use_cassette
from llm_core.tools import Grammar, ToolSpec
from tests.openai import openai_wire as wire
from tests.reliability import upstreams as up

ROOT = Path(__file__).resolve().parents[2]
KEY = "test-key-not-a-secret"

# -- the page's calls ------------------------------------------------------------------------------

SEARCH_QUESTION = "Which city hosts the 2028 Summer Olympics? One sentence."
CODE_QUESTION = "What is the sum of the first 50 prime numbers? Run code to check."
CALC = ToolSpec.custom(
    "calc", "Evaluate one arithmetic operation.", grammar=Grammar(syntax="regex", definition=r"^\d+ [+*/-] \d+$")
)
CALC_QUESTION = "What is 6544 times 65464? Use calc."
PAGE_URL = "https://www.python.org/downloads/"
URL_QUESTION = f"What is the newest Python release listed on {PAGE_URL}? Answer with the version only."

# -- OpenAI answers -------------------------------------------------------------------------------

SEARCH_TEXT = "The 2028 Summer Olympics will be held in Los Angeles, California."
SOURCE = "https://en.wikipedia.org/wiki/2028_Summer_Olympics"
SPAN = SEARCH_TEXT.index("Los Angeles")


def openai_search(request: dict[str, Any]) -> dict[str, Any]:
    message = up.openai_message(SEARCH_TEXT, "msg_builtin_search")
    message["content"][0]["annotations"] = [
        {
            "type": "url_citation",
            "start_index": SPAN,
            "end_index": len(SEARCH_TEXT) - 1,
            "title": "2028 Summer Olympics - Wikipedia",
            "url": SOURCE,
        }
    ]
    output = [
        {
            "id": "rs_builtin_search_1",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": wire.encrypted("builtin", "search", 1),
        },
        {
            "id": "ws_builtin_search_1",
            "type": "web_search_call",
            "status": "completed",
            "action": {
                "type": "search",
                "query": "2028 Summer Olympics host city",
                "sources": [{"type": "url", "url": SOURCE}],
            },
        },
        {
            "id": "rs_builtin_search_2",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": wire.encrypted("builtin", "search", 2),
        },
        message,
    ]
    body = up.openai_response(output, model="gpt-5.4-mini-2026-03-17")
    body.update(id="resp_builtin_search", tools=request["tools"], usage=wire.usage(8421, 96, reasoning=64))
    return body


def openai_custom_call(request: dict[str, Any]) -> dict[str, Any]:
    output = [
        {
            "id": "rs_builtin_calc",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": wire.encrypted("builtin", "calc"),
        },
        {
            "id": "ctc_builtin_calc",
            "type": "custom_tool_call",
            "call_id": "call_builtin_calc",
            "name": "calc",
            "input": "6544 * 65464",
        },
    ]
    body = up.openai_response(output, model="gpt-5.4-mini-2026-03-17")
    body.update(id="resp_builtin_calc", tools=request["tools"], usage=wire.usage(96, 40, reasoning=24))
    return body


# -- Gemini answers ---------------------------------------------------------------------------------

CODE = "import sympy\nprint(sum(sympy.prime(n) for n in range(1, 51)))\n"


def gemini_code(request: dict[str, Any]) -> dict[str, Any]:
    parts = [
        {"executableCode": {"language": "PYTHON", "code": CODE}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5117\n"}},
        {"text": "The sum of the first 50 prime numbers is 5117."},
    ]
    body = up.gemini_content(parts)
    body.update(modelVersion="gemini-2.5-flash", responseId="builtin-code-response")
    body["usageMetadata"] = {**up.gemini_usage(31, 64, thoughts=120), "toolUsePromptTokenCount": 180}
    return body


def gemini_url(request: dict[str, Any]) -> dict[str, Any]:
    text = "Python 3.14.2"
    body = up.gemini_content([{"text": text}])
    candidate = body["candidates"][0]
    candidate["groundingMetadata"] = {
        "groundingChunks": [{"web": {"uri": PAGE_URL, "title": "Download Python | Python.org"}}],
        "groundingSupports": [{"segment": {"endIndex": len(text), "text": text}, "groundingChunkIndices": [0]}],
    }
    candidate["urlContextMetadata"] = {
        "urlMetadata": [{"retrievedUrl": PAGE_URL, "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]
    }
    body.update(modelVersion="gemini-2.5-flash", responseId="builtin-url-response")
    body["usageMetadata"] = {**up.gemini_usage(38, 6, thoughts=44), "toolUsePromptTokenCount": 2210}
    return body


# -- recording --------------------------------------------------------------------------------------

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def _scrub(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in (*SECRET_HEADERS, "content-length"):
            headers.pop(name)
    return response


def record(path: Path, answer: Answer, call: Callable[[dict[str, Any]], Any]) -> None:
    """Record ``call`` (given each provider's settings: the mock transport) into ``path``."""

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=answer(json.loads(request.read())))

    transport = httpx2.MockTransport(reply)
    settings = {"api_key": KEY, "client_args": {"transport": transport}, "async_client_args": {"transport": transport}}
    path.unlink(missing_ok=True)
    with use_cassette(path, mode="all", before_record_response=_scrub):
        call(settings)
    print(path.relative_to(ROOT))


def main() -> None:
    from core_gemini_plugin.provider import GeminiProvider
    from core_openai_plugin.provider import OpenAIProvider
    from llm_core.registry import get_registry

    def openai(settings: dict[str, Any]) -> Any:
        return OpenAIProvider(api_key=KEY, client_args=settings["client_args"])

    record(
        ROOT / "cassettes/openai/builtin_web_search.json",
        openai_search,
        lambda s: openai(s).chat_completion(SEARCH_QUESTION, builtin_tools=[WebSearch()]),
    )
    record(
        ROOT / "cassettes/openai/builtin_custom_tool.json",
        openai_custom_call,
        lambda s: openai(s).chat_completion_with_tools(CALC_QUESTION, [CALC]),
    )
    record(
        ROOT / "cassettes/gemini/builtin_code_execution.json",
        gemini_code,
        lambda s: GeminiProvider(**s).chat_completion(CODE_QUESTION, builtin_tools=["code_execution"]),
    )

    def routed(settings: dict[str, Any]) -> Any:
        config = {"gemini": settings, "openai": {"api_key": KEY, "client_args": settings["client_args"]}}
        router = Router(get_registry(), ["chat"], prefer=["openai", "gemini"], config=config)
        return router.chat_completion(URL_QUESTION, builtin_tools=[UrlContext()])

    record(ROOT / "cassettes/gemini/builtin_url_context.json", gemini_url, routed)


if __name__ == "__main__":
    main()
