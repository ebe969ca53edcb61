"""``llm-core prompt`` (also ``llm-core PROMPT`` and ``chat PROMPT``): one exchange, printed and
logged; ``chat`` without a prompt is the interactive loop of :mod:`llm_core.cli.chat`.

Both continue the same conversations: ``-c`` / ``--cid`` read the prompt log, whichever command
wrote it. The call's usage and latency come from the observer events the provider emits (the
same numbers every observer sees), so that plain answers, streams, tool loops and ``--schema``
answers are logged alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from llm_core.cli import call_tools, logdb
from llm_core.cli.exchange import (
    INTERRUPTED,
    CallRecorder,
    Outcome,
    log_exchange,
    show_response,
    show_stream,
    summary,
    usage_line,
)
from llm_core.cli.exits import exit_code_for
from llm_core.cli.options import (
    CallSetup,
    call_setup,
    check_option_names,
    check_sampling,
    choose_provider,
    user_message,
)
from llm_core.cli.output import emit_json, note
from llm_core.errors import InvalidInputError, LLMError
from llm_core.features import Feature


def read_prompt(value: str | None, *, stdin_taken: bool = False) -> str:
    """The prompt argument; ``-`` (or none, with piped stdin) reads standard input, without the
    newline a pipe or ``echo`` ends it with. ``stdin_taken``: ``-a -`` reads stdin instead."""
    if value == "-" or (value is None and not stdin_taken and not sys.stdin.isatty()):
        return sys.stdin.read().removesuffix("\n")
    if value is None:
        raise ValueError("give a prompt (or '-' to read it from stdin)")
    return value


def conversation_history(args: argparse.Namespace) -> tuple[str, list[dict[str, Any]]]:
    """The conversation id and its logged history for ``-c`` / ``--cid`` (a new id otherwise)."""
    if args.cid:
        found = logdb.history(args.cid)
        if not found:
            raise ValueError(f"--cid {args.cid}: no logged conversation with that id (llm-core logs)")
        return args.cid, found
    if args.continue_:
        last = logdb.last_conversation_id()
        if last is None:
            raise ValueError("-c: there is no logged conversation to continue")
        return last, logdb.history(last)
    return logdb.new_conversation_id(), []


def wants_stream(args: argparse.Namespace, provider: Any, model: str | None) -> bool:
    """Stream with ``--stream``; by default only to a terminal (people watch tokens arrive, scripts
    get one answer), never with ``--no-stream``, ``--json``, ``--schema`` or ``-x``."""
    if args.stream:
        return True
    if args.no_stream or args.json or args.schema or args.schema_multi or args.extract or args.extract_last:
        return False
    if not sys.stdout.isatty():
        return False
    return bool(provider.supports_feature(Feature.STREAMING, model))


def chosen_provider(args: argparse.Namespace, setup: CallSetup) -> Any:
    """The provider for the call, after the checks that need no request: ``-o`` names one typo
    from a request field, sampling options on a reasoning model."""
    provider = choose_provider(args.provider, setup.features, setup.model, setup.key)
    check_option_names(provider, setup.options)
    check_sampling(provider, setup.model, setup.options)
    return provider


def cmd_prompt(args: argparse.Namespace) -> int:
    from llm_core.cli.schema import load_schema
    from llm_core.registry import get_registry

    if args.schema and args.schema_multi:
        raise InvalidInputError("give --schema or --schema-multi, not both")
    if args.prompt == "-" and "-" in args.attachment:
        raise InvalidInputError("the prompt and -a - cannot both come from standard input")
    setup = call_setup(args, *([Feature.STREAMING] if args.stream else []))
    prompt = read_prompt(args.prompt, stdin_taken="-" in args.attachment)
    if not prompt.strip() and not args.attachment:
        raise InvalidInputError("the prompt is empty: give text, '-' for stdin, or an attachment with -a")
    schema_text = args.schema or args.schema_multi
    schema = load_schema(schema_text, multi=bool(args.schema_multi)) if schema_text else None
    if schema is not None:
        setup.features.append(Feature.JSON_MODE)
    tools = call_tools.tools_of(args)
    cid, earlier = conversation_history(args)
    provider = chosen_provider(args, setup)
    messages = [*earlier, user_message(prompt, setup.parts)]
    recorder = CallRecorder()
    registry = get_registry()
    registry.add_observer(recorder)
    started = time.perf_counter()
    outcome = Outcome()
    response: Any = None
    try:
        if schema is not None:
            data = provider.generate_json(messages, schema, **setup.options)
            outcome.content = json.dumps(data, ensure_ascii=False)
            emit_json(data if not args.json else {"provider": provider.identifier, "result": data})
        elif tools:
            chat = provider.conversation(tools=tools, messages=as_messages(earlier), **setup.options)
            if wants_stream(args, provider, setup.model):
                outcome = show_stream(chat.stream(messages[-1]), args)
            else:
                response = chat.send(messages[-1])
                outcome = _shown(args, response)
        elif wants_stream(args, provider, setup.model):
            outcome = show_stream(provider.stream_chat_completion(messages, **setup.options), args)
        else:
            response = provider.chat_completion(messages, **setup.options)
            outcome = _shown(args, response)
    except LLMError as exc:
        outcome.error = exc
        raise
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        if registry.plugin_manager is not None:
            registry.plugin_manager.unregister(recorder)
        log_exchange(
            args,
            provider,
            prompt=prompt,
            options=setup.options,
            cid=cid,
            outcome=outcome,
            recorder=recorder,
            started=started,
        )
    return _finish(args, provider, response, outcome, recorder, schema is not None)


def as_messages(history: list[dict[str, Any]]) -> list[Any]:
    """Logged turns (``{"role", "content"}``) as messages a conversation takes."""
    from llm_core.messages import ChatMessage

    return [ChatMessage.model_validate(turn) for turn in history]


def _shown(args: argparse.Namespace, response: Any) -> Outcome:
    if args.json:
        emit_json(
            {
                "provider": response.provider,
                "model": response.model,
                "content": response.content,
                "thinking": response.thinking,
                "finish_reason": response.finish_reason,
                "usage": response.usage.model_dump(),
                "replay": args.replay_active,
            }
        )
        return Outcome(content=response.content or "", thinking=response.thinking or "")
    return show_response(response, args)


def _finish(
    args: argparse.Namespace, provider: Any, response: Any, outcome: Outcome, recorder: CallRecorder, structured: bool
) -> int:
    """The summary on stderr (``-u``: the usage too), and the exit code: 130 when interrupted,
    the error's code when the stream ended with one."""
    if args.json and not structured and response is None:
        meta = outcome.metadata
        emit_json(
            {
                "provider": provider.identifier,
                "content": outcome.content,
                "thinking": outcome.thinking or None,
                "error": outcome.error_text,
                "metadata": meta.model_dump() if meta else None,
                "replay": args.replay_active,
            }
        )
    elif not args.json and not structured:
        note(summary(provider, response, outcome, recorder))
    if args.usage:
        note(usage_line(recorder))
    if outcome.interrupted:
        note(f"[{INTERRUPTED}]")
        return 130
    if outcome.error is not None:  # an error event ended the stream
        note(f"error: {outcome.error}")
        return exit_code_for(outcome.error)
    return 0
