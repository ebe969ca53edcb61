"""``llm-core``: inspect providers, route by capability, and make calls from the shell.

Exit codes: 0 success; 1 the provider call failed; 2 bad usage or invalid input; 3 configuration
(e.g. missing API key); 4 no provider fits (unknown provider, unsupported feature, no match);
5 plugin load errors (``plugins --strict``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from llm_core.errors import (
    ConfigurationError,
    InvalidInputError,
    LLMError,
    NoMatchingProviderError,
    PluginLoadError,
    UnknownFeatureError,
    UnknownProviderError,
    UnsupportedFeatureError,
)

EXIT_OK, EXIT_CALL, EXIT_USAGE, EXIT_CONFIG, EXIT_NO_PROVIDER, EXIT_PLUGINS = 0, 1, 2, 3, 4, 5


def exit_code_for(error: BaseException) -> int:
    if isinstance(error, ConfigurationError):
        return EXIT_CONFIG
    if isinstance(error, UnknownProviderError | UnsupportedFeatureError | NoMatchingProviderError):
        return EXIT_NO_PROVIDER
    if isinstance(error, InvalidInputError | UnknownFeatureError | FileNotFoundError | ValueError):
        return EXIT_USAGE
    if isinstance(error, PluginLoadError):
        return EXIT_PLUGINS
    return EXIT_CALL


def build_parser() -> argparse.ArgumentParser:
    from llm_core import __version__

    # Sub-commands accept the global options too; SUPPRESS keeps them from resetting the
    # value given before the sub-command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable JSON output")
    common.add_argument(
        "--replay",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="answer provider calls from cassettes in DIR (no network, no key); also LLM_CORE_REPLAY",
    )
    call = argparse.ArgumentParser(add_help=False)
    call.add_argument("--provider", "-p", help="provider identifier (default: chosen by capability)")
    call.add_argument("--model", "-m", help="model id (default: the provider's)")

    parser = argparse.ArgumentParser(
        prog="llm-core",
        description="LLM provider registry: discover providers, route by capability, make calls.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"llm-core {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("providers", parents=[common], help="list providers, availability and features")
    p = sub.add_parser("models", parents=[common], help="models and their features")
    p.add_argument("provider", nargs="?")
    p = sub.add_parser("route", parents=[common], help="which provider select() picks for FEATURES, and why")
    p.add_argument("features", nargs="+")
    p.add_argument("--prefer", help="comma-separated preference order")
    p.add_argument("--model", "-m")
    p = sub.add_parser("chat", parents=[common, call], help="send a prompt, or chat (no prompt)")
    p.add_argument("prompt", nargs="?", help="the prompt ('-' reads stdin); none: an interactive conversation")
    # conversations (llm_core.cli.chat)
    p.add_argument("-c", "--continue", dest="continue_", action="store_true", help="continue the last conversation")
    p.add_argument("--functions", metavar="FILE.py", help="the functions defined in FILE.py become tools")
    p.add_argument("--system", "-s", help="system instructions")
    p.add_argument("--stream", action="store_true", help="print tokens as they arrive")
    p.add_argument("--think", action="store_true", help="ask for thinking and show it apart")
    p.add_argument("--temperature", type=float)
    p.add_argument("--max-tokens", type=int)
    p = sub.add_parser("json", parents=[common, call], help="structured JSON answer")
    p.add_argument("prompt")
    p.add_argument("--schema", type=Path, help="JSON-schema file")
    p = sub.add_parser("image", parents=[common, call], help="generate an image file")
    p.add_argument("prompt")
    p.add_argument("--out", "-o", type=Path, default=Path("image"), help="output path (suffix added by type)")
    p.add_argument("--size")
    p = sub.add_parser("embed", parents=[common, call], help="embedding vectors")
    p.add_argument("texts", nargs="*")
    p.add_argument("--file", "-f", type=Path, help="one text per line")
    p.add_argument("--dimensions", type=int)
    p.add_argument("--batch", type=int, default=64, help="texts per request when reading a file")
    p = sub.add_parser("decide", parents=[common, call], help="typed decision questions about a subject")
    p.add_argument("--subject", required=True, help="the task / subject text")
    p.add_argument("--candidate")
    p.add_argument("--evidence", action="append", default=[])
    p.add_argument("--questions", type=Path, required=True, help="JSON or TOML file of questions")
    p = sub.add_parser("check", parents=[common], help="test_connection for one or all providers")
    p.add_argument("provider", nargs="?")
    p = sub.add_parser("plugins", parents=[common], help="loaded plugin distributions and load errors")
    p.add_argument("--strict", action="store_true", help="exit 5 when any plugin failed to load")
    sub.add_parser("demo", parents=[common], help="a tour: discovery, routing and calls through every provider")
    p = sub.add_parser("new-plugin", parents=[common], help="write a ready third-party plugin distribution")
    p.add_argument("name", help="provider name, e.g. 'acme'")
    p.add_argument("--dir", type=Path, default=Path("."), help="where to create the distribution folder")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.json = getattr(args, "json", False)
    args.replay = getattr(args, "replay", None)
    from llm_core.cli import commands
    from llm_core.cli.output import emit_json, note
    from llm_core.cli.replay import replay_dir, replaying, unmatched_message

    handler = getattr(commands, "cmd_" + args.command.replace("-", "_"))
    args.replay_active = False
    directory = replay_dir(args.replay)
    try:
        with ExitStack() as stack:
            if directory is not None and args.command not in ("new-plugin",):
                count = stack.enter_context(replaying(directory))
                if not args.json:
                    note(
                        f"[replay] answering provider calls from {count} recorded interactions in "
                        f"{directory} (no network, no API key)"
                    )
                args.replay_active = True
            else:
                args.replay_active = False
            code: int = handler(args)
            return code
    except (LLMError, FileNotFoundError, ValueError) as exc:
        message = (unmatched_message(exc, directory) if args.replay_active and directory else None) or str(exc)
        if args.json:
            emit_json({"error": type(exc).__name__, "message": message})
        else:
            note(f"error: {message}")
        return exit_code_for(exc)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `llm-core models | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
