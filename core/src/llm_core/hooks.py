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
        ``base_url`` (None for the provider's default host), and ``temperature``, ``max_tokens``,
        ``top_p`` when the request sets them. Called in the caller's thread and context (so an
        observer sees the application's current span); on the async path it runs on the event
        loop, so it must not block: hand slow work (exporting) to a thread or queue.
        """

    @hookspec
    def llm_core_after_response(self, event: dict[str, Any]) -> None:
        """A provider call succeeded.

        ``event``: ``provider``, ``model``, ``operation``, ``usage`` (or None), ``latency_ms``,
        ``attempts``, ``call_id``, ``response_model``, ``response_id`` (the provider's id of the
        answer) and ``finish_reason`` (when known; ``usage`` includes ``cached_tokens`` and
        ``cost``), ``abandoned`` (a stream the caller stopped before its end: no usage), and
        ``fallback_from`` when a router moved past failed providers.
        """

    @hookspec
    def llm_core_on_error(self, event: dict[str, Any]) -> None:
        """A provider call attempt failed.

        ``event``: ``provider``, ``model``, ``operation``, ``error`` (the mapped
        :class:`~llm_core.errors.LLMError`), ``attempt``, ``will_retry``, ``call_id``.
        """
