"""The entry point: installing the distribution registers these hooks, nothing else to do.

OpenTelemetry is imported at the first observed call, not at discovery: listing providers stays
free of it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from llm_core import hookimpl

if TYPE_CHECKING:
    from core_otel_plugin.observer import OtelObserver


@cache
def observer() -> OtelObserver:
    """The process's observer, on the global tracer and meter providers."""
    from core_otel_plugin.observer import OtelObserver

    return OtelObserver()


@hookimpl
def llm_core_before_request(event: dict[str, Any]) -> None:
    observer().llm_core_before_request(event)


@hookimpl
def llm_core_after_response(event: dict[str, Any]) -> None:
    observer().llm_core_after_response(event)


@hookimpl
def llm_core_on_error(event: dict[str, Any]) -> None:
    observer().llm_core_on_error(event)


@hookimpl
def llm_core_turn_start(event: dict[str, Any]) -> None:
    observer().llm_core_turn_start(event)


@hookimpl
def llm_core_turn_end(event: dict[str, Any]) -> None:
    observer().llm_core_turn_end(event)


@hookimpl
def llm_core_tool_start(event: dict[str, Any]) -> None:
    observer().llm_core_tool_start(event)


@hookimpl
def llm_core_tool_end(event: dict[str, Any]) -> None:
    observer().llm_core_tool_end(event)


@hookimpl
def llm_core_tool_approval(event: dict[str, Any]) -> None:
    observer().llm_core_tool_approval(event)


@hookimpl
def llm_core_batch_start(event: dict[str, Any]) -> None:
    observer().llm_core_batch_start(event)


@hookimpl
def llm_core_batch_item(event: dict[str, Any]) -> None:
    observer().llm_core_batch_item(event)


@hookimpl
def llm_core_batch_end(event: dict[str, Any]) -> None:
    observer().llm_core_batch_end(event)
