"""``llm-core chat``: the interactive conversation (its tools come as ``prompt``'s:
:mod:`llm_core.cli.call_tools`).

At a terminal the input line is edited with prompt_toolkit when it is installed (the ``cli`` extra:
``pip install 'llm-core[cli]'``), else with the standard ``readline``; either way the lines typed
are kept in ``$XDG_STATE_HOME/llm-core/chat-history`` (default ``~/.local/state``; readline's in
``chat-history-readline``) for the arrow keys of the next session. Lines starting with ``!`` are
commands handled here (:data:`COMMANDS`), never sent. Every exchange is logged to the prompt log,
so ``-c`` continues a chat from ``prompt`` and the other way round. Piped input is read a line per
prompt, without prompts or a banner.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llm_core.errors import LLMError


def state_dir() -> Path:
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "llm-core"


def cmd_chat(args: argparse.Namespace) -> int:
    """``chat PROMPT``: one exchange, as ``prompt``; without a prompt: the chat loop."""
    if args.prompt is not None:
        from llm_core.cli.prompting import cmd_prompt

        return cmd_prompt(args)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """The chat loop: each input (see :mod:`llm_core.cli.lines`) sent on one conversation, the
    answer streamed at a terminal, every exchange logged. An error or Ctrl-C ends that exchange
    (logged, and left out of what the model sees next), not the chat."""
    from llm_core.cli.call_tools import tools_of
    from llm_core.cli.lines import LineReader, lines_of
    from llm_core.cli.options import call_setup, user_message
    from llm_core.cli.prompting import as_messages, chosen_provider, conversation_history, wants_stream

    setup = call_setup(args)
    tools = tools_of(args)
    cid, earlier = conversation_history(args)
    provider = chosen_provider(args, setup)
    chat = provider.conversation(tools=tools, messages=as_messages(earlier), **setup.options)
    reader = LineReader(state_dir() / "chat-history")
    stream = wants_stream(args, provider, setup.model)
    if reader.interactive:
        model = setup.model or provider.default_model()
        tools_note = f", tools: {', '.join(chat.tools)}" if chat.tools else ""
        resumed = f", continuing conversation {cid}" if earlier else ""
        print(f"Chatting with {provider.identifier} {model}{tools_note}{resumed}.", flush=True)
        print("Type !help for commands, !exit or Ctrl-D to leave.", flush=True)
    parts = list(setup.parts)  # -a goes with the first prompt
    inputs = lines_of(reader)
    while True:
        try:
            typed = next(inputs, None)
        except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line, not the end
            print("\n(!exit or Ctrl-D to leave)", flush=True)
            inputs = lines_of(reader)
            continue
        if typed is None:
            return 0
        if typed.prompt is None:
            print(typed.shown, flush=True)
            continue
        message = user_message(typed.prompt, parts)
        parts = []
        chat = _exchange(args, provider, chat, tools, message, typed.prompt, setup.options, cid, stream)


def _exchange(
    args: argparse.Namespace,
    provider: Any,
    chat: Any,
    tools: list[Callable[..., Any]],
    message: Any,
    prompt: str,
    options: dict[str, Any],
    cid: str,
    stream: bool,
) -> Any:
    """One exchange of the chat; the conversation to go on with."""
    import time

    from llm_core.cli.exchange import (
        INTERRUPTED,
        CallRecorder,
        Outcome,
        log_exchange,
        show_response,
        show_stream,
        usage_line,
    )
    from llm_core.registry import get_registry

    before = chat.messages
    recorder = CallRecorder()
    registry = get_registry()
    registry.add_observer(recorder)
    started = time.perf_counter()
    outcome = Outcome()
    try:
        outcome = show_stream(chat.stream(message), args) if stream else show_response(chat.send(message), args)
    except LLMError as exc:
        outcome.error = exc
    except KeyboardInterrupt:
        outcome.interrupted = True
        print(flush=True)
    finally:
        if registry.plugin_manager is not None:
            registry.plugin_manager.unregister(recorder)
        log_exchange(
            args, provider, prompt=prompt, options=options, cid=cid, outcome=outcome, recorder=recorder, started=started
        )
    if args.usage:
        print(usage_line(recorder), file=sys.stderr)
    if outcome.interrupted or outcome.error is not None:
        print(f"[{INTERRUPTED}]" if outcome.interrupted else f"error: {outcome.error}", file=sys.stderr, flush=True)
        # the failed turn is logged, not kept: the model next sees the conversation as it was
        return provider.conversation(tools=tools, messages=before, **options)
    return chat
