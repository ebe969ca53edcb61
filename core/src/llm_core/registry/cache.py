"""The installed plugins' entry points, from a cache when nothing they come from has changed.

Scanning for entry points (``importlib.metadata``) imports a dozen modules and parses every
installed distribution's metadata: most of what discovery costs at start-up. The result of that
scan is kept in ``$XDG_CACHE_HOME/llm-core/`` (``~/.cache/llm-core/``), keyed by what the scan
reads: every ``sys.path`` entry and, in each, the name, inode, size and modification time of every
``*.dist-info`` / ``*.egg-info`` and of its ``entry_points.txt``. Installing, upgrading or removing
a distribution (editable ones included) changes that key, and the next start scans again.

The cache is only an accelerator: it is not written while a key file is younger than
:data:`RACY_SECONDS` (a change within the file system's timestamp resolution could go unseen), not
used when another finder on ``sys.meta_path`` provides distributions, and any problem reading or
writing it (a read-only folder, a corrupt file) means scanning. ``LLM_CORE_DISCOVERY_CACHE=0``
turns it off.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

CACHE_ENV = "LLM_CORE_DISCOVERY_CACHE"
#: Files changed less than this long before the scan keep it from being cached.
RACY_SECONDS = 2.0
_FORMAT = 1
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
#: The files of a metadata folder that the scan reads (name, version, entry points).
_READ = ("entry_points.txt", "METADATA", "PKG-INFO")


@dataclass(frozen=True)
class PluginPoint:
    """One ``llm_core`` entry point of an installed distribution."""

    name: str
    value: str
    distribution: str
    version: str | None

    @property
    def plugin_name(self) -> str:
        return f"{self.distribution}:{self.name}"

    @classmethod
    def of(cls, point: Any) -> PluginPoint:
        """From an ``importlib.metadata.EntryPoint``."""
        dist = point.dist
        name = dist.name if dist is not None else point.value.split(":")[0]
        return cls(point.name, point.value, name, dist.version if dist is not None else None)


def cache_enabled() -> bool:
    return os.environ.get(CACHE_ENV, "").strip().lower() not in {"0", "false", "no", "off"}


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/llm-core``, by default ``~/.cache/llm-core``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "llm-core")


def entry_point_plugins(group: str) -> list[PluginPoint]:
    """The ``group`` entry points of the installed distributions: from the cache when its key
    still matches, else from a scan (which then refreshes the cache)."""
    if not cache_enabled() or not _only_path_finder():
        return scan(group)
    key = fingerprint(sys.path)
    if key is None:
        return scan(group)
    path = os.path.join(cache_dir(), f"discovery-{_name(group)}.json")
    cached = _read(path, key.stamps)
    if cached is not None:
        return cached
    found = scan(group)
    if key.newest_ns < time.time_ns() - int(RACY_SECONDS * 1e9):
        _write(path, key.stamps, found)
    return found


def scan(group: str) -> list[PluginPoint]:
    from importlib.metadata import entry_points

    return [PluginPoint.of(point) for point in entry_points(group=group)]


class Fingerprint(NamedTuple):
    """The stamps of what an entry-point scan reads, and the newest modification time among them."""

    stamps: list[Any]
    newest_ns: int


def fingerprint(paths: Iterable[Any]) -> Fingerprint | None:
    """Stamp what the entry-point scan of ``paths`` reads: each entry (a folder's metadata
    folders, or a file such as a zip archive) and in each metadata folder the files the scan
    parses. None when an entry is not a string (the scan's handling of it is not cached)."""
    stamps: list[Any] = []
    newest = 0
    for entry in paths:
        if not isinstance(entry, str):
            return None
        root = os.path.abspath(entry or ".")
        here = _stamp(root)
        if here is None or not stat.S_ISDIR(here[3]):
            stamps.append([root, here])  # missing, or an archive: its own stamp covers its contents
            newest = max(newest, here[0] if here else 0)
            continue
        try:
            names = sorted(n for n in os.listdir(root) if _is_metadata(n, root))
        except OSError:
            stamps.append([root, "unlistable"])
            continue
        for name in names:
            folder = os.path.join(root, name)
            found = [_stamp(folder), *(_stamp(os.path.join(folder, f)) for f in _READ)]
            stamps.append([root, name, found])
            newest = max(newest, *(s[0] for s in found if s is not None), 0)
    return Fingerprint(stamps, newest)


def _is_metadata(name: str, root: str) -> bool:
    low = name.lower()
    return low.endswith(_METADATA_SUFFIXES) or (low == "egg-info" and root.lower().endswith(".egg"))


def _stamp(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size, found.st_ino, found.st_mode]


def _name(group: str) -> str:
    """One cache file per interpreter, ``sys.path`` and group (so that two environments sharing
    a home folder do not take turns overwriting one file)."""
    seed = json.dumps(
        [
            _FORMAT,
            sys.executable,
            sys.version,
            group,
            [os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)],
        ]
    )
    return f"{zlib.crc32(seed.encode()):08x}"


def _only_path_finder() -> bool:
    """Whether ``importlib.metadata`` finds distributions only through the standard path finder
    (whose reads the key covers); a custom finder's are not."""
    from importlib.machinery import PathFinder

    return all(f is PathFinder for f in sys.meta_path if getattr(f, "find_distributions", None) is not None)


def _read(path: str, key: list[Any]) -> list[PluginPoint] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("format") != _FORMAT or data.get("key") != key:
            return None
        points = [PluginPoint(**point) for point in data["points"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    fields_ok = all(
        isinstance(p.name, str)
        and isinstance(p.value, str)
        and isinstance(p.distribution, str)
        and (p.version is None or isinstance(p.version, str))
        for p in points
    )
    return points if fields_ok else None


def _write(path: str, key: list[Any], points: list[PluginPoint]) -> None:
    """Write atomically (a concurrent start reads the old file or the new one, never half of
    one); a folder that cannot be written leaves discovery scanning."""
    document = json.dumps({"format": _FORMAT, "key": key, "points": [asdict(p) for p in points]})
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        import tempfile  # only when writing: it costs a few ms to import

        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".discovery-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(document)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return
