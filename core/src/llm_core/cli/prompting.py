"""``llm-core prompt`` (and ``chat`` with a prompt): one exchange, printed, logged.

The call's usage and latency come from the observer events the provider emits (the same numbers
every observer sees), so that plain answers, streams and ``--schema`` answers are logged alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from llm_core.cli import logdb
from llm_core.cli.exits import exit_code_for
from llm_core.cli.options import CallSetup, call_setup, choose_provider, user_message
from llm_core.cli.output import answer, emit_json, note
from llm_core.errors import InvalidInputError, LLMError
from llm_core.features import Feature
from llm_core.hooks import hookimpl


class CallRecorder:
    """Observer that keeps the last successful call's event (usage, latency, model)."""

    def __init__(self) -> None:
        self.event: dict[str, Any] | None = None

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        if event.get("operation") != "fallback":
            self.event = event


def read_prompt(value: str | None) -> str:
    """The prompt argument; ``-`` (or none, with piped stdin) reads standard input."""
    if value == "-" or (value is None and not sys.stdin.isatty()):
        return sys.stdin.read()
    if value is None:
        raise ValueError("give a prompt (or '-' to read it from stdin)")
    return value


def _conversation(args: argparse.Namespace) -> tuple[str, list[dict[str, Any]]]:
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


def _wants_stream(args: argparse.Namespace, provider: Any, model: str | None) -> bool:
    """Stream with ``--stream``; by default only to a terminal (people watch tokens arrive, scripts
    get one answer), never with ``--no-stream``, ``--json`` or ``--schema``."""
    if args.stream:
        return True
    if args.no_stream or args.json or args.schema or not sys.stdout.isatty():
        return False
    return bool(provider.supports_feature(Feature.STREAMING, model))


def cmd_prompt(args: argparse.Namespace) -> int:
    from llm_core.cli.schema import load_schema
    from llm_core.registry import get_registry

    prompt = read_prompt(args.prompt)
    if not prompt.strip() and not args.attachment:
        raise InvalidInputError("the prompt is empty: give text, '-' for stdin, or an attachment with -a")
    setup = call_setup(args, *([Feature.STREAMING] if args.stream else []))
    schema = load_schema(args.schema, multi=args.schema_multi) if args.schema else None
    if schema is not None:
        setup.features.append(Feature.JSON_MODE)
    cid, earlier = _conversation(args)
    provider = choose_provider(args.provider, setup.features, setup.model)
    messages = [*earlier, user_message(prompt, setup.parts)]
    recorder = CallRecorder()
    registry = get_registry()
    registry.add_observer(recorder)
    started = time.perf_counter()
    result: dict[str, Any] = {"content": None, "thinking": None, "error": None}
    try:
        if schema is not None:
            data = provider.generate_json(messages, schema, **setup.options)
            result["content"] = json.dumps(data, ensure_ascii=False)
            emit_json(data if not args.json else {"provider": provider.identifier, "result": data})
        elif _wants_stream(args, provider, setup.model):
            _stream(args, provider, messages, setup, result)
        else:
            _plain(args, provider, messages, setup, result)
    except LLMError as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        if registry.plugin_manager is not None:
            registry.plugin_manager.unregister(recorder)
        if not args.no_log and logdb.logging_enabled():
            _log(args, provider, prompt, setup, cid, result, recorder.event, started)
    if result["error"] is not None:  # an error event ended the stream
        return exit_code_for(result["error_object"])
    return 0


def _plain(
    args: argparse.Namespace, provider: Any, messages: list[Any], setup: CallSetup, result: dict[str, Any]
) -> None:
    response = provider.chat_completion(messages, **setup.options)
    result.update(content=response.content, thinking=response.thinking)
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
        return
    if response.thinking:
        print(f"[thinking]\n{response.thinking.strip()}\n[answer]")
    answer(response.content)
    cost = f", ${response.usage.cost}" if response.usage.cost is not None else ""
    note(
        f"({response.provider} {response.model}, {response.usage.total_tokens} tokens{cost}, "
        f"finish: {response.finish_reason})"
    )


def _stream(
    args: argparse.Namespace, provider: Any, messages: list[Any], setup: CallSetup, result: dict[str, Any]
) -> None:
    from llm_core.streaming import StreamEventType

    thinking: list[str] = []
    text: list[str] = []
    metadata: Any = None
    section = None
    for event in provider.stream_chat_completion(messages, **setup.options):
        if event.type is StreamEventType.TOKEN:
            (thinking if event.is_thinking else text).append(event.text or "")
            if not args.json:
                label = "[thinking]" if event.is_thinking else "[answer]"
                if args.think and label != section:
                    print(("\n" if section else "") + label, flush=True)
                    section = label
                print(event.text, end="", flush=True)
        elif event.type is StreamEventType.METADATA:
            metadata = event.metadata
        elif event.type is StreamEventType.ERROR:
            result["error_object"] = event.error
            result["error"] = f"{type(event.error).__name__}: {event.error}"
    result.update(content="".join(text), thinking="".join(thinking) or None)
    if args.json:
        emit_json(
            {
                "provider": provider.identifier,
                "content": result["content"],
                "thinking": result["thinking"],
                "error": result["error"],
                "metadata": metadata.model_dump() if metadata else None,
                "replay": args.replay_active,
            }
        )
        return
    print()
    if metadata is not None:
        note(
            f"({provider.identifier} {metadata.model}, in {metadata.input_tokens} / out "
            f"{metadata.output_tokens} / thinking {metadata.thinking_tokens} tokens, first token "
            f"{(metadata.time_to_first_token_ms or 0):.0f} ms, total {(metadata.total_time_ms or 0):.0f} ms"
            f"{f', ${metadata.cost}' if metadata.cost is not None else ''})"
        )
    if result["error"] is not None:
        note(f"error: {result['error_object']}")


def _log(
    args: argparse.Namespace,
    provider: Any,
    prompt: str,
    setup: CallSetup,
    cid: str,
    result: dict[str, Any],
    event: dict[str, Any] | None,
    started: float,
) -> None:
    usage = (event or {}).get("usage") or {}
    options = {k: v for k, v in setup.options.items() if k != "system"}
    if args.schema:
        options["schema"] = args.schema
    logdb.record(
        {
            "conversation_id": cid,
            "provider": provider.identifier,
            "model": (event or {}).get("model") or setup.model or provider.default_model(),
            "system": setup.options.get("system"),
            "prompt": prompt,
            "attachments": list(args.attachment) or None,
            "options": options or None,
            "response": result["content"],
            "thinking": result["thinking"],
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "total_tokens": usage.get("total_tokens"),
            "latency_ms": (event or {}).get("latency_ms") or (time.perf_counter() - started) * 1000,
            "error": result["error"],
            "cost_usd": usage.get("cost"),
        }
    )


def cmd_chat(args: argparse.Namespace) -> int:
    """``chat PROMPT``: one exchange, like ``prompt``; without a prompt, with ``-c`` or with
    ``--functions``: the conversation of :mod:`llm_core.cli.chat`."""
    if args.prompt is not None and not args.continue_ and not args.functions:
        return cmd_prompt(args)
    from llm_core.cli import chat

    setup = call_setup(args, *([Feature.TOOLS] if args.functions else []))
    provider = choose_provider(args.provider, setup.features, setup.model)
    prompt = read_prompt(args.prompt) if args.prompt else None
    return chat.run(
        argparse.Namespace(**{**vars(args), "prompt": prompt}), provider, setup.options, sys.stdin, sys.stdout
    )
