"""The four distributions are what a package index accepts: a real README as the long
description (absolute links only, so they work on PyPI), the LICENSE in wheel and sdist,
classifiers, project URLs, authors and keywords; and every lower bound is the pin of the
lowest-versions CI job (constraints/lowest.txt). Their project URLs agree with each other, and
every link into the repository names a file that exists."""

from __future__ import annotations

import email
import re
import tarfile
import zipfile
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = {
    "llm-core": ROOT / "core",
    "core-gemini-plugin": ROOT / "plugins/gemini",
    "core-openai-plugin": ROOT / "plugins/openai",
    "core-otel-plugin": ROOT / "plugins/otel",
}
REPOSITORY = "https://github.com/llm-core/llm-core"


@pytest.fixture(scope="module", params=sorted(PROJECTS))
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, build_distribution: Any
) -> tuple[str, Path, Path]:
    name = request.param
    out = tmp_path_factory.mktemp(name)
    project = PROJECTS[name]
    return name, build_distribution(project, out / "wheel"), build_distribution(project, out / "sdist", "sdist")


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        [path] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_string(archive.read(path).decode())


def test_wheel_and_sdist_carry_the_license(built: tuple[str, Path, Path]) -> None:
    _, wheel, sdist = built
    with zipfile.ZipFile(wheel) as archive:
        licenses = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert licenses and b"MIT License" in archive.read(licenses[0])
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(n.endswith("/LICENSE") for n in names) and any(n.endswith("/README.md") for n in names)


def test_metadata_is_complete(built: tuple[str, Path, Path]) -> None:
    name, wheel, _ = built
    meta = _metadata(wheel)
    assert meta["Name"] == name
    assert meta["License-Expression"] == "MIT"
    assert "llm-core authors" in meta["Author-email"]
    assert meta["Keywords"] and "llm" in meta["Keywords"].split(",")
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers and "Typing :: Typed" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())


def test_long_description_is_a_real_readme_with_absolute_links(built: tuple[str, Path, Path]) -> None:
    name, wheel, _ = built
    meta = _metadata(wheel)
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = meta.get_payload()
    assert isinstance(readme, str)
    assert readme.startswith(f"# {name}\n") and "\\n" not in readme
    assert len(readme.splitlines()) > 20 and "pip install" in readme
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert all(link.startswith("https://") for link in links), links


def test_lower_bounds_are_the_tested_lowest_pins() -> None:
    import tomllib

    pins = {}
    for line in (ROOT / "constraints/lowest.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            package, version = line.split("==")
            pins[package.strip()] = version.strip()
    bounds = {}
    for project in PROJECTS.values():
        data = tomllib.loads((project / "pyproject.toml").read_text())["project"]
        requirements = list(data["dependencies"])
        for extra in data.get("optional-dependencies", {}).values():
            requirements += extra
        for raw in requirements:
            requirement = Requirement(raw)
            if requirement.name in PROJECTS:
                continue
            [spec] = list(requirement.specifier)
            assert spec.operator == ">=", raw
            bounds[requirement.name] = spec.version
    assert {"pydantic", "pluggy", "tenacity", "google-genai", "openai"} <= set(bounds)
    assert bounds == pins


def _project_urls(project: Path) -> dict[str, str]:
    import tomllib

    urls: dict[str, str] = tomllib.loads((project / "pyproject.toml").read_text())["project"]["urls"]
    return urls


def test_project_urls_agree_and_point_at_the_repository() -> None:
    shared = {
        "Homepage": REPOSITORY,
        "Source": REPOSITORY,
        "Issues": f"{REPOSITORY}/issues",
        "Changelog": f"{REPOSITORY}/releases",
    }
    for name, project in PROJECTS.items():
        urls = _project_urls(project)
        assert set(urls) == {*shared, "Documentation"}, name
        assert {k: urls[k] for k in shared} == shared, name
        page = urls["Documentation"].removeprefix(f"{REPOSITORY}/blob/main/")
        assert page != urls["Documentation"] and (ROOT / page).is_file(), (name, urls["Documentation"])


@pytest.mark.parametrize("readme", ["README.md", *(f"{p.relative_to(ROOT)}/README.md" for p in PROJECTS.values())])
def test_links_into_the_repository_name_files_that_exist(readme: str) -> None:
    text = (ROOT / readme).read_text(encoding="utf-8")
    for link in re.findall(r"https://github\.com/llm-core/llm-core[^\s)>\]]*", text):
        assert link == REPOSITORY or link.startswith((f"{REPOSITORY}/blob/main/", f"{REPOSITORY}/issues")), link
        path = link.removeprefix(f"{REPOSITORY}/blob/main/").split("#")[0]
        if path != link:
            assert (ROOT / path).exists(), f"{readme} links to {link}: no {path} in the repository"
