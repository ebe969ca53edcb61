"""The httpx2 half of :mod:`llm_core.transport.clients`: the guarded transports and their clients.

Imported only when a provider builds its first client (``import llm_core`` never imports httpx2).
A guarded transport wraps the real one (``httpx2.HTTPTransport``, or the transport a user passed)
and checks every response: no redirect, the attempt's time limits, the decoded size. It decodes
``gzip``/``deflate`` itself, a bounded piece at a time, so that the limit applies to the decoded
bytes, and hands httpx2 the body without ``Content-Encoding``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
import time
import urllib.request
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx2

from llm_core.errors import InvalidResponseError, ProviderTimeoutError
from llm_core.transport.body_meter import BodyMeter, BodyTimeout
from llm_core.transport.limits import OPENED_BODIES, SENDING, Limits, TransportLimitError
from llm_core.transport.loop_pools import LoopPools

REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: ``httpx2.Client`` arguments that configure the connection pool (given to our inner transport).
TRANSPORT_ARGS = frozenset(
    {"verify", "cert", "http1", "http2", "limits", "uds", "local_address", "retries", "socket_options"}
)
#: The encodings the guard decodes (and the only ones it asks for).
ACCEPT_ENCODING = "gzip, deflate"


# -- the transports ----------------------------------------------------------------------------


def _checked(limits: Limits, request: httpx2.Request, response: httpx2.Response, started: float) -> BodyMeter:
    """Refuse a redirect or an encoding the guard cannot decode; the body's meter otherwise."""
    if response.status_code in REDIRECTS:
        target = urlsplit(response.headers.get("location", "")).hostname or request.url.host
        raise TransportLimitError(
            InvalidResponseError(
                f"the server answered {response.status_code} with a redirect to {target}: llm-core does not follow "
                "redirects (the request carries the API key, which would go to that host); set base_url to the "
                "final address",
                provider=limits.provider,
                status_code=response.status_code,
            )
        )
    encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    unknown = [e for e in encodings if e not in ("gzip", "x-gzip", "deflate")]
    if unknown:
        raise TransportLimitError(
            InvalidResponseError(
                f"the body is encoded as {unknown[0]!r}, which llm-core does not decode", provider=limits.provider
            )
        )
    sse = response.headers.get("content-type", "").lower().startswith("text/event-stream")
    meter = BodyMeter(limits, started, encodings, sse=sse)
    if not sse:
        with _as_httpx_timeout(request, limits.provider):
            meter.check_time()
    return meter


@contextlib.contextmanager
def _as_httpx_timeout(request: httpx2.Request, provider: str) -> Iterator[None]:
    """A crossed time limit as an httpx2 timeout: the SDKs report it as their own timeout error,
    which the plugins map to ``ProviderTimeoutError`` (with the SDK exception chained)."""
    try:
        yield
    except BodyTimeout as exc:
        raise LimitTimeout(str(exc), request, provider) from None


class LimitTimeout(httpx2.ReadTimeout):
    """A time limit of :mod:`llm_core.transport.clients`: an httpx2 timeout to the SDK, and a
    ``ProviderTimeoutError`` naming the limit to the user (``llm_error``)."""

    def __init__(self, message: str, request: httpx2.Request, provider: str) -> None:
        super().__init__(message, request=request)
        self.llm_error = ProviderTimeoutError(message, provider=provider)


def _guarded(
    response: httpx2.Response, meter: BodyMeter, body: httpx2.SyncByteStream | httpx2.AsyncByteStream
) -> httpx2.Response:
    """The transport's response, its body now read through ``body`` (decoded and metered)."""
    if meter.decodes:  # the guard decodes: httpx2 must not decode again
        del response.headers["content-encoding"]
        if "content-length" in response.headers:
            del response.headers["content-length"]
    response.stream = body
    return response


def _prepare(request: httpx2.Request) -> float:
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    return time.monotonic()


def _route(proxies: dict[str, str], url: httpx2.URL) -> str | None:
    """The proxy for ``url`` from the environment (``HTTPS_PROXY``, ``NO_PROXY`` ...), or None."""
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if proxy is None or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


