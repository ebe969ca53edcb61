"""The discovery cache never hides an install, upgrade, removal or editable re-install.

Every scenario runs fresh interpreters of a temporary virtual environment into which pip (offline,
``--no-index``) installs tiny plugin distributions built here with hatchling. The environment also
sees llm-core and the development environment's packages (a ``.pth`` file), so the installed
Gemini and OpenAI plugins take part as usual. A run that used the cache has not imported
``importlib.metadata`` (the scan needs it; nothing else at start-up does).

pip leaves the files it writes with their current modification time; the cache is only written
once every stamped file is older than ``RACY_SECONDS``. Where a scenario wants the next run to
use the cache, it ages the environment's files (as if installed a minute ago) first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from llm_core.registry.cache import RACY_SECONDS

PROBE = textwrap.dedent("""
    import json, sys
    import llm_core
    registry = llm_core.get_registry()
    print(json.dumps({
        "providers": {s.identifier: s.distribution for s in registry.providers()},
        "plugins": {p.distribution: p.version for p in registry.plugins},
        "errors": [str(e) for e in registry.plugin_errors],
        "scanned": "importlib.metadata" in sys.modules,
    }))
""")

PLUGIN = """
from llm_core import hookimpl, ProviderSpec

@hookimpl
def llm_core_register_providers(register):
    register(ProviderSpec(identifier={identifier!r}, name="Cache test", features=["chat"],
                          factory="llm_core.testing.fake:FakeProvider", requires_credentials=False))
