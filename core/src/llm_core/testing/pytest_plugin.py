"""The llm-core pytest plugin (entry point ``pytest11``, loaded wherever llm-core is installed).

Fixtures:

- ``test_provider``: a fresh :class:`~llm_core.testing.TestProvider`.
- ``llm_registry``: the process-wide registry with ``override(test_provider)`` active for the
  test, so code that calls ``get_registry().select(...)``, ``get(...)`` or a router gets the
  test provider.

The network guard: a test that opens a connection to anything but the local machine fails, with
the host it tried, so a test cannot reach a real provider by accident. Mark a test with
``@pytest.mark.llm_network`` to allow it, or switch the guard off for a run with
``--llm-allow-network`` (or ``llm_core_network_guard = false`` in the pytest ini options).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from llm_core.testing.kit import TestProvider

MARK = "llm_network"
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--llm-allow-network", action="store_true", help="llm-core: let tests open non-local connections")
    parser.addini("llm_core_network_guard", "llm-core: fail tests that open non-local connections", default="true")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARK}: the test may open connections beyond the local machine")


def _is_local(host: Any) -> bool:
    if not isinstance(host, str) or host in _LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def guard_message(attempts: list[str]) -> str:
    return (
        f"llm-core network guard: the test tried to reach {', '.join(dict.fromkeys(attempts))}; "
        f"mark it with @pytest.mark.{MARK} to allow network access"
    )


class NetworkGuard:
    """Refuses non-local connections and name look-ups, and remembers each attempt."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def check(self, host: Any, port: Any = None) -> None:
        if _is_local(host):
            return
        where = f"{host}:{port}" if port is not None else str(host)
        self.attempts.append(where)
        raise ConnectionRefusedError(guard_message([where]))


_GUARD = pytest.StashKey[NetworkGuard]()


@pytest.fixture(autouse=True)
def _llm_core_network_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    config = request.config
    enabled = str(config.getini("llm_core_network_guard")).lower() not in ("false", "0", "no", "off")
    if not enabled or config.getoption("--llm-allow-network") or request.node.get_closest_marker(MARK):
        return
    guard = NetworkGuard()
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
        pytest.fail(guard_message(guard.attempts), pytrace=False)
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
