"""The pytest plugin (entry point ``pytest11``): fixtures and the opt-in network guard, run in an
inner pytest session through pytester (the plugin loads there as it does in any project).

The guard's tests run the inner session in a subprocess whose ``conftest.py`` installs a fake
resolver (``tests.testing_kit.user_project.RESOLVER``): nothing looks up a real name or connects
beyond loopback. They are marked ``llm_network``: this suite's own guard
(``llm_core_block_network = all``) is not theirs.
"""

from __future__ import annotations

import importlib.metadata
import socket

import pytest

from tests.testing_kit.user_project import RESOLVER, USERS_OWN_SOCKETS

pytest_plugins = ["pytester"]
#: The inner sessions' options (pytest-asyncio warns without a fixture loop scope).
INNER = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")

def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    """``source`` as the inner project's test module, run by pytest in a subprocess."""
    pytester.makeconftest(RESOLVER)
    pytester.makepyfile(source)
    return pytester.runpytest_subprocess(*INNER, *args)


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    found = [ep for ep in importlib.metadata.entry_points(group="pytest11") if ep.name == "llm_core"]
    assert [ep.value for ep in found] == ["llm_core.testing.pytest_plugin"]


def test_fixtures_answer_application_code(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from llm_core import Feature, get_registry

        def summarise(text):  # application code: it picks a provider itself
            provider = get_registry().select(Feature.CHAT).provider()
            return provider.chat_completion(f"Summarise: {text}").content

        def test_summarise(llm_registry, test_provider):
            assert summarise("a long text") == "success (no tool calls)"
            assert test_provider.requests[0]["last_user"] == "Summarise: a long text"
            assert llm_registry is get_registry()
        """
    )
    pytester.runpytest_inprocess(*INNER).assert_outcomes(passed=1)


@pytest.mark.llm_network
def test_the_users_own_sockets_are_left_alone(pytester: pytest.Pytester) -> None:
    run(pytester, USERS_OWN_SOCKETS).assert_outcomes(passed=1)  # nothing asked: no guard
    run(pytester, USERS_OWN_SOCKETS, "--llm-block-network").assert_outcomes(passed=1)
    # the `all` guard is for a suite that must stay offline: the look-up of a name fails the test
    result = run(pytester, USERS_OWN_SOCKETS, "-o", "llm_core_block_network=all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*llm-core network guard: the test tried to reach my-service.internal:*"])


@pytest.mark.llm_network
def test_by_default_the_plugin_patches_nothing(pytester: pytest.Pytester) -> None:
    untouched = """
import socket

def test_untouched():
    assert socket.socket.connect.__qualname__ == "socket.connect"
    assert socket.getaddrinfo.__name__ == "fake_getaddrinfo"
"""
    run(pytester, untouched).assert_outcomes(passed=1)


#: Model requests through llm-core's transport, to a provider, to a local server, and replayed.
MODEL_REQUESTS = """
import asyncio
import http.server
import threading

import httpx2

from llm_core.transport import Limits, TransportSettings, async_http_client, sync_http_client

LIMITS = Limits.resolve(TransportSettings(), timeout=5.0, provider="acme")


def test_a_model_request_to_the_provider():
    with sync_http_client(LIMITS) as client:
        client.get("https://api.acme.example/v1/models")


def test_an_async_model_request_whose_error_was_caught():
    async def main():
        async with async_http_client(LIMITS) as client:
            try:
                await client.get("https://api.acme.example/v1/models")
            except httpx2.ConnectError:
                pass  # the SDK would turn it into a provider error the test might expect

    asyncio.run(main())


def test_a_replayed_answer():
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json={"data": []}))
    with sync_http_client(LIMITS, transport=transport) as client:
        assert client.get("https://api.acme.example/v1/models").json() == {"data": []}


def test_a_model_server_on_this_machine():
    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "12")
            self.end_headers()
            self.wfile.write(b'{"data": []}')

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Models)
    thread = threading.Thread(target=server.handle_request, daemon=True)
    thread.start()
    with sync_http_client(LIMITS) as client:
        assert client.get(f"http://127.0.0.1:{server.server_port}/v1/models").json() == {"data": []}
    thread.join(5)
    server.server_close()
"""


@pytest.mark.llm_network
@pytest.mark.parametrize(
    "switch",
    [("--llm-block-network",), ("-o", "llm_core_block_network=true")],
    ids=["option", "ini"],
)
def test_the_guard_refuses_model_requests_beyond_this_machine(
    pytester: pytest.Pytester, switch: tuple[str, ...]
) -> None:
    result = run(pytester, MODEL_REQUESTS, *switch)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*FAILED*test_a_model_request_to_the_provider*",
            "*FAILED*test_an_async_model_request_whose_error_was_caught*",
        ]
    )
    assert result.stdout.str().count("the test sent a model request to api.acme.example") >= 2


@pytest.mark.llm_network
def test_the_marker_switches_the_guard_on_and_off(pytester: pytest.Pytester) -> None:
    marked = """
import socket

import pytest

from llm_core.transport import Limits, TransportSettings, sync_http_client

LIMITS = Limits.resolve(TransportSettings(), timeout=5.0, provider="acme")

@pytest.mark.llm_block_network
def test_guarded():
    with sync_http_client(LIMITS) as client:
        client.get("https://api.acme.example/v1/models")

@pytest.mark.llm_network
def test_allowed():
    assert socket.getaddrinfo.__name__ == "fake_getaddrinfo"  # no guard around it
"""
    result = run(pytester, marked, "-o", "llm_core_block_network=all")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the test sent a model request to api.acme.example*"])


@pytest.mark.llm_network
def test_allow_network_wins_and_a_bad_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    unguarded = """
import socket

def test_guard_is_off():
    assert socket.getaddrinfo.__name__ == "fake_getaddrinfo"
"""
    run(pytester, unguarded, "-o", "llm_core_block_network=all", "--llm-allow-network").assert_outcomes(passed=1)
    result = run(pytester, unguarded, "-o", "llm_core_block_network=sometimes")
    assert "llm_core_block_network: 'sometimes' is not one of false, true, providers, all" in result.stdout.str()


def test_this_suite_runs_with_the_whole_guard(request: pytest.FixtureRequest) -> None:
    """No test of llm-core's own reaches the network: the suite's ini option turns the guard on."""
    assert request.config.getini("llm_core_block_network") == "all"
    assert socket.getaddrinfo.__name__ == "guarded_getaddrinfo"
