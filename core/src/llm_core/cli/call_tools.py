"""The tools a ``prompt`` or ``chat`` call gets from the command line: the functions of
``-T/--functions`` (a file or inline code) and the MCP servers of ``--mcp``."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import shlex
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llm_core.conversation.tools import describe
from llm_core.errors import InvalidInputError


def tools_of(args: argparse.Namespace) -> list[Any]:
    """``--functions`` and ``--mcp``: the tools of the call."""
    return [*(load_functions(args.functions) if args.functions else []), *mcp_servers(args.mcp)]


def load_functions(source: str) -> list[Callable[..., Any]]:
    """The public functions defined in the file ``source`` (a path ending in ``.py`` or an
    existing file), or in ``source`` itself as Python code (``-T 'def add(a: int, b: int) ->
    int: ...'``, as ``llm --functions``), not the ones it imports, in definition order."""
    path = Path(source)
    is_file = source.endswith(".py") or path.is_file()
    if is_file and not path.is_file():
        raise FileNotFoundError(f"--functions: no file {path}")
    module = _module(path) if is_file else types.ModuleType("llm_core_functions")
    where = str(path) if is_file else "the code given"
    try:
        if is_file:
            _exec_file(module, path)
        else:
            exec(compile(source, "<--functions>", "exec"), module.__dict__)  # noqa: S102 - the user's own tools
    except SyntaxError as exc:
        raise InvalidInputError(f"--functions: {where}, line {exc.lineno}: {exc.msg}") from exc
    except SystemExit as exc:  # exit() at import: the file is a script, not a module of tools
        raise InvalidInputError(f"--functions: {where} exits when imported (exit code {exc.code!r})") from exc
    except Exception as exc:  # the user's module may raise anything at import
        raise InvalidInputError(
            f"--functions: importing {where} failed: {type(exc).__name__}: {describe(exc)}"
        ) from exc
    found: list[Callable[..., Any]] = [
        value
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
    ]
    if not found:
        raise InvalidInputError(f"--functions: {where} defines no public function")
    return found


def mcp_servers(commands: list[str] | None) -> list[Any]:
    """``--mcp "COMMAND ARGS"`` (each): an MCP server run over stdio, stopped when the command
    exits."""
    if not commands:
        return []
    from llm_core.mcp import MCPServer

    servers = []
    for command in commands:
        words = shlex.split(command)
        if not words:
            raise InvalidInputError('--mcp: give the command that runs the server, e.g. --mcp "python server.py"')
        servers.append(MCPServer.stdio(words[0], words[1:]))
    return servers


def _module(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"llm_core_functions_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise InvalidInputError(f"--functions: {path} is not a Python file")
    return importlib.util.module_from_spec(spec)


def _exec_file(module: types.ModuleType, path: Path) -> None:
    spec = module.__spec__
    assert spec is not None and spec.loader is not None  # made by _module
    spec.loader.exec_module(module)
