"""CLI tests run the installed ``llm-core`` entry point against test plugins that are real
distributions (a ``*.dist-info`` with an ``llm_core`` entry point on ``PYTHONPATH``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

FAKE_PLUGIN = """
from llm_core import hookimpl
from llm_core.testing.fake import fake_spec


def make(**config):
    from llm_core.testing.fake import FakeProvider, FakeReply
    from llm_core.tools import ToolCall

    return FakeProvider(default_reply=FakeReply(
        content="The answer is 4.", thinking="2 and 2 make 4.",
        tool_calls=None), **config)


@hookimpl
def llm_core_register_providers(register):
    spec = fake_spec("fake")
    register(type(spec)(spec.identifier, spec.name, spec.features, "cliplug:make", spec.models,
                        spec.default_model, requires_credentials=False))
    keyed = fake_spec("keyed", requires_credentials=True, credential_env=["KEYED_TEST_API_KEY"])
    register(keyed)
"""

BROKEN_PLUGIN = "raise RuntimeError('this plugin is broken on purpose')\n"


def _dist(root: Path, name: str, module: str, source: str) -> None:
    info = root / f"{name.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[llm_core]\n{module} = {module}\n")
    (root / f"{module}.py").write_text(source)


@pytest.fixture(scope="session")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-plugins")
    _dist(root, "cli-test-plugin", "cliplug", FAKE_PLUGIN)
    _dist(root, "broken-test-plugin", "brokenplug", BROKEN_PLUGIN)
    return root


@pytest.fixture(scope="session")
def entry_point() -> str:
    script = Path(sys.executable).parent / "llm-core"
    assert script.exists(), "the llm-core console script is not installed"
    return str(script)


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(plugin_path: Path, entry_point: str, tmp_path: Path) -> Run:
    def invoke(
        *args: str, plugins: str = "cli-test-plugin", env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        environment = {
            k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_CORE_")
        }
        environment.update(
            {
                # the test plugins first, then the sources the tests themselves import
                "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin_path), os.environ.get("PYTHONPATH")])),
                "LLM_CORE_PLUGINS": plugins,
                "LLM_CORE_CONFIG": "",
                "XDG_CONFIG_HOME": str(tmp_path),
            }
        )
        environment.update(env or {})
        return subprocess.run(
            [entry_point, *args],
            capture_output=True,
            text=True,
            env=environment,
            input=stdin,
            timeout=60,
            cwd=tmp_path,
            check=False,
        )

    return invoke
