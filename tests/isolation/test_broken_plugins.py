"""Broken plugin distributions next to the real ones: discovery goes on, each problem is reported
with its distribution's name, and strict mode (``LLM_CORE_STRICT_PLUGINS=1``) makes it fatal.

The broken plugins are real distributions (``*.dist-info`` with an ``llm_core`` entry point) on
``sys.path``, found by the normal entry-point scan together with the installed Gemini and OpenAI
plugins, which keep working against the loopback server.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_core.errors import DuplicateProviderError, PluginLoadError
from llm_core.registry import Registry
from tests.reliability.fault_server import FaultServer
from tests.reliability.fault_targets import GEMINI, OPENAI

BROKEN: dict[str, tuple[str, str, str]] = {
    # distribution: (module source, stage, what the report must say)
    "aaa-broken-import": ("raise ImportError(\"No module named 'acme_sdk'\")\n", "import", "acme_sdk"),
    "bbb-raising-hook": (
        """
        from llm_core import hookimpl

        @hookimpl
        def llm_core_register_providers(register):
            raise RuntimeError("the hook exploded")
        """,
        "register",
        "the hook exploded",
    ),
    "ccc-invalid-spec": (
        """
        from llm_core import hookimpl, ProviderSpec

        @hookimpl
        def llm_core_register_providers(register):
            register(ProviderSpec(identifier="Bad Name", name="Bad", features=["chat"], factory="x.y:Z"))
        """,
        "register",
        "must match",
    ),
    "ddd-not-a-spec": (
        """
        from llm_core import hookimpl

        @hookimpl
        def llm_core_register_providers(register):
            register({"identifier": "dict-spec"})
        """,
        "register",
        "takes a ProviderSpec",
    ),
    "eee-taken-identifier": (
        """
        from llm_core import hookimpl, ProviderSpec

        @hookimpl
        def llm_core_register_providers(register):
            register(ProviderSpec(identifier="gemini", name="Not Gemini", features=["chat"],
                                  factory="llm_core.testing.fake:FakeProvider", requires_credentials=False))
        """,
        "duplicate",
        "already registered by 'core-gemini-plugin'",
    ),
    "eef-twice-registered": (
        """
        from llm_core import hookimpl, ProviderSpec

        @hookimpl
        def llm_core_register_providers(register):
            for name in ("Twice", "Twice again"):
                register(ProviderSpec(identifier="twice", name=name, features=["chat"],
                                      factory="llm_core.testing.fake:FakeProvider", requires_credentials=False))
        """,
        "duplicate",
        "'twice' was registered 2 times by this plugin",
    ),
}

WORKING: dict[str, str] = {
    "fff-missing-factory": """
        from llm_core import hookimpl, ProviderSpec

        @hookimpl
        def llm_core_register_providers(register):
            register(ProviderSpec(identifier="ghost", name="Ghost", features=["chat"],
                                  factory="ghost_provider_not_installed:GhostProvider", requires_credentials=False))
        """,
    "ggg-good-plugin": """
        from llm_core import hookimpl
        from llm_core.testing.fake import fake_spec

        @hookimpl
        def llm_core_register_providers(register):
            spec = fake_spec("goodfake")
            register(type(spec)(spec.identifier, spec.name, spec.features, "llm_core.testing.fake:FakeProvider",
                                spec.models, spec.default_model, requires_credentials=False))
        """,
    "hhh-undeclared-feature": """
        from llm_core import hookimpl, ProviderSpec, BaseProvider

        class ChatOnly(BaseProvider):
            pass

        @hookimpl
        def llm_core_register_providers(register):
            register(ProviderSpec(identifier="overclaim", name="Overclaim", features=["chat", "embeddings"],
                                  factory=f"{__name__}:ChatOnly", requires_credentials=False))
        """,
}

REAL = ("core-gemini-plugin", "core-openai-plugin")


def _module(distribution: str) -> str:
    return "isoplug_" + distribution.replace("-", "_")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("isolation-site")
    for distribution, source in {**{d: s for d, (s, _, _) in BROKEN.items()}, **WORKING}.items():
        module = _module(distribution)
        (root / f"{module}.py").write_text(textwrap.dedent(source))
        info = root / f"{distribution.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[llm_core]\nmain = {module}\n")
    return root


@pytest.fixture
def on_path(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    for name in list(sys.modules):
        if name.startswith("isoplug_"):
            del sys.modules[name]


def test_discovery_goes_on_and_reports_each_problem_with_its_distribution(on_path: Path) -> None:
    registry = Registry.discover(strict=False)
    identifiers = {spec.identifier for spec in registry.providers()}
    assert {"gemini", "openai", "goodfake", "ghost", "overclaim"} <= identifiers
    assert registry.spec("gemini").distribution == "core-gemini-plugin", "the first claim keeps the identifier"
    loaded = {p.distribution for p in registry.plugins}
    assert set(REAL) | set(WORKING) <= loaded
    reported = {e.distribution: e for e in registry.plugin_errors}
    assert set(reported) == set(BROKEN), [str(e) for e in registry.plugin_errors]
    for distribution, (_, stage, detail) in BROKEN.items():
        error = reported[distribution]
        assert error.stage == stage
        assert str(error).startswith(f"{distribution} ({stage}): ")
        assert detail in str(error)
    assert isinstance(reported["eee-taken-identifier"].error, DuplicateProviderError)
    assert isinstance(reported["eef-twice-registered"].error, DuplicateProviderError)
    assert registry.spec("twice").name == "Twice", "a plugin's first registration of an identifier is kept"


@pytest.mark.parametrize("distribution", list(BROKEN))
def test_strict_mode_makes_each_problem_fatal(
    on_path: Path, distribution: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_CORE_STRICT_PLUGINS", "1")
    monkeypatch.setenv("LLM_CORE_PLUGINS", f"{distribution},core-gemini-plugin")
    with pytest.raises(PluginLoadError) as caught:
        Registry.discover()
    assert distribution in str(caught.value)
    assert BROKEN[distribution][2] in str(caught.value)


def test_strict_mode_without_problems_is_quiet(on_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_CORE_STRICT_PLUGINS", "1")
    monkeypatch.setenv("LLM_CORE_PLUGINS", ",".join([*REAL, *WORKING]))
    registry = Registry.discover()
    assert registry.plugin_errors == []


def test_the_real_plugins_and_the_good_one_still_work(on_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = Registry.discover(strict=False)
    assert registry.get("goodfake").chat_completion("ping").content == "echo: ping"
    for target in (GEMINI, OPENAI):
        with FaultServer(target.upstream) as server:
            provider = registry.get(target.name, api_key="test-key", base_url=server.url + target.base_suffix)
            assert provider.chat_completion("ping").content == "echo: ping"


def test_a_provider_that_cannot_be_built_names_its_distribution(on_path: Path) -> None:
    registry = Registry.discover(strict=False)
    with pytest.raises(PluginLoadError) as missing:
        registry.get("ghost")
    assert "fff-missing-factory" in str(missing.value)
    with pytest.raises(PluginLoadError) as overclaim:
        registry.get("overclaim")
    assert "hhh-undeclared-feature" in str(overclaim.value) and "embeddings" in str(overclaim.value)
    assert registry.select("chat", prefer=["goodfake"]).identifier == "goodfake"


def test_the_router_skips_a_provider_that_cannot_be_built(on_path: Path) -> None:
    registry = Registry.discover(strict=False)
    router = registry.router("chat", prefer=["ghost", "overclaim", "goodfake"])
    response = router.chat_completion("ping")
    assert response.provider == "goodfake"
    assert response.metadata["fallback_from"] == ["ghost", "overclaim"]
    events = list(router.stream_chat_completion("ping"))
    assert events[-2].metadata is not None and events[-2].metadata.provider == "goodfake"
    assert events[-2].metadata.extra["fallback_from"] == [], "neither broken provider claims streaming"


def _cli(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "llm-core"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LLM_CORE_")}
    environment.update({"PYTHONPATH": str(site), "LLM_CORE_CONFIG": "", **env})
    return subprocess.run([str(script), *args], capture_output=True, text=True, env=environment, timeout=60,
                          check=False)


def test_cli_lists_the_problems_and_strict_mode_exits(site: Path) -> None:
    listed = _cli(site, "plugins")
    assert listed.returncode == 0
    for distribution, (_, stage, _) in BROKEN.items():
        assert f"{distribution} ({stage})" in listed.stderr
    assert all(name in listed.stdout for name in (*REAL, *WORKING))
    assert _cli(site, "plugins", "--strict").returncode == 5
    providers = _cli(site, "providers")
    assert providers.returncode == 0 and "gemini" in providers.stdout and "goodfake" in providers.stdout
    fatal = _cli(site, "providers", LLM_CORE_STRICT_PLUGINS="1")
    assert fatal.returncode == 5
    assert "aaa-broken-import" in fatal.stderr and "Traceback" not in fatal.stderr
