"""``llm-core new-plugin NAME``: write a ready third-party plugin distribution.

For NAME ``acme`` it writes ``DIR/llm-core-acme/``: distribution ``llm-core-acme``, import package
``llm_core_acme``, provider identifier ``acme``, class ``AcmeProvider``, key variable
``ACME_API_KEY``. The provider speaks the OpenAI-compatible Chat Completions API over httpx2; its
tests run llm-core's conformance kit on the recorded cassettes it ships, offline.

The files come from ``templates/plugin/`` (``*.tmpl`` with ``{{ name }}`` placeholders; the path
segment ``_package_`` becomes the import package, ``gitignore`` becomes ``.gitignore``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

import llm_core

#: Lower bound of the generated project's httpx2 dependency (the version it was tested with).
HTTPX2_VERSION = "2.16"

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
_TOKEN = re.compile(r"\{\{ *([a-z_][a-z0-9_]*) *\}\}")
_PREFIXES = ("llm-core-", "llm_core_")
_RENAMED = {"gitignore": ".gitignore"}


@dataclass(frozen=True)
class PluginNames:
    """Every name the generated project uses, derived from the provider name."""

    identifier: str  # acme-ai: the provider identifier and entry-point name
    dist: str  # llm-core-acme-ai
    package: str  # llm_core_acme_ai
    class_name: str  # AcmeAiProvider
    display_name: str  # Acme Ai
    env_prefix: str  # ACME_AI (ACME_AI_API_KEY, ACME_AI_BASE_URL)
    host: str  # acme-ai (api.acme-ai.example in the placeholder base URL)

    @classmethod
    def from_name(cls, name: str) -> PluginNames:
        """Names for provider ``name`` (e.g. ``acme``; a ``llm-core-`` prefix is dropped).

        Raises :class:`ValueError` for a name that cannot be an identifier and a package name.
        """
        raw = name.strip().lower()
        for prefix in _PREFIXES:
            raw = raw.removeprefix(prefix)
        if not _NAME.match(raw) or len(raw) > 40:
            raise ValueError(
                f"plugin name {name!r} must be lower-case letters and digits, words joined by '-' or '_', "
                "starting with a letter, at most 40 characters (e.g. 'acme' or 'acme-ai')"
            )
        words = re.split(r"[-_]", raw)
        return cls(
            identifier=raw,
            dist="llm-core-" + "-".join(words),
            package="llm_core_" + "_".join(words),
            class_name="".join(w.capitalize() for w in words) + "Provider",
            display_name=" ".join(w.capitalize() for w in words),
            env_prefix="_".join(words).upper(),
            host="-".join(words),
        )

    def values(self) -> dict[str, str]:
        """The template placeholders."""
        return {**asdict(self), "core_version": llm_core.__version__, "httpx2_version": HTTPX2_VERSION}


def render(text: str, values: Mapping[str, str]) -> str:
    """Fill ``{{ name }}`` placeholders; an unknown name is an error (a broken template)."""

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template placeholder {key!r} has no value")
        return values[key]

    rendered = _TOKEN.sub(substitute, text)
    if "{{" in rendered:
        line = rendered[: rendered.index("{{")].count("\n") + 1
        raise ValueError(f"malformed template placeholder on line {line}")
    return rendered


def templates() -> Traversable:
    return files("llm_core.cli").joinpath("templates", "plugin")


def template_files(
    root: Traversable | None = None, prefix: PurePosixPath | None = None
) -> Iterator[tuple[PurePosixPath, Traversable]]:
    """``(relative path, file)`` of every template, sorted."""
    base = root if root is not None else templates()
    for entry in sorted(base.iterdir(), key=lambda e: e.name):
        path = (prefix or PurePosixPath()) / entry.name
        if entry.is_dir():
            yield from template_files(entry, path)
        elif entry.name.endswith(".tmpl"):
            yield path, entry


def output_path(template: PurePosixPath, names: PluginNames) -> PurePosixPath:
    """Where a template is written inside the project folder."""
    parts = [names.package if part == "_package_" else part for part in template.parts]
    parts[-1] = _RENAMED.get(parts[-1].removesuffix(".tmpl"), parts[-1].removesuffix(".tmpl"))
    return PurePosixPath(*parts)


def write_plugin(name: str, directory: Path) -> Path:
    """Write the plugin distribution for ``name`` into ``directory`` and return its folder.

    Raises :class:`ValueError` for an invalid name or when the folder exists and is not empty.
    """
    names = PluginNames.from_name(name)
    target = Path(directory) / names.dist
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ValueError(f"{target} already exists and is not empty: remove it or choose another --dir")
    values = names.values()
    for template, source in template_files():
        destination = target.joinpath(*output_path(template, names).parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(render(source.read_text(encoding="utf-8"), values), encoding="utf-8")
    return target
