"""Canary keys and an upstream that quotes the key back (shared by the security tests)."""

from __future__ import annotations

import secrets
from typing import Any

from tests.reliability.fault_server import Request, json_response
from tests.reliability.fault_targets import Target


def make_canary(style: str, provider: str) -> str:
    """A fresh key for this run: shaped like the provider's real keys, or plain."""
    token = secrets.token_hex(18)
    if style == "plain":
        return f"canary-{token}"
    return {"gemini": "AIza" + token[:35].ljust(35, "x"), "openai": f"sk-proj-{token}"}.get(provider, f"sk-{token}")


def echo_key_upstream(target: Target) -> Any:
    """An upstream that rejects the key and quotes it back in full (some compatible servers do)."""

    def behaviour_for(request: Request) -> Any:
        key = request.headers.get("authorization", "").removeprefix("Bearer ") or request.headers.get(
            "x-goog-api-key", ""
        )
        if target.name == "gemini":
            body = {"error": {"code": 401, "status": "UNAUTHENTICATED",
                              "message": f"API key not valid: {key}. Please pass a valid API key."}}
        else:
            body = {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error",
                              "param": None, "code": "invalid_api_key"}}
        return json_response(401, body)

    return behaviour_for
