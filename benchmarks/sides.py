"""The sides of every comparison, two pairs of them.

**The user's view** (the headline): llm-core called as its docs show it,
``provider.chat_completion("question")``, against the bare SDK called as its own README shows it
(``client.responses.create(model=..., input="question")``,
``client.models.generate_content(model=..., contents="question")``, and their streaming and async
forms), each client built the README's way (only the key and the loopback base URL given).

**The same payload** (the second column): llm-core with a system and a user message, against the
bare SDK making the identical request with the client configured as the plugin configures it (SDK
retries off, same timeout, API version). The harness checks on the server that both sent the same
request.

Nothing here imports an SDK or llm-core at module level: cold-start runs import this module and
start their clock afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

#: ``openai-chat``: a named endpoint of the OpenAI plugin speaking the Chat Completions API (the
#: path of OpenAI-compatible servers), against ``client.chat.completions.create``.
PROVIDERS = ("gemini", "openai", "openai-chat")
#: Side names: the user's view (``core``, ``sdk``) and the same-payload pair (``core-payload``,
#: ``sdk-payload``).
USER_VIEW = ("core", "sdk")
SAME_PAYLOAD = ("core-payload", "sdk-payload")
API_KEY = "bench-key"
TIMEOUT_S = 60.0
SYSTEM = "You are a concise assistant."
PROMPT = "In two sentences: what does a provider registry for LLMs do?"
MODELS = {"gemini": "gemini-2.5-flash", "openai": "gpt-4.1-mini", "openai-chat": "gpt-4.1-mini"}
#: The same-payload call as an llm-core user writes it (plain role/content mappings).
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
    """The ``side`` of ``provider`` (see :data:`USER_VIEW`, :data:`SAME_PAYLOAD`) pointed at the
    loopback ``base_url``."""
    if side in ("core", "core-payload"):
        return core_side(provider, side, core_provider(provider, base_url))
    builders = {
        ("gemini", "sdk"): _readme_gemini,
        ("gemini", "sdk-payload"): _payload_gemini,
        ("openai", "sdk"): _readme_openai,
        ("openai", "sdk-payload"): _payload_openai,
        ("openai-chat", "sdk"): _readme_openai_chat,
        ("openai-chat", "sdk-payload"): _payload_openai_chat,
    }
    return builders[(provider, side)](base_url)


# -- llm-core -----------------------------------------------------------------------------------


def core_provider(provider: str, base_url: str) -> Any:
    """The llm-core provider pointed at the loopback ``base_url`` (the core's defaults otherwise)."""
    from llm_core.registry import get_registry

    registry = get_registry()
    settings = {"api_key": API_KEY, "model": MODELS[provider], "timeout": TIMEOUT_S}
    if provider == "openai-chat":  # as docs/openai.md declares an endpoint (a config table says the same)
        registry.add_endpoint(provider, plugin="openai", api="chat_completions", base_url=base_url + "/v1", **settings)
        return registry.get(provider)
    base = base_url + "/v1" if provider == "openai" else base_url
    return registry.get(provider, base_url=base, **settings)


def core_side(provider: str, side: str, p: Any) -> Side:
    """llm-core's calls on the provider ``p``: the question alone (``core``) or with a system
    message (``core-payload``)."""
    aio = p.aio
    question: Any = PROMPT if side == "core" else MESSAGES

    def call() -> str:
        return str(p.chat_completion(question).content)

    async def acall() -> str:
        return str((await aio.chat_completion(question)).content)

    def stream() -> Iterator[str | None]:
        return (event.text for event in p.stream_chat_completion(question))

    async def astream() -> AsyncIterator[str | None]:
        async for event in aio.stream_chat_completion(question):
            yield event.text

    return Side(provider, side, call, acall, stream, astream)


# -- google-genai ----------------------------------------------------------------------------------


def _gemini_calls(side: str, client: Any, contents: Any, config: Any) -> Side:
    model = MODELS["gemini"]
    options: dict[str, Any] = {} if config is None else {"config": config}

    def call() -> Any:
        return client.models.generate_content(model=model, contents=contents, **options).text

    async def acall() -> Any:
        return (await client.aio.models.generate_content(model=model, contents=contents, **options)).text

    def stream() -> Iterator[str | None]:
        return (
            chunk.text for chunk in client.models.generate_content_stream(model=model, contents=contents, **options)
        )

    async def astream() -> AsyncIterator[str | None]:
        async for chunk in await client.aio.models.generate_content_stream(model=model, contents=contents, **options):
            yield chunk.text

    return Side("gemini", side, call, acall, stream, astream)


def _readme_gemini(base_url: str) -> Side:
    """As the google-genai README: ``genai.Client()`` and ``contents="question"``."""
    from google import genai

    client = genai.Client(api_key=API_KEY, http_options={"base_url": base_url})
    return _gemini_calls("sdk", client, PROMPT, None)


def _payload_gemini(base_url: str) -> Side:
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
    contents: Any = [{"role": "user", "parts": [{"text": PROMPT}]}]
    return _gemini_calls("sdk-payload", client, contents, {"system_instruction": SYSTEM})


# -- openai ----------------------------------------------------------------------------------------


def _openai_calls(side: str, client: Any, aclient: Any, options: dict[str, Any]) -> Side:
    model = MODELS["openai"]

    def call() -> Any:
        return client.responses.create(model=model, **options).output_text

    async def acall() -> Any:
        return (await aclient.responses.create(model=model, **options)).output_text

    def stream() -> Iterator[str | None]:
        events = client.responses.create(model=model, **options, stream=True)
        return (e.delta if e.type == "response.output_text.delta" else None for e in events)

    async def astream() -> AsyncIterator[str | None]:
        events = await aclient.responses.create(model=model, **options, stream=True)
        async for e in events:
            yield e.delta if e.type == "response.output_text.delta" else None

    return Side("openai", side, call, acall, stream, astream)


def _readme_openai(base_url: str) -> Side:
    """As the openai README: ``OpenAI()`` and ``responses.create(model=..., input="question")``."""
    import openai

    kwargs: dict[str, Any] = {"api_key": API_KEY, "base_url": base_url + "/v1"}
    return _openai_calls("sdk", openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs), {"input": PROMPT})


