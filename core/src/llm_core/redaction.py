"""Keeping keys out of what the library hands out: errors and their chains, text, HTTP messages.

Every live :class:`~llm_core.config.Secret` is tracked here (weakly, by identity), so that
redaction knows every key the process holds, whether it came from ``api_key=``, a config file or the
environment; key-like environment variables (``*_API_KEY``, ``*_ACCESS_TOKEN``) count too.
Values shorter than :data:`MIN_LENGTH` are not redacted: replacing them would mangle ordinary
text. The module imports nothing of llm-core (``config`` and ``errors`` import it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, Protocol
from urllib.parse import unquote

REDACTED = "***"
MIN_LENGTH = 6
#: Header names whose value is a credential (compared lower-case).
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-goog-api-key", "x-api-key", "api-key", "cookie", "set-cookie"}
)
#: Query parameter names whose value is a credential (compared lower-case).
CREDENTIAL_QUERY = frozenset({"key", "api_key", "api-key", "access_token"})
#: Setting and option names whose string value is a credential (besides ``*api_key``).
CREDENTIAL_NAMES = CREDENTIAL_HEADERS | CREDENTIAL_QUERY
#: Setting names whose value is a mapping of HTTP headers: every header in one is a credential
#: unless its name is in :data:`HARMLESS_HEADERS` (``X-Custom-Token`` cannot be told apart from
#: ``X-Request-Source`` by its name, so the unknown ones are kept as secrets).
HEADER_SETTINGS = frozenset({"headers", "default_headers", "extra_headers"})
#: Headers known to carry no credential (compared lower-case).
HARMLESS_HEADERS = frozenset(
    {"user-agent", "accept", "accept-encoding", "accept-language", "content-type", "cache-control", "connection"}
)
#: Words that make a URL's query parameter a credential (``key``, ``sig``, ``access_token``, ...).
_CREDENTIAL_QUERY_WORDS = ("key", "token", "secret", "sig", "password", "passwd", "auth", "credential", "session")
#: Exceptions walked along one chain, and container levels walked inside one attribute.
MAX_LINKS = 64
MAX_DEPTH = 8
_HTTP_PACKAGES = frozenset({"httpx", "httpx2"})
#: ``key=<value>`` (and the other credential parameters) inside a logged URL.
_QUERY_CREDENTIAL = re.compile(r"([?&](?:" + "|".join(sorted(CREDENTIAL_QUERY)) + r")=)[^&#\s\"'<>]+", re.IGNORECASE)
#: Content headers that a copy of an HTTP message with its (decoded) body must not keep.
_CONTENT_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class _Revealable(Protocol):
    def reveal(self) -> str: ...


#: ``id()`` of each live secret → a weak reference to it (whose callback forgets the entry) and
#: its value. Keyed by identity, not by value: secrets compare and hash by value, so a set of them
#: would keep one of two secrets holding the same key, and forget the key when that one dies
#: while the other is still in use. Here each holder counts until it is gone (its entry is
#: removed before its ``id`` can be reused: weak reference callbacks run before the memory is
#: freed). Only atomic dict operations touch it: a callback may run at any allocation.
_LIVE: dict[int, tuple[weakref.ref[Any], tuple[str, ...]]] = {}


def track(secret: _Revealable) -> None:
    """Remember ``secret``'s value until ``secret`` itself is gone; called by ``Secret.__init__``.
    A URL's credentials count on their own too: an error quotes the URL of the request, which
    is the secret base URL with a path added, so the whole value would not be found in it."""
    key = id(secret)
    value = secret.reveal()
    _LIVE[key] = (weakref.ref(secret, lambda _: _LIVE.pop(key, None)), (value, *url_credentials(value)))


def known_values(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Every value to redact, longest first: live secrets, key-like environment variables, ``extra``."""
    found = {value for _, values in _LIVE.copy().values() for value in values}
    found.update(v for k, v in os.environ.items() if k.upper().endswith(("_API_KEY", "_ACCESS_TOKEN")))
    found.update(extra)
    return tuple(sorted((v for v in found if len(v.strip()) >= MIN_LENGTH), key=len, reverse=True))


def is_credential_name(name: object) -> bool:
    """Whether a setting, header or query parameter called ``name`` holds a credential."""
    if not isinstance(name, str):
        return False
    lowered = name.lower()
    return lowered in CREDENTIAL_NAMES or lowered.replace("-", "_").endswith("api_key")


def is_credential_header(name: object) -> bool:
    """Whether a header in a headers setting (:data:`HEADER_SETTINGS`) is kept as a secret:
    every one but the :data:`HARMLESS_HEADERS`."""
    return not (isinstance(name, str) and name.lower() in HARMLESS_HEADERS)


