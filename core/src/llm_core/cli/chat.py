"""``llm-core chat`` as a conversation: interactive (no prompt), ``-c`` to continue the last one,
``--functions FILE.py`` to give the model the functions of a Python file as tools.

The last conversation is kept as JSON in ``$XDG_STATE_HOME/llm-core/last-conversation.json``
(default ``~/.local/state``), readable by its owner only; it holds the history with replay
data, never a key (credential-named options are left out).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from llm_core.conversation.tools import describe
from llm_core.errors import InvalidInputError, LLMError
from llm_core.untrusted import read_regular_file, write_private_file

EXIT_WORDS = frozenset({"exit", "quit", ":q"})
#: Largest saved conversation ``-c`` reads (inline images and documents make one large).
MAX_STATE_BYTES = 256 * 1024 * 1024


def state_file() -> Path:
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "llm-core" / "last-conversation.json"


def load_functions(path: Path) -> list[Callable[..., Any]]:
    """The public functions defined in ``path`` (not the ones it imports), in file order."""
    if not path.is_file():
        raise FileNotFoundError(f"--functions: no file {path}")
    spec = importlib.util.spec_from_file_location(f"llm_core_functions_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise InvalidInputError(f"--functions: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InvalidInputError(f"--functions: {path}, line {exc.lineno}: {exc.msg}") from exc
    except SystemExit as exc:  # exit() at import: the file is a script, not a module of tools
        raise InvalidInputError(f"--functions: {path} exits when imported (exit code {exc.code!r})") from exc
    except Exception as exc:  # the user's module may raise anything at import
        raise InvalidInputError(f"--functions: importing {path} failed: {type(exc).__name__}: {describe(exc)}") from exc
    found: list[Callable[..., Any]] = [
        value
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
    ]
    if not found:
        raise InvalidInputError(f"--functions: {path} defines no public function")
    return found


def run(args: argparse.Namespace, provider: Any, options: dict[str, Any], lines: Iterable[str], out: TextIO) -> int:
    """The conversation of ``llm-core chat``: one prompt (``args.prompt``), or each line of
    ``lines`` until an empty input or ``exit``. Saves the conversation after every answer."""
    from llm_core.conversation import Conversation

    tools = load_functions(Path(args.functions)) if args.functions else []
    saved = state_file()
    if args.continue_:
        if not saved.exists():
            raise InvalidInputError("-c: there is no earlier conversation to continue")
        text = read_regular_file(saved, limit=MAX_STATE_BYTES, what="-c")
        chat = Conversation.from_json(text, provider=provider, tools=tools)
    else:
        chat = provider.conversation(tools=tools, **options)
    prompts = [args.prompt] if args.prompt else _typed(lines, out)
    for prompt in prompts:
        try:
            response = chat.send(prompt)
        except LLMError as exc:
            if args.prompt:
                raise
            print(f"error: {exc}", file=out)
            continue
        for step in response.steps:
            for call in step.tool_calls or ():
                print(f"[tool] {call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})", file=out)
        print(response.content, file=out, flush=True)
        write_private_file(saved, chat.to_json())
    return 0


def _typed(lines: Iterable[str], out: TextIO) -> Iterable[str]:
    interactive = sys.stdin.isatty()
    if interactive:
        print("Chatting (empty line or 'exit' to stop).", file=out)
    for line in _prompted(lines, out, interactive):
        text = line.strip()
        if not text or text in EXIT_WORDS:
            return
        yield text


def _prompted(lines: Iterable[str], out: TextIO, interactive: bool) -> Iterable[str]:
    for line in lines:
        yield line
        if interactive:
            print("> ", end="", file=out, flush=True)
