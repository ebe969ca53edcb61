"""Running a provider call: the retry policy around each attempt, errors mapped to the taxonomy,
observers told of every attempt, success and failure, the answer priced.

A provider holds one :class:`CallExecutor` (``provider.executor``), shared by every operation,
sync and async. :meth:`CallExecutor.run` (and its async twin ``arun``) is the one path of every
non-streamed call: mapped payload → ``send`` under the retry policy → ``parse``; streams take
the same steps in :mod:`.streams`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from llm_core.config import redact_exception
from llm_core.errors import LLMError, cancellation
from llm_core.features import Feature
from llm_core.observe import observers, scopes as observer_scopes
from llm_core.operation import Cost, Operation
from llm_core.pricing import Prices, effective_prices
from llm_core.provider.settings import ProviderSettings
from llm_core.redaction import without_url_credentials
from llm_core.requests import OBSERVED_OPTIONS
from llm_core.wire import Hooks

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class CallTrace:
    """One call as observers see it (its attempts are counted for them). ``call_id`` 0 means
    nobody is listening: then no event is built at all."""

    operation: str
    model: str | None
    features: list[str] = field(default_factory=list)
    call_id: int = 0
    attempts: int = 0
    started: float = field(default_factory=time.perf_counter)
    #: Request parameters observers see (:data:`~llm_core.requests.OBSERVED_OPTIONS`), when set.
    parameters: dict[str, Any] = field(default_factory=dict)
    #: Whether observers heard the call end (an answer, a final error, a cancellation): each call
    #: ends once for them (a stream closed after its METADATA is not abandoned).
    done: bool = False
    #: The request object, handed to observers by reference (never copied or serialised here).
    request: Any = None


class CallExecutor:
    """Retries, error mapping, pricing and observer events of one provider's calls."""

    def __init__(self, provider: ProviderSettings, map_error: Callable[[BaseException], LLMError]) -> None:
        #: The provider whose settings it was built with (it is built anew when they change).
        self.provider = provider
        self.identifier = provider.identifier
        #: The plugin's error mapper: an SDK exception → the taxonomy.
        self.map_error = map_error
        #: Model → its prices (catalogue and config overrides), read at the first call of each model.
        self._prices: dict[str, Prices | None] = {}

    def prices(self, model: str) -> Prices | None:
        """The prices of ``model`` here: its catalogue entry's, with the config file's
        ``[prices.MODEL]`` fields over them (read once per model and provider)."""
        key = model.removeprefix("models/")
        if key not in self._prices:
            p = self.provider
            info = p.provider_spec.model(key)
            self._prices[key] = effective_prices(key, info.prices if info else None, p._config_file)
        return self._prices[key]

    def mapped(self, error: BaseException) -> LLMError:
        """``error`` in the taxonomy (the SDK's exception chained), every known key removed."""
        if isinstance(error, LLMError):
            mapped = error
        else:
            mapped = self.map_error(error)
            mapped.__cause__ = error
            if mapped.provider is None:
                mapped.provider = self.identifier
        redact_exception(mapped)  # every known key: an upstream may quote one back in its error body
        return mapped

    def trace(
        self, operation: str, model: str | None, request: Any = None, feature: Feature | None = None
    ) -> CallTrace:
        """Observer bookkeeping for one call (all its attempts) of ``operation`` (the name
        observers hear), which uses ``feature``."""
        if not observers.active():
            return CallTrace(operation, model)
        features = observers.request_features(feature, request)
        parameters = {name: value for name in OBSERVED_OPTIONS if (value := getattr(request, name, None)) is not None}
        return CallTrace(operation, model, features, observers.next_call_id(), parameters=parameters, request=request)

    # -- the one path of a call ---------------------------------------------------------------

    def run(self, op: Operation, request: Any, hooks: Hooks) -> Any:
        """``parse(send(map(request)), request)`` through ``hooks``: the send retried, errors
        mapped, observers told."""
        payload = hooks.map(request)
        call = self.trace(op.observed_as, request.model, request, op.feature)
        try:
            raw = self.provider.retry_policy.call(self._attempt, call, hooks.send, (payload,))
        except BaseException as exc:
            self.ended(call, exc)
            raise
        return self._parsed(call, hooks.parse, raw, request, op.cost)

    async def arun(self, op: Operation, request: Any, hooks: Hooks) -> Any:
        """The async twin of :meth:`run` (same mapper and parser)."""
        payload = hooks.map(request)
        call = self.trace(op.observed_as, request.model, request, op.feature)
        try:
            raw = await self.provider.retry_policy.acall(self._aattempt, call, hooks.asend, (payload,))
        except BaseException as exc:  # a task cancelled while it sent or waited to retry
            self.ended(call, exc)
            raise
        return self._parsed(call, hooks.parse, raw, request, op.cost)

    def execute(
        self,
        operation: str,
        model: str | None,
        send: Callable[..., R],
        *args: Any,
        trace: CallTrace | None = None,
    ) -> R:
        """Run ``send(*args)`` under the retry policy, mapping SDK errors and notifying observers.

        With ``trace`` the caller reports success itself (at the end of a stream).
        """
        self.provider._require_key()
        call = trace or self.trace(operation, model)
        try:
            result: R = self.provider.retry_policy.call(self._attempt, call, send, args)
        except BaseException as exc:
            self.ended(call, exc)
            raise
        if trace is None:
            self.emit_done(call, None)
        return result

    async def aexecute(
        self,
        operation: str,
        model: str | None,
        send: Callable[..., Awaitable[R]],
        *args: Any,
        trace: CallTrace | None = None,
    ) -> R:
        """The async twin of :meth:`execute`."""
        self.provider._require_key()
        call = trace or self.trace(operation, model)
        try:
            result: R = await self.provider.retry_policy.acall(self._aattempt, call, send, args)
        except BaseException as exc:
            self.ended(call, exc)
            raise
        if trace is None:
            self.emit_done(call, None)
        return result

    def _attempt(self, call: CallTrace, send: Callable[..., R], args: tuple[Any, ...]) -> R:
        """One attempt of a call: observers hear of it, an SDK error leaves it mapped."""
        self._begin_attempt(call)
        try:
            return send(*args)
        except Exception as exc:
            error = self.failed(call, exc)
            if error is exc:
                raise
        # raised outside the handler: chained as _mapped left it (the SDK exception, keys removed,
        # or a key-free stand-in for one that cannot be changed), and nothing chained implicitly
        raise error

    async def _aattempt(self, call: CallTrace, send: Callable[..., Awaitable[R]], args: tuple[Any, ...]) -> R:
        self._begin_attempt(call)
        try:
            return await send(*args)
        except Exception as exc:
            error = self.failed(call, exc)
            if error is exc:
                raise
        raise error  # outside the handler, as in _attempt

    def _parsed(self, call: CallTrace, parse: Callable[[Any, Any], T], raw: Any, request: Any, cost: Cost) -> T:
        """Parse a raw response; observers hear of success (with the parsed usage) or failure."""
        error: LLMError | None = None
        try:
            result = parse(raw, request)
        except Exception as exc:
            error = self.failed(call, exc, will_retry=False)
            if error is exc:
                raise
        if error is not None:
            raise error  # outside the handler, as in _attempt
        result = self.costed(result, request, cost)
        self.emit_done(call, getattr(result, "usage", None), result)
        return result

    def costed(self, result: T, request: Any, cost: Cost, *, batch: bool = False) -> T:
        """``result`` with ``usage.cost`` filled in from the model's prices by the ``cost`` rule
        (when known; ``batch``: at the batch API's share of them). The requested model is the
        one priced: answers name versions (``gemini-2.5-flash-001``)."""
        if cost is Cost.FREE:
            return result
        usage = getattr(result, "usage", None)
        model = getattr(request, "model", None) or getattr(result, "model", None)
        if not isinstance(model, str) or (usage is not None and usage.cost is not None):
            return result
        prices = self.prices(model)
        if prices is None:
            return result
        from llm_core.responses import Usage  # loaded by then: the parser built a response

        counted = usage or Usage()
        amount = prices.cost(counted, 1 if cost is Cost.IMAGE else 0, batch=batch)
        if amount is None:
            return result
        # the parser's fresh result takes the priced usage (a Usage is frozen: it is copied)
        result.usage = counted.model_copy(update={"cost": amount})  # type: ignore[attr-defined]
        return result

    def failed(self, call: CallTrace, exc: Exception, *, will_retry: bool | None = None) -> LLMError:
        """``exc`` mapped to the taxonomy, reported to observers (the caller raises it)."""
        error = self.mapped(exc)
        if will_retry is None:
            will_retry = (
                self.provider.retry_policy.should_retry(error)
                and call.attempts < self.provider.retry_policy.max_attempts
            )
        call.done = not will_retry
        if call.call_id:
            observers.emit(
                "llm_core_on_error", self._event(call, error=error, attempt=call.attempts, will_retry=will_retry)
            )
        return error

    def ended(self, call: CallTrace, exc: BaseException) -> None:
        """``exc`` ended the call's retry loop: observers hear the end of the call, once, unless
        they have (an error :meth:`failed` reported as not retried). Two ends are reported
        here: a cancellation (a cancelled task, an interrupt) as an ``llm_core_on_error`` with a
        :class:`~llm_core.errors.CancelledCallError`, and an error the policy did not retry after
        all, though its attempt was reported as retried (its deadline would have passed during
        the wait), again with ``will_retry`` false. A stream its reader closed is not ended here."""
        if call.done or isinstance(exc, GeneratorExit):
            return
        error = cancellation(exc, provider=self.identifier) or exc
        call.done = True
        if call.call_id:
            observers.emit("llm_core_on_error", self._event(call, error=error, attempt=call.attempts, will_retry=False))

    # -- observer events ----------------------------------------------------------------------

    def _event(self, call: CallTrace, **more: Any) -> dict[str, Any]:
        return {
            "provider": self.identifier,
            "model": call.model,
            "operation": call.operation,
            "call_id": call.call_id,
            **more,
        }

    def _begin_attempt(self, call: CallTrace) -> None:
        call.attempts += 1
        if call.call_id:
            observers.emit(
                "llm_core_before_request",
                self._event(
                    call,
                    attempt=call.attempts,
                    features=call.features,
                    base_url=without_url_credentials(self.provider.base_url),  # observers log it
                    parent_id=observer_scopes.current(),
                    request=call.request,
                    **call.parameters,
                ),
            )

    def emit_done(self, call: CallTrace, usage: Any, result: Any = None, *, abandoned: bool = False) -> None:
        call.done = True
        if not call.call_id:
            return
        observers.emit(
            "llm_core_after_response",
            self._event(
                call,
                attempts=call.attempts,
                usage=usage.model_dump() if usage is not None and hasattr(usage, "model_dump") else None,
                latency_ms=(time.perf_counter() - call.started) * 1000,
                response_model=getattr(result, "model", None),
                response_id=getattr(result, "response_id", None),
                finish_reason=getattr(result, "finish_reason", None) or getattr(result, "stop_reason", None),
                abandoned=abandoned,
                response=result,
            ),
        )
