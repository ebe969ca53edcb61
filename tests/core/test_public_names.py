"""``llm_core``'s public names are one list: the lazy exports and the imports type checkers read
(under ``TYPE_CHECKING``) name the same objects from the same modules."""

from __future__ import annotations

import ast
from pathlib import Path

import llm_core


def _typed_imports() -> dict[str, str]:
    tree = ast.parse(Path(llm_core.__file__).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module, ast.dump(statement)
                for alias in statement.names:
                    assert alias.asname == alias.name, f"{alias.name} is re-exported as {alias.asname}"
                    found[alias.name] = statement.module
    return found


def test_the_typed_imports_are_the_lazy_exports() -> None:
    assert _typed_imports() == llm_core._EXPORTS


def test_every_export_loads_from_its_module() -> None:
    for name, module in llm_core._EXPORTS.items():
        assert getattr(llm_core, name) is getattr(__import__(module, fromlist=[name]), name), name
