"""Scaffold tests: a wheelhouse built from this environment, so that fresh venvs install offline.

Every distribution the fresh venv needs (hatchling to build, llm-core's and the generated
plugin's dependencies, pytest) is repacked from the running environment into a wheel: pip then
installs with ``--no-index --find-links`` and never touches the network, with exactly the versions
the rest of the suite runs on. Only llm-core itself and the generated plugin are built from source.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import os
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
#: Files of an installed distribution that are not part of its wheel.
_INSTALL_ONLY = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def project_requirements(pyproject: Path, extras: Iterable[str] = ()) -> list[str]:
    """``dependencies`` plus the named optional dependencies of a ``pyproject.toml``."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    found = list(project.get("dependencies", []))
    for extra in extras:
        found.extend(project.get("optional-dependencies", {}).get(extra, []))
    return found


def closure(requirements: Iterable[str], *, skip: Iterable[str] = ()) -> list[metadata.Distribution]:
    """The installed distributions that ``requirements`` need, transitively (markers honoured)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    skipped = {canonicalize_name(name) for name in skip}
    found: dict[str, metadata.Distribution] = {}
    pending = [Requirement(r) for r in requirements]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in skipped:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise RuntimeError(
                f"{requirement.name} is needed to build a fresh venv offline but is not installed here "
                "(pip install it into the development environment)"
            ) from None
        extras = set(requirement.extras)
        key = f"{name}[{','.join(sorted(extras))}]"
        if key in found:
            continue
        found[key] = dist
        for raw in dist.requires or ():
            sub = Requirement(raw)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras | {""}):
                pending.append(sub)
    unique = {canonicalize_name(d.metadata["Name"]): d for d in found.values()}
    return [unique[name] for name in sorted(unique)]


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _installed_files(dist: metadata.Distribution) -> Iterator[tuple[str, bytes]]:
    for file in dist.files or ():
        parts = Path(file).parts
        if parts[0] == ".." or "__pycache__" in parts or file.suffix == ".pyc":
            continue  # scripts are regenerated from entry points; bytecode is rebuilt
        if parts[0].endswith(".dist-info") and file.name in _INSTALL_ONLY:
            continue
        location = Path(str(dist.locate_file(file)))
        if location.is_file():
            yield str(Path(file).as_posix()), location.read_bytes()


def repack(dist: metadata.Distribution, wheelhouse: Path) -> Path:
    """A wheel of an installed distribution, with the tag it was installed from."""
    from packaging.utils import canonicalize_name

    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    files = list(_installed_files(dist))
    info_dir = next(path.split("/")[0] for path, _ in files if path.split("/")[0].endswith(".dist-info"))
    wheel_meta = next(data for path, data in files if path == f"{info_dir}/WHEEL").decode()
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    target = wheelhouse / f"{name}-{dist.version}-{tags[0]}.whl"
    records = [_record_line(path, data) for path, data in files]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for path, data in files:
            wheel.writestr(path, data)
        wheel.writestr(f"{info_dir}/RECORD", "\n".join([*records, f"{info_dir}/RECORD,,"]) + "\n")
    return target


def build_wheelhouse(requirements: Iterable[str], wheelhouse: Path, *, skip: Iterable[str] = ()) -> list[Path]:
    wheelhouse.mkdir(parents=True, exist_ok=True)
    return [repack(dist, wheelhouse) for dist in closure(requirements, skip=skip)]


@pytest.fixture(scope="session")
def core_requirements() -> list[str]:
    """What llm-core needs at run time and for replaying cassettes."""
    return project_requirements(CORE / "pyproject.toml", extras=["replay"])


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, core_requirements: list[str]) -> Path:
    """Wheels of everything a fresh venv needs besides llm-core and the generated plugin."""
    from llm_core.cli.scaffold import write_plugin

    probe = write_plugin("probe", tmp_path_factory.mktemp("probe"))
    requirements = [
        "hatchling",
        "pytest",
        *core_requirements,
        *project_requirements(probe / "pyproject.toml", extras=["test"]),
    ]
    house = tmp_path_factory.mktemp("wheelhouse")
    build_wheelhouse(requirements, house, skip=["llm-core"])
    return house


class FreshVenv:
    """A venv without system site packages; pip installs into it from the wheelhouse only."""

    def __init__(self, path: Path, wheelhouse: Path, env: dict[str, str]) -> None:
        self.path = path
        self.wheelhouse = wheelhouse
        self.env = env
        self.python = path / "bin" / "python"
        own_pip = _pip_can_target_other_interpreters()
        create = [sys.executable, "-m", "venv", str(path)] + ([] if not own_pip else ["--without-pip"])
        subprocess.run(create, check=True, env=env, capture_output=True)
        # The running pip installs into the venv (``--python``): no pip bootstrap in the venv.
        self._pip = (
            [sys.executable, "-m", "pip", "--python", str(self.python)] if own_pip else [str(self.python), "-m", "pip"]
        )

    def bin(self, name: str) -> str:
        return str(self.path / "bin" / name)

    def pip_install(self, *targets: str, build_isolation: bool = False) -> None:
        command = [*self._pip, "install", "--no-index", "--find-links", str(self.wheelhouse), "--quiet"]
        if not build_isolation:
            command.append("--no-build-isolation")
        result = subprocess.run([*command, *targets], env=self.env, capture_output=True, text=True)
        assert result.returncode == 0, f"pip install {' '.join(targets)} failed:\n{result.stdout}\n{result.stderr}"

    def run(self, *command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), env=self.env, capture_output=True, text=True, cwd=cwd)


def _pip_can_target_other_interpreters() -> bool:
    """pip >= 22.3 has ``--python``."""
    try:
        version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        return False
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) >= (22, 3)


def new_venv(tmp_path: Path, wheelhouse: Path) -> FreshVenv:
    """A fresh venv (installing from ``wheelhouse``) with hatchling, the build backend; nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "LLM_CORE_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        HOME=str(tmp_path / "home"),
    )
    for name in list(env):
        if name.endswith(("_API_KEY", "_BASE_URL")):
            env.pop(name)
    venv = FreshVenv(tmp_path / "venv", wheelhouse, env)
    venv.pip_install("hatchling", build_isolation=True)
    return venv


