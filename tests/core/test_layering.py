"""The core's and the plugins' modules import one way (no circle, counting imports inside
functions and under ``TYPE_CHECKING``), and each says the one concept it holds."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest


def _package_dir(name: str) -> Path:
    """Where a package lives, found without importing it (a plugin would load its SDK)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    return Path(spec.origin).parent


#: The package's ``__init__`` loads its public names lazily from the modules below it.
TOP = "llm_core"
PACKAGE = _package_dir(TOP)
#: The plugins shipped in this repository (every package under plugins/*/src): each is held to the
#: same rules on its own.
PLUGINS = tuple(sorted(p.parent.name for p in Path(__file__).resolve().parents[2].glob("plugins/*/src/*/__init__.py")))
#: The command line, the testing kit and the batch runner sit on top of the core (nothing in the
#: core imports them, see the last test).
ON_TOP = ("cli", "testing", "batch")


def _files(top: str = TOP, *, everything: bool = False) -> list[Path]:
    root = _package_dir(top)
    return [p for p in root.rglob("*.py") if everything or top != TOP or p.relative_to(root).parts[0] not in ON_TOP]


def _module_name(path: Path, top: str = TOP) -> str:
    parts = path.relative_to(_package_dir(top).parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str], top: str = TOP) -> set[str]:
    """Every module of package ``top`` that ``path`` imports, wherever the import statement
    stands (``from package import module`` counts as an import of that module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules
            found.update(submodules or {base})
    # a package's __init__ runs before any of its modules anyway: that is no edge back up
    ancestors = {name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1)}
    return {m for m in found if m.startswith(f"{top}.")} - ancestors


def _graph(top: str = TOP, *, everything: bool = False) -> dict[str, set[str]]:
    paths = {_module_name(p, top): p for p in _files(top, everything=everything)}
    modules = set(paths) - {top}
    return {
        name: _imports(path, name, modules, top) & modules - {name} for name, path in paths.items() if name != top
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_of_the_core_imports_back_up_the_stack() -> None:
    graph = _graph()
    assert "llm_core.provider.base" in graph and "llm_core.provider.base" in graph["llm_core.routing.router"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or ())


def test_no_module_of_the_package_imports_in_a_circle() -> None:
    """The same for the whole package: the command line, the testing kit and the batch runner too."""
    graph = _graph(everything=True)
    assert "llm_core.batch.job" in graph and "llm_core.cli.main" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or ())


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_nothing_in_the_core_imports_the_command_line_or_the_testing_kit() -> None:
    above = {f"{TOP}.{name}" for name in ON_TOP}
    assert {m for m, targets in _graph().items() if any(t.startswith(tuple(above)) for t in targets)} == set()


def test_the_plugins_are_found() -> None:
    assert PLUGINS, "no package under plugins/*/src"


@pytest.mark.parametrize("plugin", PLUGINS)
def test_no_module_of_a_plugin_imports_in_a_circle(plugin: str) -> None:
    graph = _graph(plugin)
    assert graph.get(f"{plugin}.plugin"), graph  # the graph is read: the hook module imports its package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or ())


#: A module past this many lines is worth a look (is it still one concept?): the test prints it.
LOOK_AT = 500
#: Past this, a module holds more than one concept whatever its docstring says.
TOO_LONG = 900


@pytest.mark.parametrize("top", [TOP, *PLUGINS])
def test_every_module_says_its_one_concept_and_none_is_overgrown(top: str) -> None:
    """Modules split by meaning, not by a line count: each opens with a docstring whose first
    line says what it holds (a package's ``__init__`` may only re-export). A size is no rule, but
    a module past :data:`TOO_LONG` lines has grown past one concept; one past :data:`LOOK_AT` is
    printed, to be read again."""
    root = _package_dir(top)
    undescribed, overgrown = [], {}
    for path in _files(top, everything=True):
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        docstring = ast.get_docstring(ast.parse(text))
        if not (docstring and docstring.strip()) and not (path.name == "__init__.py" and lines < 60):
            undescribed.append(name)
        if lines > TOO_LONG:
            overgrown[name] = lines
        elif lines > LOOK_AT:
            print(f"{top}/{name}: {lines} lines, still one concept?")
    assert undescribed == [] and overgrown == {}, (undescribed, overgrown)