def url_credentials(value: str) -> tuple[str, ...]:
    """The credentials inside a URL (``scheme://user:password@host/...?key=...``): the user and
    password before the host, and the value of each query parameter whose name says credential
    (``key``, ``token``, ``sig``, ``secret``, ``auth``, ...). Empty for a URL without them, and for
    text that is no URL. Both the text as written and its percent-decoded form are given."""
    scheme, sep, rest = value.partition("://")
    if not sep or not scheme.isalnum() or any(c.isspace() for c in value.strip()):
        return ()
    rest, _, _ = rest.partition("#")
    location, _, query = rest.partition("?")
    netloc = location.partition("/")[0]
    userinfo, at, _ = netloc.rpartition("@")
    found: list[str] = []
    if at:
        user, _, password = userinfo.partition(":")
        found += [part for part in (userinfo, user, password) if part]
    for pair in query.split("&"):
        name, equals, item = pair.partition("=")
        lowered = unquote(name).lower()
        if equals and item and (is_credential_name(lowered) or any(w in lowered for w in _CREDENTIAL_QUERY_WORDS)):
            found.append(item)
    return tuple(dict.fromkeys([*found, *(unquote(part) for part in found)]))


def without_url_credentials(url: str | None) -> str | None:
    """``url`` with its credentials (see :func:`url_credentials`) replaced by ``***``: the URL an
    observer event or a log may show."""
    if not url:
        return url
    parts = [part for part in url_credentials(url) if part in url]
    return redact_text(url, sorted(parts, key=len, reverse=True))


def redact_text(text: str, values: Iterable[str], pattern: re.Pattern[str] | None = None) -> str:
    """``text`` with each of ``values`` (and each match of ``pattern``) replaced by ``***``."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return pattern.sub(REDACTED, text) if pattern is not None else text


def redact_url(url: str, values: Iterable[str]) -> str:
    """``url`` with credential query parameters, a password and known values replaced."""
    base, mark, rest = url.partition("?")
    query, hash_mark, fragment = rest.partition("#")
    if mark:
        pairs = []
        for pair in query.split("&"):
            name, equals, _ = pair.partition("=")
            pairs.append(f"{name}={REDACTED}" if equals and name.lower() in CREDENTIAL_QUERY else pair)
        base = f"{base}?{'&'.join(pairs)}{hash_mark}{fragment}"
    scheme, sep, remainder = base.partition("://")
    authority, slash, path = remainder.partition("/")
    if sep and "@" in authority:  # user:password@host
        base = f"{scheme}://{REDACTED}@{authority.rpartition('@')[2]}{slash}{path}"
    return redact_text(base, values)


class _Scrubber:
    """One redaction pass: the values to remove, and the copies of HTTP messages made so far
    (the SDKs share one request between an error, its response and the chained httpx error)."""

    def __init__(self, values: tuple[str, ...], pattern: re.Pattern[str] | None) -> None:
        self.values = values
        self.pattern = pattern
        self.copies: dict[int, tuple[Any, Any]] = {}
        self.found: list[BaseException] = []  # exceptions met inside attributes (walked too)

    def text(self, text: str) -> str:
        cleaned = redact_text(text, self.values, self.pattern)
        return text if cleaned == text else cleaned

    def value(self, value: Any, depth: int = 0) -> Any:
        """``value`` itself when it holds nothing to redact, else a redacted copy."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes | bytearray):
            raw = bytes(value)
            for secret in self.values:
                raw = raw.replace(secret.encode(), REDACTED.encode())
            return value if raw == value else raw
        if isinstance(value, BaseException):
            self.found.append(value)
            return value
        if depth >= MAX_DEPTH:
            return value
        if isinstance(value, Mapping):
            items = {k: self.value(v, depth + 1) for k, v in value.items()}
            return value if all(items[k] is v for k, v in value.items()) else items
        if isinstance(value, list | tuple):
            cleaned = [self.value(item, depth + 1) for item in value]
            if all(a is b for a, b in zip(cleaned, value, strict=True)):
                return value
            return cleaned if isinstance(value, list) else tuple(cleaned)
        if _is_http(value, "Request"):
            return self.request(value)
        if _is_http(value, "Response"):
            return self.response(value)
        return value

    def headers(self, headers: Any) -> list[tuple[str, str]]:
        return [
            (name, REDACTED if name.lower() in CREDENTIAL_HEADERS else self.text(value))
            for name, value in headers.multi_items()
            if name.lower() not in _CONTENT_HEADERS
        ]

    def request(self, request: Any) -> Any:
        """A copy of an httpx request built through its public constructor, credentials removed."""
        if id(request) in self.copies:
            return self.copies[id(request)][1]
        try:
            content = self.value(bytes(request.content))
        except Exception:  # noqa: BLE001 - a streamed body that was never read: nothing to copy
            content = b""
        copy = type(request)(
            request.method,
            redact_url(str(request.url), self.values),
            headers=self.headers(request.headers),
            content=content,
        )
        self.copies[id(request)] = (request, copy)  # the original kept alive: its id stays its own
        return copy

    def response(self, response: Any) -> Any:
        """A copy of an httpx response (decoded body, headers, request), credentials removed."""
        if id(response) in self.copies:
            return self.copies[id(response)][1]
        try:
            content = self.value(bytes(response.content))
        except Exception:  # noqa: BLE001 - a stream that was never read: nothing to copy
            content = b""
        try:
            request = self.request(response.request)
        except RuntimeError:  # a response built without a request
            request = None
        extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
        copy = type(response)(
            response.status_code,
            headers=self.headers(response.headers),
            content=content,
            request=request,
            extensions=extensions,
        )
        self.copies[id(response)] = (response, copy)  # the original kept alive: its id stays its own
        return copy

    def exception(self, error: BaseException) -> None:
        """Redact ``error``'s ``args`` and attributes in place (through a public property of the
        same name when the attribute is private, as httpx's ``_request`` behind ``request``)."""
        with contextlib.suppress(AttributeError, TypeError):
            args = self.value(error.args)
            if args is not error.args:
                error.args = tuple(args)
        for name, value in list(vars(error).items()):
            cleaned = self.value(value)
            if cleaned is value:
                continue
            public = name.lstrip("_")
            target = public if public != name and isinstance(getattr(type(error), public, None), property) else name
            with contextlib.suppress(AttributeError, TypeError):
                setattr(error, target, cleaned)

    def shows_secret(self, error: BaseException) -> bool:
        try:
            texts = (str(error), repr(error))
        except Exception:  # noqa: BLE001 - an exception whose str() fails shows nothing
            return False
        return any(self.text(text) is not text for text in texts)


