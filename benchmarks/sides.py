"""The two sides of every comparison: llm-core (through the registry and a plugin) and the bare
SDK making the identical request, with the same client configuration (SDK retries off, same
timeout, same base URL). The harness checks on the server that both sent the same request.

Nothing here imports an SDK or llm-core at module level: cold-start runs import this module and
start their clock afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

PROVIDERS = ("gemini", "openai")
SIDES = ("core", "bare")
API_KEY = "bench-key"
TIMEOUT_S = 60.0
SYSTEM = "You are a concise assistant."
PROMPT = "In two sentences: what does a provider registry for LLMs do?"
MODELS = {"gemini": "gemini-2.5-flash", "openai": "gpt-4.1-mini"}
#: The call as an llm-core user writes it (plain role/content mappings).
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]


@dataclass
class Side:
    """One way of making the benchmark's calls; every callable returns what a user reads."""

    provider: str
    side: str
    call: Callable[[], Any]
    acall: Callable[[], Awaitable[Any]]
    stream: Callable[[], Iterable[str | None]]
    astream: Callable[[], AsyncIterator[str | None]]


def build(provider: str, side: str, base_url: str) -> Side:
    """The ``side`` ("core" or "bare") of ``provider`` pointed at the loopback ``base_url``."""
    builders = {
        ("gemini", "core"): _core_gemini,
        ("gemini", "bare"): _bare_gemini,
        ("openai", "core"): _core_openai,
        ("openai", "bare"): _bare_openai,
    }
    return builders[(provider, side)](base_url)


# -- llm-core -----------------------------------------------------------------------------------


def core_provider(provider: str, base_url: str) -> Any:
    """The llm-core provider of the benchmark's llm-core side, pointed at the loopback ``base_url``."""
    from llm_core.registry import get_registry

    base = base_url + "/v1" if provider == "openai" else base_url
    return get_registry().get(provider, api_key=API_KEY, model=MODELS[provider], timeout=TIMEOUT_S, base_url=base)


def core_side(provider: str, p: Any) -> Side:
    """The llm-core side's calls, made on the provider ``p`` (see :func:`core_provider`)."""
    aio = p.aio

    def call() -> str:
        return str(p.chat_completion(MESSAGES).content)

    async def acall() -> str:
        return str((await aio.chat_completion(MESSAGES)).content)

    def stream() -> Iterator[str | None]:
        return (event.text for event in p.stream_chat_completion(MESSAGES))

    async def astream() -> AsyncIterator[str | None]:
        async for event in aio.stream_chat_completion(MESSAGES):
            yield event.text

    return Side(provider, "core", call, acall, stream, astream)


def _core_gemini(base_url: str) -> Side:
    return core_side("gemini", core_provider("gemini", base_url))


def _core_openai(base_url: str) -> Side:
    return core_side("openai", core_provider("openai", base_url))


# -- bare google-genai -----------------------------------------------------------------------------


def _bare_gemini(base_url: str) -> Side:
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key=API_KEY,
        # as the plugin configures it: API v1, the timeout in ms, the SDK's retries off
        http_options=types.HttpOptions(
            api_version="v1",
            base_url=base_url,
            timeout=int(TIMEOUT_S * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    model = MODELS["gemini"]
    contents: Any = [{"role": "user", "parts": [{"text": PROMPT}]}]
    config: Any = {"system_instruction": SYSTEM}

    def call() -> str | None:
        return client.models.generate_content(model=model, contents=contents, config=config).text

    async def acall() -> str | None:
        return (await client.aio.models.generate_content(model=model, contents=contents, config=config)).text

    def stream() -> Iterator[str | None]:
        return (
            chunk.text for chunk in client.models.generate_content_stream(model=model, contents=contents, config=config)
        )

    async def astream() -> AsyncIterator[str | None]:
        async for chunk in await client.aio.models.generate_content_stream(
            model=model, contents=contents, config=config
        ):
            yield chunk.text

    return Side("gemini", "bare", call, acall, stream, astream)


# -- bare openai -----------------------------------------------------------------------------------


def _bare_openai(base_url: str) -> Side:
    import openai

    kwargs: dict[str, Any] = {"api_key": API_KEY, "base_url": base_url + "/v1", "timeout": TIMEOUT_S, "max_retries": 0}
    client = openai.OpenAI(**kwargs)
    aclient = openai.AsyncOpenAI(**kwargs)
    model = MODELS["openai"]
    items: Any = PROMPT  # one user text: the string form, as the plugin (and the SDK README) sends it

    def call() -> str:
        return client.responses.create(model=model, input=items, instructions=SYSTEM, store=False).output_text

    async def acall() -> str:
        return (await aclient.responses.create(model=model, input=items, instructions=SYSTEM, store=False)).output_text

    def stream() -> Iterator[str | None]:
        events = client.responses.create(model=model, input=items, instructions=SYSTEM, store=False, stream=True)
        return (e.delta if e.type == "response.output_text.delta" else None for e in events)

    async def astream() -> AsyncIterator[str | None]:
        events = await aclient.responses.create(model=model, input=items, instructions=SYSTEM, store=False, stream=True)
        async for e in events:
            yield e.delta if e.type == "response.output_text.delta" else None

    return Side("openai", "bare", call, acall, stream, astream)
