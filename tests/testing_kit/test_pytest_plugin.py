"""The pytest plugin (entry point ``pytest11``): fixtures and the network guard, run in an inner
pytest session through pytester (the plugin loads there as it does in any project)."""

from __future__ import annotations

import importlib.metadata

import pytest

pytest_plugins = ["pytester"]
#: The inner sessions' options (pytest-asyncio warns without a fixture loop scope).
INNER = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")


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


GUARDED = """
import socket
import pytest

def test_reaches_out():
    socket.create_connection(("203.0.113.7", 443), timeout=0.1)

def test_swallows_the_error():
    try:
        socket.getaddrinfo("api.openai.com", 443)
    except OSError:
        pass  # the SDK would turn it into a provider error the test might expect

def test_loopback_is_fine():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=1)
    client.close()
    server.close()

@pytest.mark.llm_network
def test_marked_may_use_the_network():
    assert socket.socket.connect.__name__ == "connect"  # the guard is not installed
"""


@pytest.mark.llm_network  # the inner session has its own guard; the outer one would hide it
def test_the_network_guard_fails_tests_that_reach_out(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(GUARDED)
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*llm-core network guard: the test tried to reach 203.0.113.7:443; mark it with @pytest.mark.llm_network*",
            "*llm-core network guard: the test tried to reach api.openai.com:443*",
        ]
    )


@pytest.mark.llm_network
def test_the_guard_can_be_switched_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import socket

        def test_guard_is_off():
            assert socket.socket.connect.__name__ == "connect"
        """
    )
    pytester.runpytest_inprocess(*INNER, "--llm-allow-network").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nllm_core_network_guard = false\n")
    pytester.runpytest_inprocess(*INNER).assert_outcomes(passed=1)
