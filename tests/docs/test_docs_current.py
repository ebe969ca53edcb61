"""Generated documentation must match what the code says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_capability_matrix_is_current() -> None:
    # in a process of its own: render() selects the plugins through the environment. From ROOT,
    # scripts/ imports as a (namespace) package.
    generated = subprocess.run(
        [sys.executable, "-c", "import sys; from scripts.capability_matrix import render; sys.stdout.write(render())"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    committed = (ROOT / "docs" / "capabilities.md").read_text(encoding="utf-8")
    assert generated == committed, "docs/capabilities.md is stale: run python scripts/capability_matrix.py"


def test_readme_links_resolve() -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), f"README links to missing {link}"
