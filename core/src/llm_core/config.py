"""Settings resolution: constructor arguments, then a TOML file, then environment variables.

API keys: the argument, then the environment, then the key store, then the TOML file.

API keys are wrapped in :class:`Secret`, whose ``repr`` and ``str`` never show the value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from llm_core import redaction
from llm_core.errors import ConfigurationError, LLMError, UnknownSettingError
from llm_core.keystore import config_dir, get_key

CONFIG_ENV = "LLM_CORE_CONFIG"
#: The settings every provider reads (declared by the base class of every provider,
#: :class:`~llm_core.provider.settings.ProviderSettings`); a plugin's class adds its own.
CORE_SETTINGS: tuple[str, ...] = ("api_key", "model", "base_url", "timeout", "retry", "unknown_model_features")


class Secret:
    """A secret string. ``repr``/``str``/formatting show ``'**********'``; ``reveal()`` gives it.

    It has no ``__dict__`` (``vars()`` fails), compares in constant time, and cannot be pickled:
    a pickle would hold the key in clear, so ``pickle.dumps`` raises ``TypeError`` (give the
    other process the key through its environment or config file). ``copy``/``deepcopy`` return
    the same object. Every live secret is known to :mod:`llm_core.redaction`, which removes its
    value from errors and recorded cassettes.
    """

    __slots__ = ("__weakref__", "_value")

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError("a secret must be a non-empty string")
        self._value = value
        redaction.track(self)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __format__(self, spec: str) -> str:
        return "**********"

    def __eq__(self, other: object) -> bool:
        import hmac  # on the first comparison: start-up does without it (and hashlib under it)

        return isinstance(other, Secret) and hmac.compare_digest(other._value.encode(), self._value.encode())

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce_ex__(self, protocol: object) -> Any:
        raise TypeError("a Secret cannot be pickled (the pickle would hold the key in clear)")

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: object) -> Secret:
        return self


REDACTED = redaction.REDACTED


def hide_secrets(settings: Mapping[str, Any], *, headers: bool = False) -> dict[str, Any]:
    """``settings`` with every credential wrapped in a :class:`Secret`, at any depth of nested
    mappings: what a provider or router keeps (and so its ``repr``, ``vars()`` and pickle) holds
    none in clear. The one rule of what is a credential:

    - a string under a credential name: ``api_key``, ``*_api_key``, and header or query names
      such as ``authorization``, ``x-goog-api-key``, ``key``;
    - a URL that carries one, whatever its setting's name (``base_url``, a ``proxy`` in
      ``client_args``): a user or password before the host (``http://user:pw@proxy:8080``) or a
      query parameter named like a credential (``?key=``, ``?sig=``, ``?access_token=``); the
      whole URL is the secret, and its credential parts are redacted from error texts on their own;
    - every header in a headers mapping (``default_headers``, ``extra_headers``, ``headers``),
      unless the header is known harmless (``User-Agent``, ``Accept``, ``Content-Type``, ...):
      a custom header's name does not say whether it holds a token.

    ``headers``: ``settings`` is itself a headers mapping."""
    return {name: _hidden(name, value, headers) for name, value in settings.items()}


def _hidden(name: object, value: Any, in_headers: bool) -> Any:
    if isinstance(value, str) and value.strip():
        if (
            redaction.is_credential_name(name)
            or (in_headers and redaction.is_credential_header(name))
            or redaction.url_credentials(value)
        ):
            return Secret(value)
        return value
    if isinstance(value, Mapping):
        return hide_secrets(value, headers=isinstance(name, str) and name.lower() in redaction.HEADER_SETTINGS)
    return value


def hide_secret(name: str, value: Any) -> Any:
    """One setting's value as :func:`hide_secrets` keeps it (a URL with credentials as a
    :class:`Secret`): for a setting read from the config file or the environment."""
    return _hidden(name, value, False)


def reveal_secrets(value: Any) -> Any:
    """``value`` with every :class:`Secret` in it (at any depth of mappings) revealed: for the
    SDK call that needs the clear text, never for storing."""
    if isinstance(value, Secret):
        return value.reveal()
    if isinstance(value, Mapping):
        return {name: reveal_secrets(item) for name, item in value.items()}
    return value


def redact_exception(error: BaseException, *extra: str) -> None:
    """Remove every known key (see :func:`llm_core.redaction.redact_exception`) from ``error``
    and everything it chains, so that neither ``str()``, ``repr()``, a traceback nor the chained
    SDK exception's request, response or body can show it."""
    redaction.redact_exception(error, *extra)


def config_path() -> Path | None:
    """The TOML config file in force: ``$LLM_CORE_CONFIG`` or ``~/.config/llm-core/config.toml``."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    candidate = config_dir() / "config.toml"
    return candidate if candidate.is_file() else None


@lru_cache(maxsize=8)
def _load_toml(path: str, mtime: float) -> Mapping[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read config file {path}: {exc}") from exc


def load_config_file(path: Path | None = None) -> Mapping[str, Any]:
    """The parsed TOML config (empty when there is none). Cached until the file changes."""
    target = path or config_path()
    if target is None:
        return {}
    if not target.is_file():
        if path is not None or os.environ.get(CONFIG_ENV):
            raise ConfigurationError(f"config file {target} does not exist (set by {CONFIG_ENV})")
        return {}
    return _load_toml(str(target), target.stat().st_mtime)


#: The key of a ``[providers.NAME]`` table that makes it a named endpoint of a plugin (see
#: :mod:`llm_core.endpoints`, which holds the endpoint settings; this module stays light).
PLUGIN_KEY = "plugin"


def endpoint_tables(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The ``[providers.NAME]`` tables of a parsed config file that declare endpoints."""
    providers = config.get("providers", {})
    if not isinstance(providers, Mapping):
        return {}
    return {str(name): table for name, table in providers.items() if isinstance(table, Mapping) and PLUGIN_KEY in table}