def _payload_openai(base_url: str) -> Side:
    import openai

    kwargs: dict[str, Any] = {"api_key": API_KEY, "base_url": base_url + "/v1", "timeout": TIMEOUT_S, "max_retries": 0}
    options: dict[str, Any] = {
        "input": PROMPT,  # one user text: the string form, as the plugin (and the SDK README) sends it
        "instructions": SYSTEM,
        "store": False,
    }
    return _openai_calls("sdk-payload", openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs), options)


# -- openai, Chat Completions ------------------------------------------------------------------------


def _openai_chat_calls(side: str, client: Any, aclient: Any, options: dict[str, Any]) -> Side:
    model = MODELS["openai-chat"]
    streaming = {"stream": True, "stream_options": {"include_usage": True}} if side == "sdk-payload" else {}

    def call() -> Any:
        return client.chat.completions.create(model=model, **options).choices[0].message.content

    async def acall() -> Any:
        return (await aclient.chat.completions.create(model=model, **options)).choices[0].message.content

    def stream() -> Iterator[str | None]:
        chunks = client.chat.completions.create(model=model, **options, **(streaming or {"stream": True}))
        return (chunk.choices[0].delta.content if chunk.choices else None for chunk in chunks)

    async def astream() -> AsyncIterator[str | None]:
        chunks = await aclient.chat.completions.create(model=model, **options, **(streaming or {"stream": True}))
        async for chunk in chunks:
            yield chunk.choices[0].delta.content if chunk.choices else None

    return Side("openai-chat", side, call, acall, stream, astream)


def _readme_openai_chat(base_url: str) -> Side:
    """As the openai README's Chat Completions example: ``chat.completions.create(model=...,
    messages=[...])`` (here the question alone, as the user's view asks it)."""
    import openai

    kwargs: dict[str, Any] = {"api_key": API_KEY, "base_url": base_url + "/v1"}
    options = {"messages": [{"role": "user", "content": PROMPT}]}
    return _openai_chat_calls("sdk", openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs), options)


def _payload_openai_chat(base_url: str) -> Side:
    import openai

    kwargs: dict[str, Any] = {"api_key": API_KEY, "base_url": base_url + "/v1", "timeout": TIMEOUT_S, "max_retries": 0}
    options = {"messages": MESSAGES}  # the stream also asks for the usage chunk, as the plugin does
    return _openai_chat_calls("sdk-payload", openai.OpenAI(**kwargs), openai.AsyncOpenAI(**kwargs), options)
