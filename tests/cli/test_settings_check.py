"""Unknown keys in a ``[providers.NAME]`` table are an error naming the closest valid key; the
valid keys are discovered from what each class in the provider's hierarchy declares (names and
Pydantic settings models), and the API key's precedence is argument, environment, key store,
config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from llm_core import keystore
from llm_core.config import Secret, declared_settings
from llm_core.errors import ConfigurationError
from llm_core.testing.fake import FakeProvider, fake_spec


class TransportLike(BaseModel):
    """A settings model as a core module declares one (fields and an alias are setting names)."""

    max_response_bytes: int = 1 << 20
    allow_insecure_http: bool = False
    stream_timeout: float = Field(default=30.0, alias="stream_idle_timeout")


class AppProvider(FakeProvider):
    """A plugin's provider class: it declares its own settings, so its table is checked."""

    spec = fake_spec("app", requires_credentials=True, credential_env=["APP_TEST_KEY"])
    settings: ClassVar[tuple[Any, ...]] = ("region", TransportLike)


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[providers.app]\n{table}\n")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(path))


def test_declared_settings_come_from_every_class_and_model() -> None:
    names = declared_settings(AppProvider)
    assert {"api_key", "model", "base_url", "timeout", "retry"} <= names  # the core's own
    assert {"region", "max_response_bytes", "allow_insecure_http", "stream_timeout", "stream_idle_timeout"} <= names


def test_a_typo_names_the_closest_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, 'api_key = "k"\ntimout = 30')
    with pytest.raises(ConfigurationError) as caught:
        AppProvider()
    assert "unknown setting 'timout' in [providers.app]" in str(caught.value)
    assert "did you mean 'timeout'?" in str(caught.value)
    _config(tmp_path, monkeypatch, 'api_key = "k"\nmax_response_byte = 10')
    with pytest.raises(ConfigurationError, match="did you mean 'max_response_bytes'"):
        AppProvider()


def test_declared_keys_are_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, 'api_key = "k"\ntimeout = 5\nregion = "eu"\nallow_insecure_http = true')
    provider = AppProvider()
    assert provider.timeout == 5.0 and provider.options["region"] == "eu"


def test_key_precedence_argument_environment_store_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, 'api_key = "from-file"')
    assert AppProvider().api_key == Secret("from-file")
    keystore.set_key("app", "from-store")
    assert AppProvider().api_key == Secret("from-store")
    monkeypatch.setenv("APP_TEST_KEY", "from-env")
    assert AppProvider().api_key == Secret("from-env")
    assert AppProvider(api_key="from-argument").api_key == Secret("from-argument")


def test_keyring_holds_the_value_when_it_has_a_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        """An in-memory backend through keyring's own backend API."""

        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.values: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.values.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.values[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            del self.values[(service, username)]

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.delenv("LLM_CORE_KEYRING")
    try:
        assert keystore.set_key("app", "in-the-keyring") == "keyring"
        assert backend.values == {("llm-core", "app"): "in-the-keyring"}
        assert "in-the-keyring" not in keystore.keys_path().read_text()  # the file keeps the name only
        assert keystore.stored_names() == ["app"] and keystore.get_key("app") == "in-the-keyring"
        assert AppProvider().api_key == Secret("in-the-keyring")
        assert keystore.remove_key("app") and backend.values == {}
    finally:
        keyring.set_keyring(previous)


def test_the_key_store_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    """A symlink (or file) waiting where an older version put its temporary file is left alone;
    the key goes to keys.json only, 0600."""
    path = keystore.keys_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    path.with_suffix(".tmp").symlink_to(victim)
    keystore.set_key("app", "planted-link-secret")
    assert victim.read_text() == "untouched"
    assert path.stat().st_mode & 0o777 == 0o600 and "planted-link-secret" in path.read_text()
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == ["keys.tmp"]
