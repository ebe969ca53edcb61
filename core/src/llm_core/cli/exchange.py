"""One exchange of ``prompt`` or ``chat``: the answer shown as it arrives (tools as they run),
the summary, and the row in the prompt log. Both commands go through :func:`show_stream` /
:func:`show_response` and :func:`log_exchange`, so an answer looks and is logged the same
whichever command asked.

An exchange stopped with Ctrl-C is shown and logged as ``interrupted``, with what had arrived.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from llm_core.cli import logdb
from llm_core.cli.output import rich_console
from llm_core.hooks import hookimpl

#: The ``error`` text of an exchange stopped by the user.
INTERRUPTED = "interrupted"
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.DOTALL | re.MULTILINE)


class CallRecorder:
    """Observer that adds up the usage of an exchange's model calls (a tool loop makes several)
    and keeps the last call's model and latency."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.latency_ms: float | None = None
        self.usage: dict[str, Any] = {}

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        if event.get("operation") == "fallback":
            return
        self.model = event.get("model") or self.model
        self.latency_ms = (self.latency_ms or 0.0) + (event.get("latency_ms") or 0.0)
        for name, value in (event.get("usage") or {}).items():
            if value is not None and name in ("prompt_tokens", "completion_tokens", "total_tokens", "cost"):
                self.usage[name] = self.usage.get(name, 0) + value


@dataclass
class Outcome:
    """What an exchange produced: the answer (as far as it came), its thinking, the tool calls
    shown, and why it ended early (an error, or ``interrupted``)."""

    content: str = ""
    thinking: str = ""
    error: BaseException | None = None
    interrupted: bool = False
    tools: list[str] = field(default_factory=list)
    metadata: Any = None

    @property
    def error_text(self) -> str | None:
        if self.interrupted:
            return INTERRUPTED
        return f"{type(self.error).__name__}: {self.error}" if self.error is not None else None


def tool_line(call: Any) -> str:
    arguments = ", ".join(f"{key}={value!r}" for key, value in call.arguments.items())
    return f"[tool] {call.name}({arguments})"


def extracted(text: str, *, last: bool = False) -> str:
    """``-x`` / ``--xl``: the first (last) fenced code block of ``text``; all of it when it has none."""
    blocks = [match["code"] for match in _FENCE.finditer(text)]
    if not blocks:
        return text
    return (blocks[-1] if last else blocks[0]).rstrip("\n")


def show_stream(events: Iterator[Any], args: argparse.Namespace, out: TextIO | None = None) -> Outcome:
    """Print a stream's tokens as they arrive (Markdown re-rendered live at a terminal with rich,
    the raw text otherwise), ``[tool]`` lines as the model calls tools, and keep the outcome.
    Ctrl-C stops the stream (the provider's connection is closed) and ends the line cleanly."""
    stream = out or sys.stdout
    console = rich_console(stream)
    outcome = Outcome()
    view = _LiveView(console, args.think) if console is not None else _PlainView(stream, args.think)
    try:
        with _no_echo(), view:
            for event in events:
                _take(event, outcome, view)
    except KeyboardInterrupt:
        outcome.interrupted = True
        close = getattr(events, "close", None)
        if close is not None:
            close()
    if not console:
        print(file=stream, flush=True)
    return outcome


