"""What ``llm-core new-plugin`` writes installs with pip into a fresh venv (no system site
packages, no network), is discovered by ``llm-core providers``, and passes its own tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CORE = Path(__file__).resolve().parents[2] / "core"


def test_generated_plugin_installs_is_discovered_and_passes_its_tests(fresh_venv: Any, tmp_path: Path) -> None:
    venv = fresh_venv
    venv.pip_install(str(CORE))
    isolated = venv.run(
        str(venv.python), "-c", "import sys; print(sys.flags.no_site, [p for p in sys.path if 'site-packages' in p])"
    )
    assert str(venv.path) in isolated.stdout and sys.prefix not in isolated.stdout  # not the venv running the tests

    # the scaffold comes from the installed llm-core wheel (its templates ship in the wheel)
    made = venv.run(venv.bin("llm-core"), "new-plugin", "acme", "--dir", str(tmp_path / "work"), "--json")
    assert made.returncode == 0, made.stderr
    project = Path(json.loads(made.stdout)["path"])
    assert project == tmp_path / "work" / "llm-core-acme"

    before = venv.run(venv.bin("llm-core"), "providers", "--json")
    assert json.loads(before.stdout)["providers"] == []

    venv.pip_install(f"{project}[test]")
    listed = venv.run(venv.bin("llm-core"), "providers", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert report["plugin_errors"] == []
    [acme] = report["providers"]
    assert acme["provider"] == "acme"
    assert acme["distribution"] == "llm-core-acme"
    assert acme["version"] == "0.1.0"
    assert acme["availability"] == "no: set ACME_API_KEY"
    assert set(acme["features"]) >= {"chat", "streaming", "tools", "json_mode", "embeddings", "decision"}

    tests = venv.run(str(venv.python), "-m", "pytest", "-p", "no:cacheprovider", "-rs", cwd=project)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    summary = tests.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "error" not in summary
    assert " passed" in summary and "8 skipped" in summary
    skipped = [line for line in tests.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("acme does not claim" in line for line in skipped), skipped
