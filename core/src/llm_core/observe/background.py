"""Run a slow observer on a thread of its own, off the caller's thread and event loop.

Observer hooks are called synchronously in the caller's thread (on the async path: on the event
loop), which an observer that writes to a database or posts to a server must not block.
:class:`BackgroundObserver` wraps such an observer: its hooks only queue the event, and one
worker thread hands the events to the wrapped observer, in order. An observer that needs the
caller's context (an OpenTelemetry span parent) must stay synchronous and fast instead.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from llm_core.hooks import PROJECT, hookimpl
from llm_core.observe.observers import OBSERVER_HOOKS

logger = logging.getLogger("llm_core.calls")

Hook = Callable[..., object]


def _implemented(observer: object, name: str) -> Hook | None:
    """``observer``'s implementation of hook ``name``, if it marked one with ``hookimpl``."""
    target = getattr(observer, name, None)
    return target if callable(target) and hasattr(target, f"{PROJECT}_impl") else None


class BackgroundObserver:
    """Wraps ``observer`` so that its hooks run on a worker thread; register the wrapper with
    ``registry.add_observer(BackgroundObserver(observer))``.

    The caller pays for putting the event on a queue. The queue holds at most ``max_pending``
    events: when the worker falls that far behind, further events are dropped (counted in
    :attr:`dropped`, with one warning) rather than making calls wait. :meth:`flush` waits for the
    queue to drain; at interpreter exit the queue is drained for up to ``exit_timeout`` seconds.
    """

    def __init__(self, observer: object, *, max_pending: int = 10_000, exit_timeout: float = 2.0) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.observer = observer
        #: Events dropped because ``max_pending`` events were already waiting.
        self.dropped = 0
        self._queue: queue.Queue[tuple[Hook, dict[str, Any]] | None] = queue.Queue(max_pending)
        self._pending = 0  # queued or being handled: what flush() waits for
        self._idle = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False
        for name in OBSERVER_HOOKS:
            target = _implemented(observer, name)
            if target is not None:  # pluggy reads hook implementations from the instance
                setattr(self, name, self._forwarder(target))
        atexit.register(_close_at_exit, weakref.ref(self), exit_timeout)

    def __repr__(self) -> str:
        return f"BackgroundObserver({self.observer!r})"

    def _forwarder(self, target: Hook) -> Hook:
        @hookimpl
        def forward(event: dict[str, Any]) -> None:
            self._put(target, event)

        return forward

    def _put(self, target: Hook, event: dict[str, Any]) -> None:
        # each observer already gets its own copy of the event, so the worker may keep it
        with self._idle:
            if self._closed:
                return
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="llm-core-observer", daemon=True)
                self._worker.start()
            try:
                self._queue.put_nowait((target, event))
            except queue.Full:
                self.dropped += 1
                if self.dropped == 1:
                    logger.warning("%r is %d events behind: dropping events", self, self._queue.maxsize)
                return
            self._pending += 1

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            target, event = item
            try:
                target(event=event)
            except BaseException:  # like a synchronous observer's failure: logged, never fatal
                logger.exception("observer %r failed", self.observer)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event has been handled; ``False`` if ``timeout`` ran out first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Handle what is queued (up to ``timeout``), then stop the worker; later events are ignored."""
        drained = self.flush(timeout)
        with self._idle:
            self._closed = True
            worker, self._worker = self._worker, None
        if worker is not None:
            # after what is queued, the worker stops; still behind after ``timeout``, the
            # daemon worker ends with the process
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            worker.join(timeout if drained else 0)
        return drained


def _close_at_exit(ref: weakref.ref[BackgroundObserver], timeout: float) -> None:
    observer = ref()
    if observer is not None:
        observer.close(timeout)