class _SyncBody(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, meter: BodyMeter, request: httpx2.Request) -> None:
        self._inner = inner
        self._meter = meter
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        meter = self._meter
        with _as_httpx_timeout(self._request, self._meter.limits.provider):
            for raw in self._inner:
                yield from meter.feed(raw)
            yield from meter.end()

    def close(self) -> None:
        self._inner.close()


class GuardedTransport(httpx2.BaseTransport):
    """Wraps a sync transport (or one per proxy route, built on demand) with the limits."""

    def __init__(
        self,
        limits: Limits,
        *,
        inner: httpx2.BaseTransport | None = None,
        make: Callable[[str | None], httpx2.BaseTransport] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> None:
        self.limits = limits
        self._fixed = inner
        self._make = make
        self._proxies = proxies or {}
        self._routes: dict[str | None, httpx2.BaseTransport] = {}
        self._lock = threading.Lock()

    def _inner(self, url: httpx2.URL) -> httpx2.BaseTransport:
        if self._fixed is not None:
            return self._fixed
        assert self._make is not None
        route = _route(self._proxies, url) if self._proxies else None
        with self._lock:
            transport = self._routes.get(route)
            if transport is None:
                transport = self._routes[route] = self._make(route)
        return transport

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        started = _prepare(request)
        sending = SENDING.set((request.url.host, request.url.port))
        try:
            response = self._inner(request.url).handle_request(request)
        finally:
            SENDING.reset(sending)
        try:
            meter = _checked(self.limits, request, response, started)
        except (TransportLimitError, httpx2.TimeoutException):
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return _guarded(response, meter, _SyncBody(response.stream, meter, request))

    def close(self) -> None:
        with self._lock:
            routes, self._routes = list(self._routes.values()), {}
        for transport in [*routes, *([self._fixed] if self._fixed is not None else [])]:
            transport.close()


class _AsyncBody(httpx2.AsyncByteStream):
    """The decoded, metered body. Closing it (the response's ``aclose``) also closes the reading
    generators below it at once, in the closing task: an SDK that leaves its own generators for
    the loop to finalize then finds nothing left that could run concurrently at shutdown
    ("asynchronous generator is already running")."""

    def __init__(self, inner: httpx2.AsyncByteStream, meter: BodyMeter, request: httpx2.Request) -> None:
        self._inner = inner
        self._meter = meter
        self._request = request
        self._reading: AsyncGenerator[bytes, None] | None = None

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        self._reading = self._read()
        return self._reading

    async def _read(self) -> AsyncGenerator[bytes, None]:
        meter = self._meter
        chunks = self._inner.__aiter__()
        try:
            with _as_httpx_timeout(self._request, meter.limits.provider):
                while True:
                    waiting = asyncio.timeout(meter.remaining())  # exact: the read itself is cut
                    try:
                        async with waiting:
                            raw = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        if waiting.expired():
                            raise BodyTimeout(meter.timeout_reason()) from None
                        raise
                    for data in meter.feed(raw):
                        yield data
                for data in meter.end():
                    yield data
        finally:
            if isinstance(chunks, AsyncGenerator):
                await chunks.aclose()

    async def aclose(self) -> None:
        await self._inner.aclose()
        reading = self._reading
        if reading is not None and not getattr(reading, "ag_running", False):
            await reading.aclose()


class AsyncGuardedTransport(httpx2.AsyncBaseTransport):
    """The async twin of :class:`GuardedTransport`, with one pool per event loop."""

    def __init__(
        self,
        limits: Limits,
        *,
        inner: httpx2.AsyncBaseTransport | None = None,
        make: Callable[[str | None], httpx2.AsyncBaseTransport] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> None:
        self.limits = limits
        self._fixed = inner
        self._pools = LoopPools(make) if make is not None else None
        self._proxies = proxies or {}

    async def _inner(self, url: httpx2.URL) -> httpx2.AsyncBaseTransport:
        if self._fixed is not None:
            return self._fixed
        assert self._pools is not None
        return await self._pools.get(_route(self._proxies, url) if self._proxies else None)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        started = _prepare(request)
        inner = await self._inner(request.url)
        opening = asyncio.timeout(self.limits.timeout)
        sending = SENDING.set((request.url.host, request.url.port))
        try:
            async with opening:
                response = await inner.handle_async_request(request)
        except TimeoutError:
            if opening.expired():
                message = f"the answer was not complete within the timeout of {self.limits.timeout:g} s"
                raise LimitTimeout(message, request, self.limits.provider) from None
            raise
        finally:
            SENDING.reset(sending)
        try:
            meter = _checked(self.limits, request, response, started)
        except (TransportLimitError, httpx2.TimeoutException):
            await response.aclose()
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        body = _AsyncBody(response.stream, meter, request)
        opened = OPENED_BODIES.get()
        if opened is not None:  # read by a ClosingStream: it closes the body first
            opened.append(body)
        return _guarded(response, meter, body)

    async def aclose(self) -> None:
        if self._pools is not None:
            await self._pools.aclose()
        if self._fixed is not None:
            await self._fixed.aclose()


# -- clients -----------------------------------------------------------------------------------


class _ClientArgs:
    """``client_args`` split: the client's own, the pool's (for the inner transports), a
    transport or mounts the user gave (wrapped, not replaced), the proxy and the environment's."""

    def __init__(self, args: dict[str, Any]) -> None:
        client = {k: v for k, v in args.items() if k not in TRANSPORT_ARGS and k not in ("proxy", "follow_redirects")}
        self.given = client.pop("transport", None)
        self.mounts: dict[str, Any] = client.pop("mounts", None) or {}
        self.client = client
        self.pool = {k: v for k, v in args.items() if k in TRANSPORT_ARGS}
        self.proxy: str | None = args.get("proxy")
        trust_env = bool(args.get("trust_env", True))
        if not trust_env:
            self.pool["trust_env"] = False
        found = {} if self.proxy or not trust_env else urllib.request.getproxies()
        self.proxies = {k: v for k, v in found.items() if k in ("http", "https", "all")}
        self._ssl: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def pool_args(self) -> dict[str, Any]:
        """The pool's arguments, with one SSL context built once and shared by every pool (a
        pool per event loop must not load the certificate store each time)."""
        with self._lock:
            if self._ssl is None:
                verify = self.pool.get("verify", True)
                self._ssl = (
                    verify
                    if isinstance(verify, ssl.SSLContext)
                    else httpx2.create_ssl_context(
                        verify=verify, cert=self.pool.get("cert"), trust_env=self.pool.get("trust_env", True)
                    )
                )
        return {**{k: v for k, v in self.pool.items() if k not in ("verify", "cert")}, "verify": self._ssl}


def sync_client(limits: Limits, args: dict[str, Any]) -> httpx2.Client:
    parts = _ClientArgs(args)

    def make(route: str | None) -> httpx2.BaseTransport:
        return httpx2.HTTPTransport(proxy=route or parts.proxy, **parts.pool_args())

    if parts.given is not None:
        transport = GuardedTransport(limits, inner=parts.given)
    else:
        transport = GuardedTransport(limits, make=make, proxies=parts.proxies)
    mounts = {k: None if t is None else GuardedTransport(limits, inner=t) for k, t in parts.mounts.items()}
    return httpx2.Client(transport=transport, mounts=mounts or None, follow_redirects=False, **parts.client)


def async_client(limits: Limits, args: dict[str, Any]) -> httpx2.AsyncClient:
    parts = _ClientArgs(args)

    def make(route: str | None) -> httpx2.AsyncBaseTransport:
        return httpx2.AsyncHTTPTransport(proxy=route or parts.proxy, **parts.pool_args())

    if parts.given is not None:
        transport = AsyncGuardedTransport(limits, inner=parts.given)
    else:
        transport = AsyncGuardedTransport(limits, make=make, proxies=parts.proxies)
    mounts = {k: None if t is None else AsyncGuardedTransport(limits, inner=t) for k, t in parts.mounts.items()}
    return httpx2.AsyncClient(transport=transport, mounts=mounts or None, follow_redirects=False, **parts.client)
