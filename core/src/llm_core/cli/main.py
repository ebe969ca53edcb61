"""``llm-core``: inspect providers, route by capability, and make calls from the shell.

Exit codes are listed in :mod:`llm_core.cli.exits` and docs/cli.md.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from contextlib import ExitStack

from llm_core.cli.exits import EXIT_CONFIG, EXIT_USAGE, exit_code_for
from llm_core.cli.parser import build_parser, handler_path, with_default_command
from llm_core.errors import LLMError


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        words = with_default_command(list(sys.argv[1:] if argv is None else argv), parser.commands)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not words and sys.stdin.isatty():
        parser.print_help()
        return EXIT_USAGE
    if not words:  # `echo "..." | llm-core`: the piped text is the prompt
        words = ["prompt"]
    args = parser.parse_args(words)
    args.json = getattr(args, "json", False)
    args.replay = getattr(args, "replay", None)
    from llm_core.cli.output import emit_json, note
    from llm_core.cli.replay import REPLAY_EXTRA, replay_dir, replay_installed, replaying, unmatched_message
    from llm_core.cli.settings import report

    if not report(args):
        return EXIT_CONFIG
    module, function = handler_path(args.command).split(":")
    handler = getattr(importlib.import_module(module), function)
    args.replay_active = False
    directory = replay_dir(args.replay) if args.command not in ("new-plugin", "completion") else None
    if directory is not None and not replay_installed():
        note(f"error: --replay needs vcrpy, which is not installed: pip install '{REPLAY_EXTRA}'")
        return EXIT_CONFIG
    try:
        with ExitStack() as stack:
            if directory is not None:
                count = stack.enter_context(replaying(directory))
                if not args.json:
                    note(
                        f"[replay] answering provider calls from {count} recorded interactions in "
                        f"{directory}: nothing goes to a provider and no API key is needed (requests to "
                        "localhost / 127.0.0.1 are not replayed: they go to the local port)"
                    )
                args.replay_active = True
            code: int = handler(args)
            return code
    except (LLMError, FileNotFoundError, ValueError) as exc:
        message = (unmatched_message(exc, directory) if args.replay_active and directory else None) or str(exc)
        message += "".join(f"\n{line}" for line in getattr(exc, "__notes__", ()))
        if args.json:
            emit_json({"error": type(exc).__name__, "message": message})
        else:
            note(f"error: {message}")
        return exit_code_for(exc)
    except KeyboardInterrupt:  # the shell's prompt goes on a line of its own, not after the ^C
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `llm-core models | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
