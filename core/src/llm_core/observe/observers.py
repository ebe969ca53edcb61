"""Dispatch of the observer hooks (before request, after response, on error).

The registry installs its plugin manager here when it is built; with no observer registered the
cost of a call is one attribute check.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

from llm_core.features import Feature
from llm_core.hooks import LLMCoreSpecs, hookimpl

_hooks: Any = None  # pluggy HookRelay of the active registry, or None
_active = False
_call_ids = itertools.count(1)
#: Every hook an observer may implement (every hook but provider registration).
OBSERVER_HOOKS = tuple(
    name for name in vars(LLMCoreSpecs) if name.startswith("llm_core_") and name != "llm_core_register_providers"
)

logger = logging.getLogger("llm_core.calls")


def install(hook_relay: Any) -> None:
    """Route events to ``hook_relay`` (called by the registry)."""
    global _hooks, _active
    _hooks = hook_relay
    _active = hook_relay is not None and any(
        not isinstance(impl.plugin, LoggingObserver)
        for name in OBSERVER_HOOKS
        for impl in getattr(hook_relay, name).get_hookimpls()
    )


def active() -> bool:
    """Whether any observer wants events: a plugin's, or the built-in one with DEBUG enabled."""
    return _hooks is not None and (_active or logger.isEnabledFor(logging.DEBUG))


def next_call_id() -> int:
    return next(_call_ids)


def request_features(feature: Feature | None, request: Any = None) -> list[str]:
    """The features a call uses (sorted names): its operation's ``feature``, plus what the
    request asks for (tools, custom tools, built-in tools, JSON output, thinking, image or
    document parts)."""
    found = {feature.value} if feature is not None else set()
    if request is not None:
        if getattr(request, "tools", None):
            found.add("tools")
            if any(getattr(tool, "kind", None) == "custom" for tool in request.tools):
                found.add("custom_tools")
        found.update(tool.type for tool in getattr(request, "builtin_tools", None) or ())
        if getattr(request, "json_mode", False):
            found.add("json_mode")
        if getattr(request, "thinking", None) is not None:
            found.add("thinking")
        for message in getattr(request, "messages", None) or ():
            for part in message.content if isinstance(message.content, list) else ():
                if part.type == "image":
                    found.add("vision")
                elif part.type == "document":
                    found.add("documents")
    return sorted(found)


def emit(hook_name: str, event: dict[str, Any]) -> None:
    """Call every observer of ``hook_name`` (latest registered first, as pluggy does).

    Each observer gets its own copy of the event, so that one that changes it cannot change
    what the next one hears. Whatever an observer raises (``SystemExit`` included) is logged
    and never reaches the call, and the other observers still run; only ``KeyboardInterrupt``
    propagates. (Task cancellation never arrives inside an observer: observers are plain
    functions, and cancellation is delivered at an ``await``.)
    """
    if not active():
        return
    debug = logger.isEnabledFor(logging.DEBUG)
    for impl in reversed(getattr(_hooks, hook_name).get_hookimpls()):
        if not debug and isinstance(impl.plugin, LoggingObserver):
            continue  # it logs at DEBUG only: no copy of the event for it
        try:
            impl.function(event=own_copy(event))
        except KeyboardInterrupt:
            raise
        except BaseException:  # an observer's failure must never end the call
            who = getattr(impl.plugin, "__name__", type(impl.plugin).__name__)
            logger.exception("observer hook %s failed (observer %s)", hook_name, who)


def own_copy(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``event`` for one observer: its lists and dicts (features, usage,
    fallback_from) are copied too; they hold plain values only, so a shallow copy of each is a
    whole copy. The error, request and response objects are the ones the caller has."""
    return {key: value.copy() if isinstance(value, list | dict) else value for key, value in event.items()}


class LoggingObserver:
    """Built-in observer: logs every call at DEBUG level on the ``llm_core.calls`` logger."""

    @hookimpl
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "call %s: %s %s model=%s attempt=%s features=%s",
                event.get("call_id"),
                event.get("provider"),
                event.get("operation"),
                event.get("model"),
                event.get("attempt"),
                event.get("features"),
            )

    @hookimpl
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "call %s: %s answered in %.1f ms after %s attempt(s), usage=%s%s",
                event.get("call_id"),
                event.get("provider"),
                event.get("latency_ms", 0.0),
                event.get("attempts"),
                event.get("usage"),
                f" (fallback from {event['fallback_from']})" if event.get("fallback_from") else "",
            )

    @hookimpl
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            error = event.get("error")
            logger.debug(
                "call %s: %s attempt %s failed with %s: %s (retry: %s)",
                event.get("call_id"),
                event.get("provider"),
                event.get("attempt"),
                type(error).__name__,
                error,
                event.get("will_retry"),
            )
