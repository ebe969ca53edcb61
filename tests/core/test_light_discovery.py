"""Discovery, listing, capability queries and selection import no provider SDK (and no Pydantic).

Runs in a fresh interpreter. Whatever real plugins are installed load too; a fake plugin
distribution whose provider module would import a fake SDK proves that factories stay lazy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

FORBIDDEN = ("google.genai", "openai", "httpx2", "httpx", "pydantic", "tenacity", "lightplug_provider",
             "lightplug_sdk")

SCRIPT = textwrap.dedent("""
    import json
    import sys

    import llm_core
    from llm_core import Feature, ModelInfo, NoMatchingProviderError, ProviderSpec, get_registry

    registry = get_registry()
    registry.register(ProviderSpec(
        identifier="handmade", name="Handmade", features=["chat", "vision", "streaming"],
        factory="lightplug_provider:Provider", requires_credentials=False,
        models=[ModelInfo("hand-1", ["chat", "vision", "streaming"]), ModelInfo("hand-text", ["chat"])],
        default_model="hand-1",
    ))
    summary = {"providers": [], "errors": [str(e) for e in registry.plugin_errors]}
    for spec in registry.providers():
        summary["providers"].append(spec.identifier)
        assert all(isinstance(f, Feature) for f in spec.features)
        spec.model_features(spec.default_model)
        spec.credentials_present()
        for model in spec.models:
            model.supports("chat")
            spec.model_features(model.id)
    Feature.parse("Vision")
    assert "lightplug" in [s.identifier for s in registry.supporting("chat")]
    registry.supporting(Feature.VISION, Feature.STREAMING)
    for features, kwargs in [(("chat",), {}), (("vision", "streaming"), {}), (("chat",), {"model": "hand-text"}),
                             (("chat", "tools"), {"prefer": ["lightplug"]}), (("decision", "audio"), {})]:
        try:
            selection = registry.select(*features, **kwargs)
            summary.setdefault("selected", []).append([selection.identifier, selection.model, selection.reasons])
        except NoMatchingProviderError as exc:
            summary.setdefault("no_match", []).append(str(exc))
    summary["modules"] = sorted(sys.modules)
    print(json.dumps(summary))
""")

PLUGIN = textwrap.dedent("""
    from llm_core import hookimpl, ModelInfo, ProviderSpec

    @hookimpl
    def llm_core_register_providers(register):
        register(ProviderSpec(identifier="lightplug", name="Light", features=["chat", "tools"],
                              factory="lightplug_provider:Provider", credential_env=("LIGHTPLUG_KEY",),
                              models=[ModelInfo("light-1", ["chat", "tools"])], default_model="light-1"))
""")


def make_plugin(root: Path) -> None:
    (root / "lightplug_plugin.py").write_text(PLUGIN)
    (root / "lightplug_provider.py").write_text("import lightplug_sdk\nclass Provider: ...\n")
    (root / "lightplug_sdk.py").write_text("HEAVY = True\n")
    info = root / "lightplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lightplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[llm_core]\nlightplug = lightplug_plugin\n")


def test_discovery_listing_queries_and_selection_import_no_sdk(tmp_path: Path) -> None:
    make_plugin(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_CORE_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "lightplug" in summary["providers"] and "handmade" in summary["providers"]
    assert not [e for e in summary["errors"] if "lightplug" in e]
    selected = {tuple(s[:2]) for s in summary.get("selected", [])}
    assert ("handmade", "hand-1") in selected  # vision + streaming: only the handmade spec
    assert ("handmade", "hand-text") in selected  # the per-model selection
    assert ("lightplug", "light-1") in selected  # the only one with tools (preferred, no key)
    assert all("decision" in m or "audio" in m for m in summary.get("no_match", []))
    loaded = [m for m in summary["modules"] if any(m == f or m.startswith((f"{f}.", f"{f}_"))
                                                   for f in FORBIDDEN)]
    assert loaded == []