"""


class Env:
    """A virtual environment, its cache folder, and pip run from the development environment."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "venv" / "bin" / "python"
        self.cache = root / "cache"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=120)
        site = next((root / "venv" / "lib").glob("python3*/site-packages"))
        self.site = site
        here = [p for p in sys.path if p and Path(p).is_dir() and not p.startswith(sys.base_prefix)]
        (site / "_dev_environment.pth").write_text("\n".join(here) + "\n")

    def environment(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_CORE_") and k != "PYTHONPATH"}
        env.update({"XDG_CACHE_HOME": str(self.cache), "XDG_CONFIG_HOME": str(self.root / "config"), **extra})
        return env

    def probe(self, **extra: str) -> dict[str, Any]:
        done = subprocess.run(
            [str(self.python), "-c", PROBE],
            env=self.environment(**extra),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def pip(self, *args: str) -> None:
        command = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(self.python),
            "--no-input",
            "--disable-pip-version-check",
        ]
        done = subprocess.run(
            [*command, *args], env=self.environment(PIP_NO_INDEX="1"), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def age(self) -> None:
        """Set every file's modification time a minute back (installed a while ago)."""
        past = time.time() - 60
        for folder, _, files in os.walk(self.site):
            for name in [*files, "."]:
                os.utime(os.path.join(folder, name), (past, past))

    def cache_files(self) -> list[Path]:
        return sorted((self.cache / "llm-core").glob("discovery-*.json"))


def build(root: Path, version: str, identifier: str, *, editable: bool = False, entry: str = "main") -> Path:
    """A hatchling project ``cachetest-plugin`` at ``root`` and its wheel (or editable wheel)."""
    package = root / "src" / "cachetest_plugin"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(PLUGIN.format(identifier=identifier))
    (root / "pyproject.toml").write_text(
        textwrap.dedent(f"""
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "cachetest-plugin"
            version = "{version}"

            [project.entry-points.llm_core]
            {entry} = "cachetest_plugin"

            [tool.hatch.build.targets.wheel]
            packages = ["src/cachetest_plugin"]
            dev-mode-dirs = ["src"]  # an editable install is a .pth file naming src/
        """)
    )
    out = root / "dist"
    hook = "build_editable" if editable else "build_wheel"
    done = subprocess.run(
        [sys.executable, "-c", f"import hatchling.build as b; print(b.{hook}({str(out)!r}))"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def test_install_upgrade_and_removal_are_seen_at_once_and_unchanged_starts_use_the_cache(
    env: Env, tmp_path: Path
) -> None:
    env.age()
    assert env.probe()["scanned"], "no cache yet: the first start scans"
    second = env.probe()
    assert not second["scanned"], "nothing changed: the second start reads the cache"
    assert {"gemini", "openai"} <= set(second["providers"]) and "cachetest-one" not in second["providers"]

    env.pip("install", "--no-deps", str(build(tmp_path / "v1", "1.0", "cachetest-one")))
    installed = env.probe()
    assert installed["scanned"]
    assert installed["providers"]["cachetest-one"] == "cachetest-plugin"
    assert installed["plugins"]["cachetest-plugin"] == "1.0"
    env.age()
    env.probe()
    cached = env.probe()
    assert not cached["scanned"] and cached["plugins"]["cachetest-plugin"] == "1.0"

    env.pip("install", "--no-deps", "--upgrade", str(build(tmp_path / "v2", "2.0", "cachetest-two")))
    upgraded = env.probe()
    assert upgraded["scanned"]
    assert upgraded["plugins"]["cachetest-plugin"] == "2.0"
    assert "cachetest-two" in upgraded["providers"] and "cachetest-one" not in upgraded["providers"]

    env.pip("uninstall", "--yes", "cachetest-plugin")
    removed = env.probe()
    assert "cachetest-plugin" not in removed["plugins"] and "cachetest-two" not in removed["providers"]
    assert removed["errors"] == []
    assert len(env.cache_files()) == 1, "one cache file per environment, rewritten in place"


def test_a_reinstall_of_the_same_version_with_other_entry_points_is_seen(env: Env, tmp_path: Path) -> None:
    env.pip("install", "--no-deps", str(build(tmp_path / "a", "1.0", "cachetest-one")))
    env.age()
    env.probe()
    assert not env.probe()["scanned"]
    env.pip("install", "--no-deps", "--force-reinstall", str(build(tmp_path / "b", "1.0", "cachetest-other")))
    again = env.probe()
    assert "cachetest-other" in again["providers"] and "cachetest-one" not in again["providers"]


def test_editable_installs_follow_their_source_and_their_reinstalls(env: Env, tmp_path: Path) -> None:
    project = tmp_path / "editable"
    env.pip("install", "--no-deps", str(build(project, "1.0", "cachetest-edit", editable=True)))
    env.age()
    assert env.probe()["providers"]["cachetest-edit"] == "cachetest-plugin"
    cached = env.probe()
    assert not cached["scanned"] and "cachetest-edit" in cached["providers"]
    # The source changes: the module is imported from it, so the change shows with the cache in use.
    (project / "src" / "cachetest_plugin" / "__init__.py").write_text(PLUGIN.format(identifier="cachetest-renamed"))
    edited = env.probe()
    assert not edited["scanned"] and "cachetest-renamed" in edited["providers"]
    # The entry points change, which takes a re-install (as with any editable install).
    wheel = build(project, "1.0", "cachetest-renamed", editable=True, entry="second")
    env.pip("install", "--no-deps", "--force-reinstall", str(wheel))
    reinstalled = env.probe()
    assert reinstalled["scanned"]
    assert reinstalled["providers"]["cachetest-renamed"] == "cachetest-plugin"


def test_a_cache_folder_that_cannot_be_written_means_scanning(env: Env) -> None:
    env.age()
    blocked = env.root / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    for _ in range(2):
        run = env.probe(XDG_CACHE_HOME=str(blocked))
        assert run["scanned"] and {"gemini", "openai"} <= set(run["providers"])


def test_a_corrupt_cache_file_means_scanning_and_is_replaced(env: Env) -> None:
    env.age()
    env.probe()
    [cache] = env.cache_files()
    cache.write_text('{"format": 1, "key": [], "points": [{"bad')
    rescanned = env.probe()
    assert rescanned["scanned"] and {"gemini", "openai"} <= set(rescanned["providers"])
    assert not env.probe()["scanned"]


def test_the_switch_turns_the_cache_off(env: Env) -> None:
    env.age()
    for _ in range(2):
        assert env.probe(LLM_CORE_DISCOVERY_CACHE="0")["scanned"]
    assert env.cache_files() == []


def test_files_changed_within_the_racy_window_are_never_cached(env: Env, tmp_path: Path) -> None:
    env.pip("install", "--no-deps", str(build(tmp_path / "fresh", "1.0", "cachetest-fresh")))
    started = time.time()
    first, second = env.probe(), env.probe()
    if time.time() - started < RACY_SECONDS:  # both starts ran while pip's files were fresh
        assert first["scanned"] and second["scanned"]
        assert env.cache_files() == []
    assert "cachetest-fresh" in second["providers"]
