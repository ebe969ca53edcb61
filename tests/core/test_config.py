"""Settings: constructor arguments > TOML file > environment variables; secrets stay secret."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llm_core import ConfigurationError, RetryPolicy, Secret
from llm_core.config import config_path, hide_secrets, load_config_file, reveal_secrets, routing_preference
from llm_core.testing import FakeProvider, fake_spec

KEY = "sk-live-VERY-SECRET-0123456789"
SPEC = fake_spec("fake", requires_credentials=True, credential_env=("FAKE_API_KEY", "FAKE_A_KEY"))


class KeyedFake(FakeProvider):
    """A fake that needs a key and reads its base URL from FAKE_BASE_URL."""

    spec = SPEC
    env_settings: ClassVar[dict[str, tuple[str, ...]]] = {"base_url": ("FAKE_BASE_URL",)}


def write_config(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch | None = None) -> Path:
    path = tmp_path / "llm-core.toml"
    path.write_text(text)
    if monkeypatch is not None:
        monkeypatch.setenv("LLM_CORE_CONFIG", str(path))
    return path


FILE = """
[providers.fake]
api_key = "key-from-file"
model = "fake-fallback"
base_url = "https://file.example"
timeout = 7
temperature_hint = "file"
"""


# -- Secret -------------------------------------------------------------------------------------


def test_secret_never_shows_its_value() -> None:
    secret = Secret(KEY)
    shown = [repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{secret:>40}", "%s" % secret,  # noqa: UP031
             f"{secret}", repr([secret]), repr({"k": secret}), str(ConfigurationError(f"bad {secret}"))]
    for text in shown:
        assert KEY not in text
        assert "VERY-SECRET" not in text
    assert secret.reveal() == KEY


def test_secret_equality_and_hash_keep_the_value() -> None:
    assert Secret(KEY) == Secret(KEY) and Secret(KEY) != Secret("other") and Secret(KEY) != KEY
    assert len({Secret(KEY), Secret(KEY)}) == 1


def test_a_secret_refuses_pickling_and_has_no_dict() -> None:
    """A pickle would hold the key in clear: pickling fails loudly, also inside a container, and
    copies are the same object; ``vars()`` has nothing to show."""
    secret = Secret(KEY)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(secret, protocol=protocol)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps({"settings": [secret]})
    assert copy.copy(secret) is secret and copy.deepcopy({"k": secret})["k"] is secret
    with pytest.raises(TypeError):
        vars(secret)
    assert not hasattr(secret, "__dict__")


def test_hide_secrets_wraps_every_credential_and_reveal_secrets_undoes_it() -> None:
    settings = {"api_key": KEY, "vertex_api_key": KEY, "model": "m", "timeout": 3,
                "default_headers": {"Authorization": f"Bearer {KEY}", "X-Trace": "t", "User-Agent": "ua"},
                "client_args": {"headers": {"x-goog-api-key": KEY}, "params": {"key": KEY}}}
    hidden = hide_secrets(settings)
    assert KEY not in repr(hidden)
    assert isinstance(hidden["api_key"], Secret) and isinstance(hidden["vertex_api_key"], Secret)
    # a header not known harmless may be a token whatever its name; User-Agent is known harmless
    assert isinstance(hidden["default_headers"]["X-Trace"], Secret)
    assert hidden["default_headers"]["User-Agent"] == "ua" and hidden["model"] == "m" and hidden["timeout"] == 3
    assert reveal_secrets(hidden) == settings
    assert hide_secrets(hidden) == hidden  # already hidden: unchanged


@pytest.mark.parametrize("value", ["", "   ", None, 42])
def test_an_empty_or_non_string_secret_is_refused(value: Any) -> None:
    with pytest.raises(ConfigurationError):
        Secret(value)


# -- precedence -----------------------------------------------------------------------------------


def test_environment_variables_are_the_last_resort(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "key-from-env")
    monkeypatch.setenv("FAKE_BASE_URL", "https://env.example")
    provider = KeyedFake()
    assert provider.api_key is not None and provider.api_key.reveal() == "key-from-env"
    assert provider.base_url == "https://env.example"
    assert provider.default_model() == "fake-model"
    assert provider.timeout == KeyedFake.default_timeout


def test_the_first_set_credential_variable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_A_KEY", "second-variable")
    assert KeyedFake().api_key == Secret("second-variable")
    monkeypatch.setenv("FAKE_API_KEY", "first-variable")
    assert KeyedFake().api_key == Secret("first-variable")


def test_the_config_file_beats_the_environment_except_for_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, FILE, monkeypatch)
    monkeypatch.setenv("FAKE_API_KEY", "key-from-env")
    monkeypatch.setenv("FAKE_BASE_URL", "https://env.example")
    provider = KeyedFake()
    # keys: argument, environment, key store, config file, in that order; other settings: file first
    assert provider.api_key == Secret("key-from-env")
    assert provider.base_url == "https://file.example"
    assert provider.default_model() == "fake-fallback"
    assert provider.timeout == 7.0
    assert provider.options["temperature_hint"] == "file"


def test_constructor_arguments_beat_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, FILE, monkeypatch)
    monkeypatch.setenv("FAKE_API_KEY", "key-from-env")
    provider = KeyedFake(api_key="key-from-arg", model="fake-model", base_url="https://arg.example", timeout=3,
                         temperature_hint="arg")
    assert provider.api_key == Secret("key-from-arg")
    assert provider.base_url == "https://arg.example"
    assert provider.default_model() == "fake-model"
    assert provider.timeout == 3.0
    assert provider.options["temperature_hint"] == "arg"


def test_the_default_config_location_is_read(tmp_path: Path) -> None:
    # the autouse fixture points XDG_CONFIG_HOME at tmp_path / "xdg-config"
    target = tmp_path / "xdg-config" / "llm-core" / "config.toml"
    assert config_path() is None
    target.parent.mkdir(parents=True)
    target.write_text(FILE)
    assert config_path() == target
    assert KeyedFake().api_key == Secret("key-from-file")


def test_config_file_argument(tmp_path: Path) -> None:
    path = write_config(tmp_path, FILE)
    assert KeyedFake(config_file=path).api_key == Secret("key-from-file")
    assert KeyedFake(config_file=str(path), api_key="arg").api_key == Secret("arg")


def test_a_config_file_named_by_the_variable_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_CORE_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigurationError, match=r"missing\.toml"):
        load_config_file()


def test_an_unreadable_config_file_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, "[providers.fake\napi_key = ", monkeypatch)
    with pytest.raises(ConfigurationError, match=r"llm-core\.toml"):
        KeyedFake()


def test_configure_changes_settings_later(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = KeyedFake(api_key="first")
    provider.configure({"api_key": "second", "model": "fake-fallback"})
    assert provider.api_key == Secret("second")
    assert provider.default_model() == "fake-fallback"


@pytest.mark.parametrize("timeout", ["soon", 0, -1])
def test_invalid_timeouts_are_configuration_errors(timeout: Any) -> None:
    with pytest.raises(ConfigurationError, match="timeout"):
        KeyedFake(api_key="k", timeout=timeout)


def test_retry_settings_come_from_the_constructor_or_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, FILE + "\n[providers.fake.retry]\nmax_attempts = 5\ninitial_delay = 0.1\n", monkeypatch)
    assert KeyedFake().retry_policy.max_attempts == 5
    assert KeyedFake().retry_policy.initial_delay == 0.1
    assert KeyedFake(retry={"max_attempts": 2}).retry_policy.max_attempts == 2
    assert KeyedFake(retry=RetryPolicy.none()).retry_policy.max_attempts == 1
    assert "retry" not in KeyedFake().options


def test_unknown_retry_settings_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, FILE + "\n[providers.fake.retry]\nmax_attempt = 5\n", monkeypatch)
    with pytest.raises(ConfigurationError, match="max_attempt"):
        KeyedFake()


# -- missing keys and hiding keys -----------------------------------------------------------------


def test_missing_key_names_the_environment_variables() -> None:
    with pytest.raises(ConfigurationError) as info:
        KeyedFake()
    message = str(info.value)
    assert "FAKE_API_KEY" in message and "FAKE_A_KEY" in message
    assert "api_key" in message and "[providers.fake]" in message
    assert info.value.provider == "fake"


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_key_counts_as_missing(blank: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", blank)
    with pytest.raises(ConfigurationError, match="FAKE_API_KEY"):
        KeyedFake()
    with pytest.raises(ConfigurationError, match="FAKE_API_KEY"):
        KeyedFake(api_key=blank)


def test_a_provider_never_shows_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for provider in (KeyedFake(api_key=KEY), KeyedFake(api_key=Secret(KEY))):
        assert "api_key=set" in repr(provider)
        for text in (repr(provider), str(provider), repr(vars(provider)), repr(provider.api_key)):
            assert KEY not in text
    monkeypatch.setenv("FAKE_API_KEY", KEY)
    assert KEY not in repr(vars(KeyedFake()))
    configured = KeyedFake(api_key="x")
    configured.configure({"api_key": KEY})
    assert KEY not in repr(vars(configured))
    assert "api_key=missing" in repr(FakeProvider())


def test_a_key_is_not_needed_when_the_spec_says_so() -> None:
    provider = FakeProvider()
    assert provider.api_key is None
    assert provider.is_available()


# -- routing preference ---------------------------------------------------------------------------


def test_routing_preference_from_env_then_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert routing_preference() == ()
    write_config(tmp_path, '[routing]\nprefer = ["b", "a"]\n', monkeypatch)
    assert routing_preference() == ("b", "a")
    monkeypatch.setenv("LLM_CORE_PREFER", " a , c ,")
    assert routing_preference() == ("a", "c")


def test_routing_preference_accepts_a_single_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, '[routing]\nprefer = "solo"\n', monkeypatch)
    assert routing_preference() == ("solo",)
