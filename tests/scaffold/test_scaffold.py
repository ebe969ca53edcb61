"""``llm-core new-plugin``: the names it derives, the files it writes, and that the generated
project is lint- and type-clean and passes its own tests (here, in the development environment;
test_fresh_venv.py installs it for real)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

import llm_core
from llm_core.cli.main import main
from llm_core.cli.scaffold import PluginNames, render, template_files, write_plugin

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
CASSETTE_TEMPLATES = ROOT / "core" / "src" / "llm_core" / "cli" / "templates" / "plugin" / "cassettes" / "conformance"

EXPECTED_FILES = {
    ".gitignore",
    "README.md",
    "pyproject.toml",
    "src/{package}/__init__.py",
    "src/{package}/py.typed",
    "src/{package}/plugin.py",
    "src/{package}/provider.py",
    "src/{package}/request_mapper.py",
    "src/{package}/response_parser.py",
    "src/{package}/stream_parser.py",
    "src/{package}/errors.py",
    "tests/conftest.py",
    "tests/test_conformance.py",
    "tests/test_plugin.py",
    *(
        f"cassettes/conformance/{name}.json"
        for name in (
            "models",
            "chat",
            "error",
            "stream",
            "stream_error",
            "tools",
            "tool_loop",
            "json",
            "vision",
            "embeddings",
            "decision",
        )
    ),
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("acme", ("acme", "llm-core-acme", "llm_core_acme", "AcmeProvider", "Acme", "ACME", "acme")),
        (
            "Acme-AI",
            ("acme-ai", "llm-core-acme-ai", "llm_core_acme_ai", "AcmeAiProvider", "Acme Ai", "ACME_AI", "acme-ai"),
        ),
        ("llm-core-acme", ("acme", "llm-core-acme", "llm_core_acme", "AcmeProvider", "Acme", "ACME", "acme")),
        (
            "my_llm2",
            ("my_llm2", "llm-core-my-llm2", "llm_core_my_llm2", "MyLlm2Provider", "My Llm2", "MY_LLM2", "my-llm2"),
        ),
    ],
)
def test_names_are_derived_from_the_provider_name(name: str, expected: tuple[str, ...]) -> None:
    names = PluginNames.from_name(name)
    assert (
        names.identifier,
        names.dist,
        names.package,
        names.class_name,
        names.display_name,
        names.env_prefix,
        names.host,
    ) == expected


@pytest.mark.parametrize("name", ["", "1acme", "ac me", "acme!", "acme-", "a--b", "llm-core-", "x" * 41])
def test_invalid_names_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="plugin name"):
        write_plugin(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_it_writes_a_complete_project(tmp_path: Path) -> None:
    project = write_plugin("acme", tmp_path)
    assert project == tmp_path / "llm-core-acme"
    written = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    assert written == {f.format(package="llm_core_acme") for f in EXPECTED_FILES}
    for path in project.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(encoding="utf-8"), path
    for cassette in (project / "cassettes" / "conformance").glob("*.json"):
        data = json.loads(cassette.read_text(encoding="utf-8"))
        uris = {i["request"]["uri"] for i in data["interactions"]}
        assert all(uri.startswith("https://api.acme.example/v1/") for uri in uris), uris
        assert "test-key" not in cassette.read_text(encoding="utf-8")
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.llm_core]\nacme = "llm_core_acme.plugin"' in pyproject
    assert f'"llm-core>={llm_core.__version__}"' in pyproject


def test_it_never_overwrites_a_project(tmp_path: Path) -> None:
    (tmp_path / "llm-core-acme").mkdir()
    write_plugin("acme", tmp_path)  # an empty folder is fine
    readme = tmp_path / "llm-core-acme" / "README.md"
    readme.write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="already exists and is not empty"):
        write_plugin("acme", tmp_path)
    assert readme.read_text(encoding="utf-8") == "mine"


def test_the_cli_command_writes_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-plugin", "acme", "--dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"path": str(tmp_path / "llm-core-acme")}
    assert main(["new-plugin", "acme", "--dir", str(tmp_path), "--json"]) != 0
    assert "already exists" in json.loads(capsys.readouterr().out)["message"]


def test_placeholders_must_be_known() -> None:
    assert render("{{ identifier }}-{{identifier}}", {"identifier": "acme"}) == "acme-acme"
    with pytest.raises(KeyError, match="nope"):
        render("{{ nope }}", {})
    with pytest.raises(ValueError, match="line 2"):
        render("fine\n{{ Bad-Token }}", {})


def test_every_template_renders() -> None:
    values = PluginNames.from_name("acme").values()
    rendered = {path: render(source.read_text(encoding="utf-8"), values) for path, source in template_files()}
    assert PurePosixPath("src/_package_/plugin.py.tmpl") in rendered
    assert len(rendered) == len(EXPECTED_FILES)


def test_the_public_names_are_visible_to_type_checkers() -> None:
    """The generated code imports from ``llm_core``; mypy needs a literal ``__all__``."""
    assert llm_core.__all__ == sorted(llm_core._EXPORTS)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("generated")
    return {name: write_plugin(name, base) for name in ("acme", "my_llm")}


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``command`` without the developer's llm-core settings; a ``PYTHONPATH`` given is followed
    by this tree's llm-core, so the generated tests run the kit under test."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_CORE_", "PYTHONPATH"))}
    if "PYTHONPATH" in env:
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(ROOT / "core" / "src")])
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**environment, **env})


def test_generated_code_is_lint_clean(generated: dict[str, Path]) -> None:
    rules = "E,F,W,I,B,UP,SIM,RUF,A,BLE,PT,C4,PIE,RET"
    for project in generated.values():
        common = ["--isolated", "--line-length", "120", "--target-version", "py311"]
        lint = _run([str(VENV_BIN / "ruff"), "check", *common, "--select", rules, "."], project)
        assert lint.returncode == 0, lint.stdout
        fmt = _run([str(VENV_BIN / "ruff"), "format", "--check", *common, "."], project)
        assert fmt.returncode == 0, fmt.stdout


def test_generated_code_is_strictly_typed(generated: dict[str, Path], tmp_path: Path) -> None:
    project = generated["my_llm"]
    checked = _run(
        [str(VENV_BIN / "mypy"), "--strict", "--cache-dir", str(tmp_path / "mypy"), "-p", "llm_core_my_llm"],
        project / "src",
    )
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("name", ["acme", "my_llm"])
def test_generated_tests_pass_on_the_shipped_cassettes(generated: dict[str, Path], name: str) -> None:
    project = generated[name]
    result = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not installed", "-W", "ignore"],
        project,
        PYTHONPATH=str(project / "src"),
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "8 skipped" in result.stdout.splitlines()[-1]


#: The generated parser's token accounting, and the mistake it replaced: the API's
#: completion_tokens include the reasoning tokens, which are also reported as thinking tokens.
RIGHT_COUNT = "completion_tokens=completion - (reasoning or 0),"
DOUBLE_COUNT = "completion_tokens=completion,"


def test_a_plugin_that_counts_thinking_twice_fails_the_kit(tmp_path: Path) -> None:
    """The shipped chat cassette comes from a reasoning model; a parser that leaves the reasoning
    tokens in completion_tokens fails the kit's token arithmetic, naming the rule."""
    project = write_plugin("acme", tmp_path)
    parser = project / "src" / "llm_core_acme" / "response_parser.py"
    source = parser.read_text(encoding="utf-8")
    assert source.count(RIGHT_COUNT) == 1
    parser.write_text(source.replace(RIGHT_COUNT, DOUBLE_COUNT), encoding="utf-8")
    result = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", "tests/test_conformance.py"],
        project,
        PYTHONPATH=str(project / "src"),
    )
    lines = result.stdout.splitlines()
    failed = sorted(line.split("::")[-1].split(" ")[0] for line in lines if line.startswith("FAILED"))
    assert failed == ["test_chat_response", "test_chat_sync_and_async_agree", "test_complete_matches_chat"], (
        result.stdout[-4000:]
    )
    assert (
        "acme: chat_completion counts 21 prompt + 73 completion + 64 thinking = 158 tokens, more than its total "
        "of 94: completion_tokens must exclude the thinking tokens"
    ) in result.stdout


def test_shipped_cassettes_are_what_the_author_script_writes(tmp_path: Path) -> None:
    """The cassettes match the generated request mapper and the kit's inputs: re-authoring them
    (python -m tests.scaffold.author_cassettes) changes nothing."""
    result = _run([sys.executable, "-m", "tests.scaffold.author_cassettes", str(tmp_path)], ROOT)
    assert result.returncode == 0, result.stderr
    fresh = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("*.json.tmpl")}
    shipped = {p.name: p.read_text(encoding="utf-8") for p in CASSETTE_TEMPLATES.glob("*.json.tmpl")}
    assert fresh == shipped, "cassette templates are stale: run python -m tests.scaffold.author_cassettes"
