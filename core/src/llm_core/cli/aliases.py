"""Model aliases for ``-m``: a few built in (``flash``, ``mini``, …), more with ``llm-core aliases
set NAME MODEL``, kept in ``aliases.json`` in the user's config dir. A user alias replaces a
built-in one of the same name."""

from __future__ import annotations

import json
from pathlib import Path

from llm_core.errors import ConfigurationError
from llm_core.keystore import config_dir

#: Short names for the plugins' default and most used models.
BUILTIN_ALIASES: dict[str, str] = {
    "flash": "gemini-2.5-flash",
    "flash-lite": "gemini-2.5-flash-lite",
    "pro": "gemini-2.5-pro",
    "mini": "gpt-5.4-mini",
    "nano": "gpt-5.4-nano",
}


def aliases_path() -> Path:
    return config_dir() / "aliases.json"


def user_aliases() -> dict[str, str]:
    path = aliases_path()
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def all_aliases() -> dict[str, tuple[str, str]]:
    """alias → (model, "builtin" or "user"), sorted by alias."""
    found = {name: (model, "builtin") for name, model in BUILTIN_ALIASES.items()}
    found.update({name: (model, "user") for name, model in user_aliases().items()})
    return dict(sorted(found.items()))


def resolve_alias(name: str) -> str:
    """The model an alias stands for; any other name is a model id and comes back unchanged."""
    found = all_aliases().get(name)
    return found[0] if found else name


def _save(aliases: dict[str, str]) -> None:
    path = aliases_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(aliases.items())), indent=2) + "\n", encoding="utf-8")


def set_alias(name: str, model: str) -> None:
    if not name.strip() or not model.strip():
        raise ValueError("an alias and its model must not be empty")
    _save({**user_aliases(), name: model})


def remove_alias(name: str) -> bool:
    aliases = user_aliases()
    if aliases.pop(name, None) is None:
        return False
    _save(aliases)
    return True
