"""Replay mode: serve provider calls from recorded cassettes through the real plugins and SDKs.

``llm-core --replay DIR ...`` (or ``LLM_CORE_REPLAY=DIR``) merges every cassette under ``DIR``
into one playback set; a request that no cassette holds fails instead of reaching the network
(requests to localhost / 127.0.0.1 are not replayed: they go to the local port as they are).
Placeholder keys are set for providers without one, so that no real key is needed.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from llm_core.errors import InvalidInputError
from llm_core.untrusted import load_json, read_regular_file

REPLAY_ENV = "LLM_CORE_REPLAY"
PLACEHOLDER_KEY = "replay-placeholder-key"
REPLAY_EXTRA = "llm-core[replay]"
#: vcrpy's matcher names, as a reader of the message knows them.
_MATCHER_NAMES = {"json_body_matcher": "body", "query": "query", "path": "path", "host": "host", "method": "method"}


def replay_installed() -> bool:
    """Whether vcrpy (the ``replay`` extra) can be imported."""
    try:
        import vcr  # noqa: F401  (replay mode imports it next anyway)
    except ImportError:
        return False
    return True


def replay_dir(cli_value: str | None) -> Path | None:
    value = cli_value or os.environ.get(REPLAY_ENV)
    return Path(value) if value else None


#: Largest cassette file read, and largest sum of them: a cassette is JSON text a few hundred KB
#: long, so anything near these is not one (and reading it whole would cost its size in memory).
MAX_CASSETTE_BYTES = 32 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024


def merged_cassette(directory: Path) -> dict[str, Any]:
    """All interactions of all ``*.json`` cassettes under ``directory``. A file that is not JSON
    or holds no ``interactions`` list is passed over; one that is not a regular file (a FIFO, a
    device), is larger than :data:`MAX_CASSETTE_BYTES`, nests deeper than
    :data:`~llm_core.untrusted.MAX_NESTING` or holds a malformed interaction raises
    :class:`~llm_core.errors.InvalidInputError`."""
    interactions: list[Any] = []
    budget = MAX_TOTAL_BYTES
    for path in sorted(directory.rglob("*.json")):
        raw = read_regular_file(path, limit=min(MAX_CASSETTE_BYTES, budget), what="--replay")
        budget -= len(raw)
        try:
            data = load_json(raw.decode("utf-8"), what=f"--replay: {path}")
        except InvalidInputError:
            raise
        except ValueError:  # not JSON (UnicodeDecodeError is a ValueError too): not a cassette
            continue
        if isinstance(data, dict) and isinstance(data.get("interactions"), list):
            for index, interaction in enumerate(data["interactions"]):
                _check_interaction(interaction, f"{path}: interactions[{index}]")
            interactions.extend(data["interactions"])
    return {"version": 1, "interactions": interactions}


def _check_interaction(interaction: Any, where: str) -> None:
    """The fields vcrpy reads from a recorded interaction, with the types it needs."""
    request = interaction.get("request") if isinstance(interaction, dict) else None
    response = interaction.get("response") if isinstance(interaction, dict) else None
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise InvalidInputError(f"--replay: {where} needs a request and a response object")
    for name in ("method", "uri"):
        if not isinstance(request.get(name), str):
            raise InvalidInputError(f"--replay: {where}: request.{name} must be a string")
    status = response.get("status")
    if not isinstance(status, dict) or type(status.get("code")) is not int:
        raise InvalidInputError(f"--replay: {where}: response.status.code must be an integer")
    for side, message in (("request", request), ("response", response)):
        headers = message.get("headers", {})
        if not isinstance(headers, dict) or not all(
            isinstance(v, list) and all(isinstance(i, str) for i in v) for v in headers.values()
        ):
            raise InvalidInputError(f"--replay: {where}: {side}.headers must map names to lists of strings")
        body = message.get("body")
        if body is None or isinstance(body, str):
            continue
        if not isinstance(body, dict):
            raise InvalidInputError(f"--replay: {where}: {side}.body must be an object or a string")
        for name in ("string", "base64"):
            if name in body and not isinstance(body[name], str):
                raise InvalidInputError(f"--replay: {where}: {side}.body.{name} must be a string")
        if "base64" in body:
            try:
                base64.b64decode(body["base64"], validate=True)
            except ValueError:
                raise InvalidInputError(f"--replay: {where}: {side}.body.base64 is not base64") from None


@contextmanager
def replaying(directory: Path) -> Iterator[int]:
    """Within the block, HTTP traffic of both SDKs is answered from ``directory``'s cassettes.

    Yields the number of recorded interactions available.
    """
    from llm_core.registry import get_registry
    from llm_core.testing.cassettes import use_cassette

    if not directory.is_dir():
        raise FileNotFoundError(f"replay directory {directory} does not exist")
    merged = merged_cassette(directory)
    previous: dict[str, str | None] = {}
    for spec in get_registry().providers():
        if spec.credential_env and not spec.credentials_present():
            name = spec.credential_env[0]
            previous[name] = os.environ.get(name)
            os.environ[name] = PLACEHOLDER_KEY
    with tempfile.TemporaryDirectory(prefix="llm-core-replay-") as tmp:
        target = Path(tmp) / "replay.json"
        target.write_text(json.dumps(merged), encoding="utf-8")
        try:
            # Loopback requests are not replayed: they never leave the machine, and the demo's
            # fallback step needs a real refused connection (a closed port on 127.0.0.1).
            with (
                use_cassette(target, mode="none", allow_playback_repeats=True, ignore_localhost=True),
                _short_misses(directory),
            ):
                yield len(merged["interactions"])
        finally:
            for name, value in previous.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _unmatched(error: BaseException) -> Any:
    """vcrpy's "no recorded interaction matches" exception in ``error``'s chain, if any."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, CannotOverwriteExistingCassetteException):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _shown_uri(uri: str) -> str:
    from llm_core.testing.cassettes import SECRET_QUERY

    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in SECRET_QUERY]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _miss_text(miss: Any, directory: Path, provider: str | None = None) -> str:
    request = miss.failed_request
    differ: list[str] = []
    for _request, _succeeded, failed in miss.similar_requests[:1]:
        differ = [_MATCHER_NAMES.get(name, name) for name, _message in failed]
    closest = f"; the closest recordings differ in: {', '.join(differ)}" if differ else ""
    key = "the provider's API key"
    if provider:
        from llm_core.registry import get_registry

        for spec in get_registry().providers():
            if spec.identifier == provider and spec.credential_env:
                key = spec.credential_env[0]
    who = f"{provider} " if provider else ""
    return (
        f"no recorded interaction in {directory} matches this {who}request "
        f"({request.method} {_shown_uri(request.uri)}){closest}. Replay mode answers only the requests "
        f"its cassettes hold (e.g. `llm-core --replay {directory} demo`); nothing was sent. To call the live "
        f"service, run without --replay / {REPLAY_ENV} and with {key} set."
    )


def unmatched_message(error: BaseException, directory: Path) -> str | None:
    """A short explanation when ``error`` comes from a request that no cassette under
    ``directory`` holds (``None`` for any other error)."""
    miss = _unmatched(error)
    if miss is None or miss.failed_request is None:
        return None
    return "[replay] " + _miss_text(miss, directory, getattr(error, "provider", None))


@contextmanager
def _short_misses(directory: Path) -> Iterator[None]:
    """vcrpy explains an unmatched request at length (record modes, matchers, how to re-record):
    in replay mode the httpx stubs raise a subclass whose text is one readable sentence, so that
    every command (streams and the demo too) shows it in place of vcrpy's advice."""
    from vcr.errors import CannotOverwriteExistingCassetteException
    from vcr.stubs import httpx_stubs

    class UnrecordedRequest(CannotOverwriteExistingCassetteException):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.args = (_miss_text(self, directory),)

    original = httpx_stubs.CannotOverwriteExistingCassetteException
    httpx_stubs.CannotOverwriteExistingCassetteException = UnrecordedRequest
    try:
        yield
    finally:
        httpx_stubs.CannotOverwriteExistingCassetteException = original
