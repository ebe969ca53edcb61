"""The code in the docs runs as written, offline. Pages are found by glob (README.md and every
docs/*.md), so a new page is covered without a change here.

- Every ``python`` block of every page runs. The blocks of a page run in order in one namespace
  (as a reader types them into one session), in a temporary working directory, with no API key,
  no config file and a fresh registry. A top-level ``await`` runs as in ``python -m asyncio``.
  A page states how its calls are answered with a marker, next to a sentence that tells the
  reader the same:

  - ``<!-- docs-test: test-provider -->``: inside ``get_registry().override(TestProvider())``;
  - ``<!-- docs-test: replay -->``: through the real plugins and SDKs, answered from the
    repository's cassettes exactly as ``llm-core --replay cassettes`` answers them;
  - ``<!-- docs-test: own-process -->``: as a script in a fresh interpreter (for pages that set
    process-wide state, such as OpenTelemetry's global tracer provider);
  - ``<!-- docs-test: run-by tests/PATH.py -->``: that test runs the page's blocks (it needs a
    server of its own, e.g. the batch API's); this module checks it exists and reads the page;
  - no marker: the blocks set up what they need themselves (a ``TestProvider``, a fake, ...).

  On a replay page, ``<!-- docs-test: replay cassettes/A.json [cassettes/B.json ...] -->`` on the
  line before a block answers that block from the named cassettes alone: for a request that the
  repository also recorded failing (a blocked decision, a 429 before the answer), or one sent to
  a local server (which ``--replay`` leaves alone).
- Every TOML block parses, and each ``[providers.NAME]`` table in it holds only keys that
  provider declares (the check a real config file gets).
- Every ``llm-core ...`` line of a shell block is a valid command line for the real parser, and
  every ``bash scripts/...`` line names a script that exists. The lines of docs/cli.md and
  README.md that need no key, no terminal and no network (see ``RUNS_OFFLINE``) also run, and
  must exit 0.
- Every block is tagged with a language, so none is skipped by accident.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_core.cli.main import main as cli_main
from llm_core.cli.parser import build_parser, with_default_command
from llm_core.cli.replay import PLACEHOLDER_KEY, replaying
from llm_core.config import check_section, declared_settings
from llm_core.registry import get_registry, reset_registry
from llm_core.testing import TestProvider
from llm_core.testing.cassettes import use_cassette

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```([\w-]*)\n(.*?)^```", re.M | re.S)
_PYTHON = re.compile(r"(?:^<!-- docs-test: replay ([^>]+?) -->\n)?^```python\n(.*?)^```", re.M | re.S)
_MODE = re.compile(r"^<!-- docs-test: ([\w-]+)(?: \S+)? -->\n(?!```)", re.M)  # a page's; a block's is on its fence
_RUN_BY = re.compile(r"<!-- docs-test: run-by (\S+) -->")
MODES = ("test-provider", "replay", "own-process", "run-by")
#: Environment that would make a sample depend on the machine it runs on.
_MACHINE_ENV = re.compile(r"^(LLM_CORE_.*|.*_API_KEY|OPENAI_BASE_URL|GOOGLE_GEMINI_BASE_URL|XDG_CONFIG_HOME)$")
#: ``llm-core`` commands of the docs that run offline without a key or a terminal.
RUNS_OFFLINE = {"providers", "route", "models", "aliases", "plugins", "logs", "keys", "completion", "config"}


def text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def blocks(page: str, language: str) -> list[str]:
    return [code for lang, code in _BLOCK.findall(text(page)) if lang == language]


def mode(page: str) -> str | None:
    found = _MODE.findall(text(page))
    assert len(found) <= 1, f"{page}: more than one docs-test marker"
    assert not found or found[0] in MODES, f"{page}: unknown docs-test marker {found[0]!r}"
    return found[0] if found else None


@pytest.fixture
def offline_session(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A reader's fresh session on a machine with no key and no config: a new registry, an
    empty config dir and a scratch working directory."""
    for name in list(os.environ):
        if _MACHINE_ENV.match(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    reset_registry()
    yield work
    reset_registry()


@contextlib.contextmanager
def replaying_only(cassettes: str, tmp_path: Path) -> Iterator[None]:
    """The named cassettes, merged, replayed like ``--replay`` does, local servers included."""
    merged = {"version": 1, "interactions": []}
    for name in cassettes.split():
        merged["interactions"] += json.loads((ROOT / name).read_text(encoding="utf-8"))["interactions"]
    target = tmp_path / "block-cassette.json"
    target.write_text(json.dumps(merged), encoding="utf-8")
    placeholders = {  # as --replay sets them: a provider built in the block needs no real key
        spec.credential_env[0]: PLACEHOLDER_KEY
        for spec in get_registry().providers()
        if spec.credential_env and not spec.credentials_present()
    }
    with use_cassette(target, mode="none", allow_playback_repeats=True), _environment(placeholders):
        yield


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_block(code: str, name: str, namespace: dict[str, Any]) -> None:
    compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if compiled.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(compiled, namespace))
    else:
        exec(compiled, namespace)