@contextmanager
def _no_echo() -> Iterator[None]:
    """While an answer streams, keys typed at the terminal are not echoed: a ``^C`` written after
    a full-width line would wrap it and leave the answer drawn twice."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield
        return
    try:
        descriptor = sys.stdin.fileno()
        saved = termios.tcgetattr(descriptor)
    except (OSError, ValueError, termios.error):  # stdin is no terminal (a pipe, a test's StringIO)
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL)
    termios.tcsetattr(descriptor, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(descriptor, termios.TCSANOW, saved)


def _take(event: Any, outcome: Outcome, view: Any) -> None:
    from llm_core.streaming import StreamEventType

    if event.type is StreamEventType.TOKEN:
        if event.is_thinking:
            outcome.thinking += event.text or ""
        else:
            outcome.content += event.text or ""
        view.token(event.text or "", event.is_thinking, outcome)
    elif event.type is StreamEventType.METADATA:
        outcome.metadata = event.metadata
    elif event.type is StreamEventType.TOOL_CALL and event.tool_call is not None:
        line = tool_line(event.tool_call)
        outcome.tools.append(line)
        view.line(line, outcome)
    elif event.type is StreamEventType.TOOL_RESULT and event.error is not None:
        view.line(f"[tool] {event.tool_call.name if event.tool_call else '?'} failed: {event.error}", outcome)
    elif event.type is StreamEventType.ERROR:
        outcome.error = event.error


class _PlainView:
    """Tokens as text; with ``--think``, ``[thinking]`` / ``[answer]`` before each section."""

    def __init__(self, out: TextIO, think: bool) -> None:
        self.out = out
        self.think = think
        self.section: str | None = None
        self.at_line_start = True

    def __enter__(self) -> _PlainView:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def token(self, text: str, is_thinking: bool, outcome: Outcome) -> None:
        label = "[thinking]" if is_thinking else "[answer]"
        if self.think and label != self.section:
            print(("" if self.at_line_start else "\n") + label, file=self.out, flush=True)
            self.section = label
        if text:
            print(text, end="", file=self.out, flush=True)
            self.at_line_start = text.endswith("\n")

    def line(self, text: str, outcome: Outcome) -> None:
        print(("" if self.at_line_start else "\n") + text, file=self.out, flush=True)
        self.at_line_start = True


class _LiveView:
    """The answer so far rendered as Markdown, redrawn as tokens arrive (thinking dimmed above it,
    tool calls between); what scrolls off stays on the screen."""

    def __init__(self, console: Any, think: bool) -> None:
        from rich.live import Live

        self.think = think
        self.lines: list[str] = []
        self.live = Live(console=console, refresh_per_second=12, vertical_overflow="visible", transient=False)

    def __enter__(self) -> _LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.__exit__(*exc)

    def _render(self, outcome: Outcome) -> Any:
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.text import Text

        parts: list[Any] = []
        if self.think and outcome.thinking:
            parts.append(Text(outcome.thinking.strip(), style="dim italic"))
        parts.extend(Text(line, style="cyan") for line in self.lines)
        if outcome.content:
            parts.append(Markdown(outcome.content))
        return Group(*parts)

    def token(self, text: str, is_thinking: bool, outcome: Outcome) -> None:
        if is_thinking and not self.think:
            return
        self.live.update(self._render(outcome))

    def line(self, text: str, outcome: Outcome) -> None:
        self.lines.append(text)
        self.live.update(self._render(outcome))


def show_response(response: Any, args: argparse.Namespace) -> Outcome:
    """A whole answer: the tool calls it made, its thinking apart (``--think``), the answer as
    Markdown at a terminal (``-x``/``--xl``: its code block only, as text)."""
    from llm_core.cli.output import answer

    outcome = Outcome(content=response.content or "", thinking=response.thinking or "")
    for step in getattr(response, "steps", ()) or ():
        for call in step.tool_calls or ():
            outcome.tools.append(tool_line(call))
            print(outcome.tools[-1], flush=True)
    if args.extract or args.extract_last:
        print(extracted(outcome.content, last=args.extract_last))
        return outcome
    if response.thinking and args.think:
        print(f"[thinking]\n{response.thinking.strip()}\n[answer]")
    answer(outcome.content)
    return outcome


def summary(provider: Any, response: Any | None, outcome: Outcome, recorder: CallRecorder) -> str:
    """The one line after an answer: provider, model, tokens (thinking when reported), cost,
    first-token and total time of a stream, how it finished."""
    meta = outcome.metadata
    model = (meta.model if meta is not None else None) or recorder.model or (response.model if response else None)
    parts = [f"{provider.identifier} {model}"]
    if meta is not None:
        tokens = f"in {meta.input_tokens} / out {meta.output_tokens}"
        if meta.thinking_tokens is not None:
            tokens += f" / thinking {meta.thinking_tokens}"
        parts.append(f"{tokens} tokens")
        if meta.time_to_first_token_ms is not None:
            parts.append(f"first token {meta.time_to_first_token_ms:.0f} ms")
        if meta.total_time_ms is not None:
            parts.append(f"total {meta.total_time_ms:.0f} ms")
    elif recorder.usage.get("total_tokens") is not None:
        parts.append(f"{recorder.usage['total_tokens']} tokens")
    if recorder.usage.get("cost") is not None:
        parts.append(f"${recorder.usage['cost']}")
    if response is not None and getattr(response, "finish_reason", None):
        parts.append(f"finish: {response.finish_reason}")
    if outcome.interrupted:
        parts.append(INTERRUPTED)
    return f"({', '.join(parts)})"


def usage_line(recorder: CallRecorder) -> str:
    """``-u``: the exchange's token usage (all its model calls) and cost."""
    usage = recorder.usage
    if not usage:
        return "Token usage: not reported"
    text = f"Token usage: {usage.get('prompt_tokens', '?')} input, {usage.get('completion_tokens', '?')} output"
    return text + (f", cost ${usage['cost']}" if usage.get("cost") is not None else "")


def log_exchange(
    args: argparse.Namespace,
    provider: Any,
    *,
    prompt: str,
    options: dict[str, Any],
    cid: str,
    outcome: Outcome,
    recorder: CallRecorder,
    started: float,
) -> None:
    """One row of the prompt log (unless ``--no-log`` or ``logs off``)."""
    if args.no_log or not logdb.logging_enabled():
        return
    usage = recorder.usage
    logged = {k: v for k, v in options.items() if k not in ("system", "model")}
    if args.schema or args.schema_multi:
        logged["schema"] = args.schema or args.schema_multi
    logdb.record(
        {
            "conversation_id": cid,
            "provider": provider.identifier,
            "model": recorder.model or options.get("model") or provider.default_model(),
            "system": options.get("system"),
            "prompt": prompt,
            "attachments": list(args.attachment) or None,
            "options": logged or None,
            "response": outcome.content,
            "thinking": outcome.thinking or None,
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "total_tokens": usage.get("total_tokens"),
            "latency_ms": recorder.latency_ms or (time.perf_counter() - started) * 1000,
            "error": outcome.error_text,
            "cost_usd": usage.get("cost"),
        }
    )
