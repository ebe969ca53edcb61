"""Stored API keys: ``llm-core keys set NAME`` writes here, providers read from here.

Keys live in ``keys.json`` under the user's config dir (``$XDG_CONFIG_HOME/llm-core`` or
``~/.config/llm-core``), written with mode 0600. When the ``keyring`` package is installed
(``pip install 'llm-core[keyring]'``) values go to the OS keyring instead, and the file keeps only
the names (the keyring cannot list its entries). ``LLM_CORE_KEYRING=0`` keeps using the file.

Reading the names needs only the standard library, so that listing providers and checking
whether a key is present stays light; ``keyring`` is imported only to read or write a value.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from llm_core.errors import ConfigurationError
from llm_core.untrusted import write_private_file

KEYRING_SERVICE = "llm-core"
KEYRING_ENV = "LLM_CORE_KEYRING"
#: Marks a name whose value is held by the OS keyring.
IN_KEYRING = {"keyring": True}


def config_dir() -> Path:
    """The user's llm-core config folder (it may not exist yet)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "llm-core"


def keys_path() -> Path:
    return config_dir() / "keys.json"


def _keyring() -> Any:
    """The ``keyring`` module when it is installed, has a usable backend (a headless Linux
    often has none) and is not switched off; else ``None`` (the file is used)."""
    if os.environ.get(KEYRING_ENV, "").lower() in ("0", "false", "no", "off"):
        return None
    try:
        import keyring
        from keyring.backends.fail import Keyring as NoBackend
    except ImportError:
        return None
    if isinstance(keyring.get_keyring(), NoBackend):
        return None
    return keyring


def _read() -> dict[str, Any]:
    path = keys_path()
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the key store {path}: {type(exc).__name__}") from None
    return data if isinstance(data, dict) else {}


def _write(data: dict[str, Any]) -> None:
    # 0600 from the start (never world-readable, not even briefly), through a fresh temporary file
    # that is never a link someone planted, then replaced atomically.
    write_private_file(keys_path(), json.dumps(data, indent=2, sort_keys=True))


def stored_names() -> list[str]:
    """Names that have a stored key (file or keyring), sorted."""
    return sorted(_read())


def has_key(name: str) -> bool:
    return name in _read()


def get_key(name: str) -> str | None:
    """The stored key ``name`` (``None`` when there is none)."""
    value = _read().get(name)
    if value is None:
        return None
    if isinstance(value, dict) and value.get("keyring"):
        keyring = _keyring()
        if keyring is None:
            raise ConfigurationError(
                f"the key {name!r} is stored in the OS keyring, but the keyring package is not usable: "
                "pip install 'llm-core[keyring]' (or run llm-core keys set again)"
            )
        found = keyring.get_password(KEYRING_SERVICE, name)
        return str(found) if found else None
    return str(value) if value else None


def set_key(name: str, value: str) -> str:
    """Store ``value`` as the key ``name``; returns where it went (``"keyring"`` or the file)."""
    if not name.strip():
        raise ConfigurationError("a key name must not be empty")
    if not value.strip():
        raise ConfigurationError(f"refusing to store an empty key for {name!r}")
    data = _read()
    keyring = _keyring()
    if keyring is not None:
        keyring.set_password(KEYRING_SERVICE, name, value)
        data[name] = IN_KEYRING
        where = "keyring"
    else:
        data[name] = value
        where = str(keys_path())
    _write(data)
    return where


def remove_key(name: str) -> bool:
    """Forget the key ``name``; ``False`` when there was none."""
    data = _read()
    value = data.pop(name, None)
    if value is None:
        return False
    if isinstance(value, dict) and value.get("keyring"):
        keyring = _keyring()
        if keyring is not None:
            keyring.delete_password(KEYRING_SERVICE, name)
    _write(data)
    return True
