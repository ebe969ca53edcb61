"""The llm-core pytest plugin (entry point ``pytest11``, loaded wherever llm-core is installed).

It changes nothing in a test run unless asked. Fixtures:

- ``test_provider``: a fresh :class:`~llm_core.testing.TestProvider`.
- ``llm_registry``: the process-wide registry with ``override(test_provider)`` active for the
  test, so code that calls ``get_registry().select(...)``, ``get(...)`` or a router gets the
  test provider.

The network guard, off unless switched on by ``--llm-block-network``, the ini option
``llm_core_block_network`` or the marker ``@pytest.mark.llm_block_network``:

- ``true`` (or ``providers``): a model request that llm-core's transport
  (:mod:`llm_core.transport`) would send to a host other than this machine fails the test,
  naming the host. Replayed cassettes and fake transports open no connection and pass; the
  test's own sockets and name look-ups are left alone.
- ``all``: every connection and host-name look-up beyond this machine fails the test (a suite
  that must stay offline, such as llm-core's own).

A refused attempt fails the test even when the code under test caught the error. A test marked
``@pytest.mark.llm_network``, or a run with ``--llm-allow-network``, has no guard.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from llm_core.testing.kit import TestProvider
from llm_core.transport.limits import SENDING

ALLOW_MARK = "llm_network"
BLOCK_MARK = "llm_block_network"
INI = "llm_core_block_network"
PROVIDERS, ALL = "providers", "all"
_SCOPES = {"true": PROVIDERS, "yes": PROVIDERS, "on": PROVIDERS, "1": PROVIDERS, PROVIDERS: PROVIDERS, ALL: ALL}
_OFF = {"false", "no", "off", "0", ""}
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llm-core")
    group.addoption(
        "--llm-block-network",
        action="store_true",
        help="llm-core: fail tests whose model requests (through llm-core's transport) leave this machine",
    )
    group.addoption(
        "--llm-allow-network", action="store_true", help="llm-core: no network guard, whatever the ini or markers say"
    )
    parser.addini(
        INI,
        "llm-core network guard: false (default); true: model requests through llm-core's transport may not "
        "leave this machine; all: no connection or host-name look-up may",
        default="false",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{ALLOW_MARK}: no llm-core network guard for this test")
    config.addinivalue_line(
        "markers",
        f"{BLOCK_MARK}(scope='providers'): the llm-core network guard for this test ('all': every connection)",
    )


def parse_scope(value: Any, where: str) -> str | None:
    """``providers``, ``all`` or ``None`` (off) from an ini value or a marker argument."""
    text = str(value).strip().lower()
    if text in _OFF:
        return None
    if text not in _SCOPES:
        raise pytest.UsageError(f"{where}: {value!r} is not one of false, true, providers, all")
    return _SCOPES[text]


def guard_scope(item: pytest.Item) -> str | None:
    """The guard for ``item``: ``providers``, ``all``, or ``None`` (off)."""
    config = item.config
    if config.getoption("llm_allow_network") or item.get_closest_marker(ALLOW_MARK):
        return None
    marker = item.get_closest_marker(BLOCK_MARK)
    if marker is not None:
        return parse_scope(marker.args[0] if marker.args else PROVIDERS, f"@pytest.mark.{BLOCK_MARK}")
    scope = parse_scope(config.getini(INI), f"the ini option {INI}")
    if scope is None and config.getoption("llm_block_network"):
        return PROVIDERS
    return scope


def _is_local(host: Any) -> bool:
    if not isinstance(host, str) or host.lower() in _LOCAL_NAMES or host.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def guard_message(attempts: list[str], scope: str) -> str:
    what = "sent a model request to" if scope == PROVIDERS else "tried to reach"
    return (
        f"llm-core network guard: the test {what} {', '.join(dict.fromkeys(attempts))}; "
        f"mark it with @pytest.mark.{ALLOW_MARK} (or run with --llm-allow-network, e.g. to record cassettes) "
        "to allow network access"
    )


class NetworkGuard:
    """Refuses what its scope covers, and remembers each attempt."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.attempts: list[str] = []

    def check(self, host: Any, port: Any = None) -> None:
        if self.scope == PROVIDERS:
            sending = SENDING.get()  # set while llm-core's transport opens a model request's connection
            if sending is None:
                return
            host, port = sending
        if _is_local(host):
            return
        where = f"{host}:{port}" if port is not None else str(host)
        self.attempts.append(where)
        raise ConnectionRefusedError(guard_message([where], self.scope))


_GUARD = pytest.StashKey[NetworkGuard]()


@pytest.fixture(autouse=True)
def _llm_core_network_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    scope = guard_scope(request.node)
    if scope is None:
        return
    guard = NetworkGuard(scope)
    request.node.stash[_GUARD] = guard
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard.check(address[0], address[1])
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard.check(address[0], address[1])
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        guard.check(host.decode() if isinstance(host, bytes) else host, port)
        return getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that passed although it tried to reach the network (its code or an SDK may have
    turned the refusal into an error it expected) fails all the same."""
    result = yield
    guard = item.stash.get(_GUARD, None)
    if guard is not None and guard.attempts:
        pytest.fail(guard_message(guard.attempts, guard.scope), pytrace=False)
    return result


@pytest.fixture
def test_provider() -> TestProvider:
    """A fresh TestProvider: valid answers derived from each request, no network."""
    return TestProvider()


@pytest.fixture
def llm_registry(test_provider: TestProvider) -> Iterator[Any]:
    """The process-wide registry, with every get()/select()/router answering from ``test_provider``."""
    from llm_core.registry import get_registry

    registry = get_registry()
    with registry.override(test_provider):
        yield registry
