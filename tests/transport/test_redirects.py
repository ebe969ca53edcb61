"""Keys go only where they were meant to go: no redirect is followed, no key crosses the network
in clear without an explicit opt-in. Both plugins, sync and async, calls and streams.

Two loopback servers: ``home`` (the configured base URL) answers a redirect to ``elsewhere``,
which records whether anything (a request, a header) reached it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_core.errors import ConfigurationError, InvalidResponseError
from tests.reliability.fault_server import FaultServer, redirect
from tests.reliability.fault_targets import HTTP_TARGETS, TEST_KEY, Target
from tests.transport.helpers import KINDS, MODES, error_of, run

TARGETS = {t.name: t for t in HTTP_TARGETS}


@pytest.fixture
def elsewhere() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_redirect_is_refused_and_the_key_never_reaches_the_other_host(
    target: str, mode: str, kind: str, code: int, server: FaultServer, elsewhere: FaultServer
) -> None:
    http: Target = TARGETS[target]
    # the same path on the other host, as a hostile upstream would answer
    server.always(redirect(code, f"{elsewhere.url}/steal{http.base_suffix}/anything"))
    elsewhere.fallback = http.upstream  # it would answer, and be caught

    result, _ = run(http.build(server.url), kind, mode)

    error = error_of(result)
    assert isinstance(error, InvalidResponseError), result
    assert error.status_code == code and "redirect" in error.message and "127.0.0.1" in error.message
    assert server.count == 1, "one attempt, not retried"
    assert elsewhere.count == 0, "nothing reached the host the Location named"
    assert TEST_KEY not in str(error)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize(
    "base_url", ["http://api.example.com/v1", "http://10.0.0.7:8080", "http://[2001:db8::1]/v1", "HTTP://Example.COM"]
)
def test_a_key_over_plain_http_to_another_host_is_refused_before_anything_is_sent(target: str, base_url: str) -> None:
    http = TARGETS[target]
    with pytest.raises(ConfigurationError, match="plain http") as raised:
        http.provider_class()(api_key=TEST_KEY, base_url=base_url)
    assert "allow_insecure_http" in raised.value.message and TEST_KEY not in str(raised.value)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.example.com/v1",
        "http://127.0.0.1:9",
        "http://127.8.9.10",
        "http://localhost:8000",
        "http://[::1]:80",
    ],
)
def test_https_and_this_machine_need_no_opt_in(target: str, base_url: str) -> None:
    TARGETS[target].provider_class()(api_key=TEST_KEY, base_url=base_url)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_opt_in_by_keyword_and_by_config_file(target: str, tmp_path: Path) -> None:
    cls = TARGETS[target].provider_class()
    provider = cls(api_key=TEST_KEY, base_url="http://llm.internal", allow_insecure_http=True)
    assert provider.transport_settings.allow_insecure_http  # type: ignore[attr-defined]
    config = tmp_path / "config.toml"
    config.write_text(f'[providers.{target}]\nallow_insecure_http = true\nbase_url = "http://llm.internal/v1"\n')
    assert cls(api_key=TEST_KEY, config_file=config).base_url == "http://llm.internal/v1"
    config.write_text(f'[providers.{target}]\nallow_insecure_http = "maybe"\n')
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        cls(api_key=TEST_KEY, config_file=config)
