"""What differs for a server other than api.openai.com, kept out of the provider: how errors
name it (and what they advise on a 401 or a 404 of the API path), and the request hook that
removes the headers it must not get. Pure; imports no SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from core_openai_plugin.errors import Wording


def server_wording(
    name: str,
    base_url: str,
    identifier: str,
    *,
    endpoint: bool,
    dialect: tuple[str, str, str],
    key_variables: tuple[str, ...],
) -> Wording:
    """Errors of provider ``identifier`` (display ``name``) at ``base_url``: ``"NAME at URL returned
    404 ..."``, the key to check, and on a 404 that is no unknown model the ``api`` setting to
    change (``dialect``: the API spoken, its chat path, the other dialect's ``api`` value)."""
    api, path, other = dialect
    where = f"[providers.{identifier}]" if endpoint else "a [providers.NAME] endpoint (docs/openai.md)"
    variables = " or ".join(key_variables)
    return Wording(
        f"{name} at {shown_url(base_url)}",
        f"check {variables or 'the key'} (or `llm-core keys set {identifier}`, or api_key)",
        f"the model is unknown there, or the server does not implement {api} ({path}); "
        f'if it speaks the other dialect, set api = "{other}" in {where}',
    )


def shown_url(url: str) -> str:
    """A base URL as errors show it: scheme, host, port and path (never credentials or a query)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path.rstrip('/')}"


def header_remover(names: tuple[str, ...], *, asynchronous: bool) -> Callable[[Any], Any]:
    """An httpx2 request hook removing ``names`` (async clients take coroutine hooks)."""

    def remove(request: Any) -> None:
        for name in names:
            request.headers.pop(name, None)

    async def aremove(request: Any) -> None:
        remove(request)

    return aremove if asynchronous else remove
