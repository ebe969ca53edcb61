"""docs/reliability.md shows the tables the tests run on, and names only tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

from tests.reliability import render_doc

HERE = Path(__file__).resolve().parent


def test_the_reliability_page_is_current() -> None:
    text = render_doc.DOC.read_text(encoding="utf-8")
    assert render_doc.current_section(text) == render_doc.render(), (
        "docs/reliability.md is stale: run python -m tests.reliability.render_doc"
    )


def test_the_page_names_real_tests() -> None:
    router = (HERE / "test_router_fallback.py").read_text(encoding="utf-8")
    # every router scenario is on the page, and only those
    assert set(re.findall(r"^(?:async )?def (test_\w+)\(", router, re.MULTILINE)) == set(render_doc.ROUTER_TESTS)
    checks_of = {
        "security": render_doc.SECURITY_CHECKS,
        "isolation": render_doc.ISOLATION_CHECKS,
        "transport": render_doc.TRANSPORT_CHECKS,
    }
    for folder, checks in checks_of.items():
        for filename, _ in checks:
            assert (HERE.parent / folder / filename).is_file(), filename