def provider_section(identifier: str, path: Path | None = None) -> Mapping[str, Any]:
    """The ``[providers.<identifier>]`` table of the config file."""
    providers = load_config_file(path).get("providers", {})
    section = providers.get(identifier, {}) if isinstance(providers, Mapping) else {}
    return section if isinstance(section, Mapping) else {}


def resolve_setting(
    name: str,
    explicit: Any,
    *,
    section: Mapping[str, Any],
    env: Sequence[str] = (),
) -> Any:
    """First of: the explicit value, the config file's ``name``, the first set env variable."""
    if explicit is not None:
        return explicit
    if section.get(name) is not None:
        return section[name]
    for variable in env:
        value = os.environ.get(variable)
        if value:
            return value
    return None


def resolve_api_key(
    provider: str,
    explicit: str | Secret | None,
    *,
    section: Mapping[str, Any],
    env: Sequence[str],
    required: bool = True,
) -> Secret | None:
    """The API key as a :class:`Secret`, from the first of: the argument, the environment
    variables ``env`` (in order), the key store (``llm-core keys set PROVIDER``), the config
    file's ``api_key``. A missing key is a clear error naming every place to put one."""
    value: Any = explicit
    if value is None:
        value = next((os.environ[name] for name in env if os.environ.get(name)), None)
    if value is None:
        value = get_key(provider)
    if value is None:
        value = section.get("api_key")
    if value is None or (isinstance(value, str) and not value.strip()):
        if not required:
            return None
        variables = " or ".join(env) if env else "the provider's key variable"
        raise ConfigurationError(
            f"no API key for provider {provider!r}: set {variables}, run `llm-core keys set {provider}`, "
            f"pass api_key=..., or add api_key to [providers.{provider}] in "
            f"{config_path() or '~/.config/llm-core/config.toml'}",
            provider=provider,
        )
    return value if isinstance(value, Secret) else Secret(str(value))


def check_section(provider: str, section: Mapping[str, Any], known: Iterable[str]) -> None:
    """Refuse keys of a ``[providers.NAME]`` table that the provider does not read: a typo such
    as ``timout = 30`` would otherwise be ignored without a word."""
    check_names(
        section,
        known,
        what="setting",
        where=f" in [providers.{provider}] of {config_path() or 'the config file'}",
        provider=provider,
    )


def check_names(
    names: Iterable[str],
    valid: Iterable[str],
    *,
    what: str,
    where: str = "",
    provider: str | None = None,
    error: type[LLMError] = UnknownSettingError,
) -> None:
    """Raise ``error`` when one of ``names`` is not ``valid``: the one refusal of every unknown
    name, whether a setting (constructor keyword, ``configure``, config-file key, a router's
    per-provider settings: :class:`UnknownSettingError`) or a per-call option (the plugins pass
    :class:`InvalidInputError`), so that each reads the same and suggests the closest valid name.

    The message holds names only, never a value: a value may be a key.
    """
    valid_names = sorted(set(valid))
    unknown = sorted(str(name) for name in names if name not in valid_names)
    if not unknown:
        return
    name = unknown[0]
    import difflib  # only for a misspelt name

    close = difflib.get_close_matches(name, valid_names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise error(f"unknown {what} {name!r}{where}{hint} (valid: {', '.join(valid_names) or 'none'})", provider=provider)


def declared_settings(owner: type) -> frozenset[str]:
    """Every setting name a provider class declares, over its whole class hierarchy.

    Each class may set ``settings``: a tuple of names and/or Pydantic model classes (whose fields,
    and their aliases, are the names). Keys of ``env_settings`` and the names of ``call_defaults``
    (per-call options a provider takes as defaults for every call) count too. The core declares its
    own settings on the base class, plugins add theirs on their provider class, and a settings
    model that a core module defines is picked up from its fields: nothing is listed twice.
    """
    names: set[str] = set()
    for cls in owner.__mro__:
        for entry in cls.__dict__.get("settings", ()):
            if isinstance(entry, str):
                names.add(entry)
            else:
                for field_name, info in entry.model_fields.items():
                    names.add(field_name)
                    if info.alias:
                        names.add(info.alias)
        names.update(cls.__dict__.get("env_settings", {}))
        names.update(cls.__dict__.get("call_defaults", ()))
    return frozenset(names)


def routing_preference(path: Path | None = None) -> tuple[str, ...]:
    """Preferred provider order: ``$LLM_CORE_PREFER`` (comma list), else ``[routing] prefer``."""
    env = os.environ.get("LLM_CORE_PREFER")
    if env:
        return tuple(p.strip() for p in env.split(",") if p.strip())
    routing = load_config_file(path).get("routing", {})
    prefer = routing.get("prefer", ()) if isinstance(routing, Mapping) else ()
    if isinstance(prefer, str):
        return (prefer,)
    return tuple(str(p) for p in prefer)