class ScrubbedError(Exception):
    """Stands in a chain for an exception whose text held a key and could not be changed in
    place (e.g. a pydantic ``ValidationError``): its type name and its redacted text."""

    def __init__(self, original: BaseException, text: str) -> None:
        super().__init__(f"{type(original).__module__}.{type(original).__qualname__}: {text}")


def redact_exception(error: BaseException, *extra: str, pattern: re.Pattern[str] | None = None) -> None:
    """Remove every known key (and ``extra`` values, and matches of ``pattern``) from ``error``
    and from every exception it reaches: ``__cause__``, ``__context__``, exception groups and
    exceptions held in attributes. Strings, bytes, containers and httpx requests/responses held
    in ``args`` or attributes are redacted or replaced by redacted copies; an exception that
    cannot be changed and still shows a key is replaced in the chain by a :class:`ScrubbedError`.
    Tracebacks and their frames are left as they are."""
    values = known_values(extra)
    if not values and pattern is None:
        return
    scrub = _Scrubber(values, pattern)
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending and len(seen) < MAX_LINKS:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        scrub.exception(current)
        for link in ("__cause__", "__context__"):
            chained = getattr(current, link)
            if chained is None:
                continue
            scrub.exception(chained)
            if scrub.shows_secret(chained):
                stand_in = ScrubbedError(chained, scrub.text(str(chained)))
                stand_in.__cause__ = chained.__cause__
                stand_in.__context__ = chained.__context__
                setattr(current, link, stand_in)
                chained = stand_in
            pending.append(chained)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(scrub.found)
        scrub.found.clear()


def redact_value(value: Any, *extra: str) -> Any:
    """``value`` (text, bytes, containers, httpx messages) with every known key redacted."""
    return _Scrubber(known_values(extra), None).value(value)


def _is_http(value: object, kind: str) -> bool:
    cls = type(value)
    return cls.__name__ == kind and cls.__module__.partition(".")[0] in _HTTP_PACKAGES


class RedactingFilter(logging.Filter):
    """A logging filter that removes every known key, and the value of credential query
    parameters in URLs, from each record's message (it runs only for records that are emitted)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left to logging
            return True
        cleaned = _QUERY_CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, redact_text(message, known_values()))
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_LOG_FILTER = RedactingFilter()
#: The HTTP stack's loggers, named ahead because httpcore creates its own when a connection opens.
HTTP_STACK_LOGGERS = tuple(
    f"{package}{child}"
    for package in ("httpx", "httpx2", "httpcore", "httpcore2")
    for child in ("", ".connection", ".http11", ".http2", ".proxy", ".socks")
    if package.startswith("httpcore") or not child
)


def protect_loggers(*prefixes: str) -> None:
    """Attach :class:`RedactingFilter` to the loggers ``prefixes`` and to every logger that exists
    under them (a filter of a parent logger does not see its children's records). Plugins call
    it once their SDK is imported, so that the SDK's loggers (``openai``, ``google_genai``) and
    the HTTP stack's (:data:`HTTP_STACK_LOGGERS`, always included) never write a key, even at
    DEBUG."""
    prefixes = (*prefixes, *HTTP_STACK_LOGGERS)
    children = tuple(f"{prefix}." for prefix in prefixes)
    names = [*prefixes, *(n for n in list(logging.Logger.manager.loggerDict) if n.startswith(children))]
    for name in names:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)
