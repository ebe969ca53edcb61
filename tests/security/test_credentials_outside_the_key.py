"""Credentials a provider or router is given outside ``api_key``: a base URL with ``?key=`` or
``user:password@``, a proxy password in ``client_args``, a custom header such as
``X-Custom-Token``. None may show in a pickle, ``vars()``, ``repr()`` or the text of a failed
call's error; a copy unpickled without them still works for what does not need them."""

from __future__ import annotations

import pickle
import traceback
from typing import Any

import pytest

from core_openai_plugin.provider import OpenAIProvider
from llm_core.config import Secret, hide_secrets
from llm_core.errors import LLMError
from llm_core.registry import Registry
from llm_core.retry import RetryPolicy
from llm_core.routing import Router

QUERY_KEY = "qk-7b1f0c4e9d2a"
URL_PASSWORD = "urlpw-55c2e9aa01"
PROXY_PASSWORD = "proxypw-a93e0d17"
HEADER_TOKEN = "hdrtok-3f6c2b8e70"
VALUES = (QUERY_KEY, URL_PASSWORD, PROXY_PASSWORD, HEADER_TOKEN)

SETTINGS: dict[str, Any] = {
    "base_url": f"http://gateway-user:{URL_PASSWORD}@127.0.0.1:9/v1?key={QUERY_KEY}",
    "client_args": {"proxy": f"http://proxy-user:{PROXY_PASSWORD}@127.0.0.1:9"},
    "default_headers": {"X-Custom-Token": HEADER_TOKEN, "User-Agent": "billing-batch/1.0"},
}


def _provider() -> OpenAIProvider:
    return OpenAIProvider(api_key="sk-test-outside-the-key", model="gpt-5-mini", retry=RetryPolicy.none(), timeout=2,
                          **SETTINGS)


def _shown(obj: object) -> str:
    """Everything a user may see or ship of ``obj``: repr, str, vars() and the pickle."""
    parts = [repr(obj), str(obj), repr(vars(obj))]
    parts.append(pickle.dumps(obj).decode("latin-1"))
    return "\n".join(parts)


def _assert_none_in(text: str) -> None:
    leaked = [value for value in VALUES if value in text]
    assert not leaked, f"credentials shown: {leaked}"


def test_a_provider_shows_and_pickles_none_of_them() -> None:
    provider = _provider()
    _assert_none_in(_shown(provider))
    # ... while the SDK client is given them in clear
    assert provider.base_url == SETTINGS["base_url"]
    client = provider.client  # type: ignore[attr-defined]
    assert str(client.base_url).startswith(f"http://gateway-user:{URL_PASSWORD}@127.0.0.1:9/v1")
    assert client.default_headers["X-Custom-Token"] == HEADER_TOKEN
    _assert_none_in(_shown(provider))


def test_a_router_shows_and_pickles_none_of_them() -> None:
    registry = Registry(strict=False)
    registry.register(OpenAIProvider.spec)
    router = Router(registry, ["chat"], config={"openai": {"api_key": "sk-test-outside-the-key", **SETTINGS}})
    _assert_none_in(_shown(router))
    provider = registry.get("openai", **router.config["openai"])  # as the router builds it
    assert provider.base_url == SETTINGS["base_url"]
    _assert_none_in(_shown(provider))


def test_a_failed_call_names_none_of_them() -> None:
    with pytest.raises(LLMError) as caught:
        _provider().generate_text("hi")
    error = caught.value
    texts = [str(error), repr(error), "".join(traceback.format_exception(error))]
    link: BaseException | None = error
    while link is not None:
        texts += [str(link), repr(link)]
        link = link.__cause__ or link.__context__
    _assert_none_in("\n".join(texts))


def test_a_copy_unpickled_without_them_works_for_what_does_not_need_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    copy = pickle.loads(pickle.dumps(_provider()))
    assert copy.base_url is None
    assert copy.options.get("client_args") == {}
    assert copy.options.get("default_headers") == {"User-Agent": "billing-batch/1.0"}
    request = copy.builder.chat("hi")
    assert request.model == "gpt-5-mini"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-from-the-workers-environment")
    copy.configure({"base_url": "https://gateway.example/v1"})  # given again where it is needed
    assert copy.base_url == "https://gateway.example/v1"


@pytest.mark.parametrize(
    ("settings", "hidden"),
    [
        ({"base_url": "https://host/v1?key=abcdef123"}, ["base_url"]),
        ({"base_url": "https://host/v1?sig=abcdef123&sv=2024"}, ["base_url"]),
        ({"base_url": "https://host/v1?access_token=abcdef123"}, ["base_url"]),
        ({"base_url": "https://tok-abcdef@host/v1"}, ["base_url"]),
        ({"base_url": "https://host/v1?api-version=2024-10-21"}, []),
        ({"base_url": "https://host/v1"}, []),
        ({"client_args": {"proxy": "socks5://u:p4ssw0rd@proxy:1080"}}, ["client_args.proxy"]),
        ({"client_args": {"headers": {"X-Trace": "t-123456"}}}, ["client_args.headers.X-Trace"]),
        ({"default_headers": {"X-Custom-Token": "abcdef123", "Accept": "application/json"}},
         ["default_headers.X-Custom-Token"]),
        ({"extra_headers": {"OpenAI-Organization": "org-123456", "content-type": "application/json"}},
         ["extra_headers.OpenAI-Organization"]),
        ({"organization": "org-123456", "note": "see https://example.com/docs"}, []),
    ],
)
def test_the_rule(settings: dict[str, Any], hidden: list[str]) -> None:
    kept = hide_secrets(settings)

    def walk(value: Any, where: str) -> list[str]:
        if isinstance(value, dict):
            return [found for name, item in value.items() for found in walk(item, f"{where}.{name}".lstrip("."))]
        return [where] if isinstance(value, Secret) else []

    assert walk(kept, "") == hidden


def test_url_credentials_and_their_removal() -> None:
    from llm_core.redaction import url_credentials, without_url_credentials

    url = "http://me:p%40ss@host:8080/v1?key=k%2Bey&api-version=1"
    assert set(url_credentials(url)) >= {"me", "p%40ss", "p@ss", "k%2Bey", "k+ey"}
    assert "1" not in url_credentials(url)
    assert without_url_credentials(url) == "http://***@host:8080/v1?key=***&api-version=1"
    assert url_credentials("not a url ?key=value") == ()