@pytest.fixture
def fresh_venv(tmp_path: Path, wheelhouse: Path) -> FreshVenv:
    """A fresh venv with hatchling (the build backend) installed; nothing else."""
    return new_venv(tmp_path, wheelhouse)


#: The three distributions, and the extras the wheels test installs with llm-core.
PROJECTS = [ROOT / "core", ROOT / "plugins" / "gemini", ROOT / "plugins" / "openai"]
EXTRAS = ["replay", "cli"]


def build(project: Path, out: Path, target: str = "wheel") -> Path:
    """``project``'s wheel (or ``target="sdist"``: its sdist), built by hatchling into ``out``."""
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", target, "-d", str(out)],
        cwd=project,
        check=True,
        capture_output=True,
        timeout=120,
    )
    [built] = [p for p in out.iterdir() if p.name.endswith(".whl" if target == "wheel" else ".tar.gz")]
    return built


@pytest.fixture(scope="session")
def build_distribution() -> Callable[..., Path]:
    """:func:`build`, for the tests of this folder."""
    return build


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("wheels")
    return sorted(build(project, out / project.name) for project in PROJECTS)


@pytest.fixture(scope="module")
def wheels_venv(tmp_path_factory: pytest.TempPathFactory, wheels: list[Path]) -> FreshVenv:
    requirements = ["hatchling", "pytest", *project_requirements(ROOT / "core" / "pyproject.toml", EXTRAS)]
    for plugin in PROJECTS[1:]:
        requirements += project_requirements(plugin / "pyproject.toml")
    house = tmp_path_factory.mktemp("plugin-wheelhouse")
    build_wheelhouse(requirements, house, skip=["llm-core", "core-gemini-plugin", "core-openai-plugin"])
    for wheel in wheels:
        (house / wheel.name).write_bytes(wheel.read_bytes())
    fresh = new_venv(tmp_path_factory.mktemp("venv-wheels"), house)
    [core] = [w for w in wheels if w.name.startswith("llm_core-")]
    fresh.pip_install(f"{core}[{','.join(EXTRAS)}]", *[str(w) for w in wheels if w != core])
    return fresh


@pytest.fixture(scope="session")
def plugin_wheelhouse(wheelhouse: Path) -> Path:
    """The wheelhouse plus what the shipped Gemini and OTel plugins need (with the OTel SDK)."""
    plugins = ROOT / "plugins"
    requirements = [
        *project_requirements(plugins / "gemini" / "pyproject.toml"),
        *project_requirements(plugins / "otel" / "pyproject.toml"),
        "opentelemetry-sdk",
    ]
    build_wheelhouse(requirements, wheelhouse, skip=["llm-core"])
    return wheelhouse
