"""pluggy hook specifications of the ``llm_core`` project.

A plugin module exposes hook implementations marked with :data:`hookimpl` and is named in the
``llm_core`` entry-point group of its distribution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from llm_core.specs import ProviderSpec

PROJECT = "llm_core"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class LLMCoreSpecs:
    """Hook specifications. Observers receive plain dicts so that they never hold secrets."""

    @hookspec
    def llm_core_register_providers(self, register: Callable[[ProviderSpec], None]) -> None:
        """Call ``register(ProviderSpec(...))`` once for each provider this plugin offers."""

    @hookspec
    def llm_core_before_request(self, event: dict[str, Any]) -> None:
        """A provider call is about to be sent.

        ``event``: ``provider``, ``model``, ``operation``, ``features``, ``attempt``, ``call_id``,
        ``base_url`` (None for the provider's default host), ``parent_id`` (the scope the call
        runs in: a conversation turn, a tool execution, a batch fetch; 0 for none), ``request``
        (the validated request object itself, not a copy: read it, never change it; None where
        the operation has none), and ``temperature``, ``max_tokens``, ``top_p`` when the request
        sets them. Called in the caller's thread and context (so an
        observer sees the application's current span); on the async path it runs on the event
        loop, so it must not block: hand slow work (exporting) to a thread or queue.
        """

    @hookspec
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        """A provider call succeeded.

        ``event``: ``provider``, ``model``, ``operation``, ``usage`` (or None), ``latency_ms``,
        ``attempts``, ``call_id``, ``response_model``, ``response_id`` (the provider's id of the
        answer) and ``finish_reason`` (when known; ``usage`` includes ``cached_tokens`` and
        ``cost``), ``response`` (the response object itself, a stream's
        :class:`~llm_core.streaming.StreamMetadata`; None when there is none), ``abandoned`` (a
        stream the caller stopped before its end: no usage), and ``fallback_from`` when a router
        moved past failed providers.
        """

    @hookspec
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        """A provider call attempt failed, or the call was cancelled.

        ``event``: ``provider``, ``model``, ``operation``, ``error`` (the mapped
        :class:`~llm_core.errors.LLMError`), ``attempt``, ``will_retry``, ``call_id``.
        A call whose task was cancelled (or that an interrupt stopped) while it sent, waited to
        retry, opened or read a stream is reported once here with a
        :class:`~llm_core.errors.CancelledCallError` and ``will_retry`` false. Every call ends
        for observers exactly once: this event with ``will_retry`` false, or
        ``llm_core_after_response``.
        """

    # -- scopes: a conversation turn, a tool execution, a batch fetch ---------------------------
    # Each has a ``scope_id`` (unique in the process, from the call-id counter) and a
    # ``parent_id`` (the scope it was opened in, 0 for none); calls made inside name it as their
    # ``parent_id``. The end hook follows its start hook exactly once, also on failure; a scope
    # that was cancelled ends with a CancelledCallError as its ``error``.

    @hookspec
    def llm_core_turn_start(self, event: dict[str, Any]) -> None:
        """A conversation turn (``send`` or ``stream``) begins.

        ``event``: ``scope_id``, ``parent_id``, ``operation`` (``send`` / ``stream``),
        ``provider`` (the provider identifier, or ``router``), ``model`` (the conversation's
        model, None for the provider's default).
        """

    @hookspec
    def llm_core_turn_end(self, event: dict[str, Any]) -> None:
        """A conversation turn is over.

        ``event``: ``scope_id``, ``steps`` (model calls made), ``usage`` (their token counts
        summed, None without any), ``provider``, ``response_model`` and ``finish_reason`` (of
        the last model call: who answered, what it named), ``error`` (what ended the turn, a
        :class:`~llm_core.errors.CancelledCallError` when it was cancelled, or None),
        ``abandoned`` (a stream the caller stopped early).
        """

    @hookspec
    def llm_core_tool_start(self, event: dict[str, Any]) -> None:
        """A conversation runs a tool's function (calls that are denied, invalid or answered by
        the application run nothing and have no event).

        ``event``: ``scope_id``, ``parent_id`` (the turn), ``tool_name``, ``tool_call_id``,
        ``tool_type`` (``function``; ``extension`` for a tool of an MCP server), ``description``,
        ``server`` (the MCP server's name, None for a function), ``call`` (the
        :class:`~llm_core.tools.ToolCall` itself, with the arguments).
        """

    @hookspec
    def llm_core_tool_end(self, event: dict[str, Any]) -> None:
        """The tool's function returned or raised.

        ``event``: ``scope_id``, ``tool_name``, ``error`` (the exception, or None), ``result``
        (the text sent back to the model).
        """

    @hookspec
    def llm_core_tool_approval(self, event: dict[str, Any]) -> None:
        """A call was deferred for a person's approval (in a turn), or approved or denied
        (``chat.approve`` / ``chat.deny``, usually outside any turn). Not a scope: one event.

        ``event``: ``parent_id`` (the turn, or 0), ``decision`` (``deferred``, ``approved``,
        ``denied``), ``tool_name``, ``tool_call_id``, ``reason`` (a denial's), ``call`` (the
        :class:`~llm_core.tools.ToolCall`).
        """

    @hookspec
    def llm_core_batch_start(self, event: dict[str, Any]) -> None:
        """A batch is worked on: ``operation`` ``run`` (a whole :func:`llm_core.batch.run`) or
        ``results`` (a provider job's results are read: ``job.results()``, sync or async).

        ``event``: ``scope_id``, ``parent_id``, ``operation``; a run: ``mode``; a reading:
        ``provider``, ``job_id``, ``items`` (how many the job holds).
        """

    @hookspec
    def llm_core_batch_item(self, event: dict[str, Any]) -> None:
        """One item's result of a batch job was read.

        ``event``: ``scope_id`` (the batch fetch), ``provider``, ``job_id``, ``custom_id``,
        ``kind`` (``chat``, ``json``, ``embedding``, ``decision``), ``model``, ``usage`` (a dict,
        or None), ``response_model``, ``response_id``, ``finish_reason``, ``response`` (the parsed response
        itself, None on failure), ``error`` (the item's :class:`~llm_core.errors.LLMError`, or
        None).
        """

    @hookspec
    def llm_core_batch_end(self, event: dict[str, Any]) -> None:
        """The run or the reading is over (also when the reader stopped early, or on failure).

        ``event``: ``scope_id``, ``error`` (what stopped it, or None), and unless it failed:
        ``read`` (items done or read), ``failed`` (of them, errors), ``provider`` (a run: what it
        ran on; a reading: the provider), ``job_id`` (a reading).
        """