def run_page(page: str, tmp_path: Path) -> None:
    """Run the page's python blocks in order, in one namespace, each answered as the page says."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    page_mode = mode(page)
    for index, (cassette, code) in enumerate(_PYTHON.findall(text(page))):
        assert not cassette or page_mode == "replay", f"{page}: a block replays {cassette} on a page that does not"
        with contextlib.ExitStack() as stack:
            if cassette:
                stack.enter_context(replaying_only(cassette, tmp_path))
            elif page_mode == "replay":
                stack.enter_context(replaying(CASSETTES))
            elif page_mode == "test-provider":
                stack.enter_context(get_registry().override(TestProvider()))
            run_block(code, f"{page} (python block {index + 1})", namespace)


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python") and mode(p) != "run-by"])
@pytest.mark.filterwarnings("ignore:The generate_images method is deprecated")  # Imagen, docs/gemini.md
def test_python_blocks_run(page: str, offline_session: Path, tmp_path: Path) -> None:
    if mode(page) == "own-process":
        done = subprocess.run(
            [sys.executable, __file__, page, str(tmp_path)],
            cwd=offline_session,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"{page}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    else:
        run_page(page, tmp_path)


@pytest.mark.parametrize("page", [p for p in PAGES if mode(p) == "run-by"])
def test_pages_run_elsewhere_name_a_test_that_runs_them(page: str) -> None:
    test = ROOT / _RUN_BY.findall(text(page))[0]
    assert test.is_file(), f"{page} names {test}, which does not exist"
    assert Path(page).name in test.read_text(encoding="utf-8"), f"{test} does not read {page}"


@pytest.mark.parametrize("page", PAGES)
def test_every_block_names_its_language(page: str) -> None:
    untagged = [code.splitlines()[0] if code else "" for lang, code in _BLOCK.findall(text(page)) if not lang]
    assert not untagged, f"{page}: blocks without a language (```python, ```bash, ```text, ...): {untagged}"


def _provider_classes() -> dict[str, type]:
    registry = get_registry()
    return {
        spec.identifier: type(registry.get(spec.identifier, api_key="not-a-real-key")) for spec in registry.providers()
    }


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "toml")])
def test_toml_blocks_parse_and_use_declared_keys(page: str) -> None:
    classes = _provider_classes()
    for code in blocks(page, "toml"):
        data = tomllib.loads(code)
        for identifier, table in data.get("providers", {}).items():
            if identifier in classes:  # a third-party example (e.g. acme) is not installed here
                check_section(
                    identifier,
                    {k: v for k, v in table.items() if not isinstance(v, dict)},
                    declared_settings(classes[identifier]),
                )


def _command_lines(page: str) -> list[list[str]]:
    """The words of each command of the page's shell blocks (the last command of a pipe, without
    redirections and comments)."""
    commands = []
    for code in blocks(page, "bash"):
        for raw in code.splitlines():
            line = raw.split(" #")[0].strip()
            words = shlex.split(line.split("|")[-1].split(">")[0]) if line else []
            while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):  # VAR=value command ...
                words = words[1:]
            if words:
                commands.append(words)
    return commands


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "bash")])
def test_shell_lines_are_valid_commands(page: str) -> None:
    parser = build_parser()
    for words in _command_lines(page):
        if words[0] == "llm-core":
            # argparse exits (fails the test) on a bad command line; `llm-core PROMPT` is `prompt`
            parser.parse_args(with_default_command(words[1:], parser.commands))
        elif words[0] == "bash" and len(words) > 1:
            assert (ROOT / words[1]).is_file(), " ".join(words)


def _runs_offline(words: list[str]) -> bool:
    args = [w for w in words[1:] if not w.startswith("-")]
    return bool(args) and (args[0] in RUNS_OFFLINE or " ".join(args[:2]) in RUNS_OFFLINE)


@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
@pytest.mark.usefixtures("offline_session")
def test_offline_commands_run(page: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader without a key can paste these lines; replay lines read the repository's cassettes.
    ``keys set`` reads the key from piped stdin (as documented), into the session's config dir:
    never the machine's keyring."""
    monkeypatch.setenv("LLM_CORE_KEYRING", "0")
    monkeypatch.setattr(sys, "stdin", io.StringIO("not-a-real-key\n" * 10))
    ran = []
    for words in _command_lines(page):
        if words[0] != "llm-core" or not (_runs_offline(words) or "--replay" in words):
            continue
        args = [str(CASSETTES) if previous == "--replay" else w for previous, w in itertools.pairwise(words)]
        code = cli_main(args)
        captured = capsys.readouterr()
        assert code == 0, f"{page}: `{' '.join(words)}` exited {code}: {captured.err[-2000:]}"
        ran.append(" ".join(words))
    assert ran, f"{page}: no offline llm-core command found"


if __name__ == "__main__":  # the own-process pages: python test_code_blocks.py PAGE TMP_DIR
    run_page(sys.argv[1], Path(sys.argv[2]))
