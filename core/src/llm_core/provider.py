"""The provider base class that plugins subclass.

A plugin writes, per operation, a pure request mapper (``map_*``), the SDK call in sync and
async form (``_send_*`` / ``_asend_*``), a pure response parser (``parse_*``) and one error
mapper (``map_error``). Everything else (validation, retries, observers, timing, stream event
order) lives here once and serves both the sync methods and the :attr:`aio` twins.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from llm_core import observers
from llm_core.config import (
    Secret,
    hide_secrets,
    provider_section,
    redact_exception,
    resolve_api_key,
    resolve_setting,
)
from llm_core.errors import (
    ConfigurationError,
    InvalidInputError,
    LLMError,
    PluginLoadError,
    ProviderConnectionError,
    ProviderError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature
from llm_core.messages import (
    ChatMessage,
    DocumentPart,
    ImagePart,
    MessageLike,
    Role,
    plain_messages,
    validated_messages,
)
from llm_core.requests import ChatRequest, Prompt, ThinkingOptions, build, coerce_prompt, plain_chat_request
from llm_core.responses import CompletionResponse, ConnectionStatus, Usage
from llm_core.retry import RetryPolicy
from llm_core.specs import ProviderSpec
from llm_core.streaming import CallContext, StreamEvent, StreamEventType, StreamMetadata

if TYPE_CHECKING:
    from llm_core.aio import AsyncProvider
    from llm_core.conversation import Conversation

T = TypeVar("T")
R = TypeVar("R")


class StreamParser(Protocol):
    """Turns SDK stream chunks into TOKEN events, incrementally.

    ``feed`` may raise an :class:`LLMError` (e.g. an error event in the stream); ``finish``
    gives the metadata (usage, stop reason, tool calls) once the stream is exhausted.
    """

    def feed(self, chunk: Any) -> Sequence[StreamEvent]: ...

    def finish(self) -> StreamMetadata: ...


class BaseProvider:
    """Common behaviour of every provider. Subclass it together with capability mixins."""

    #: The spec this class implements (set by the plugin; the registry may pass another).
    spec: ClassVar[ProviderSpec | None] = None
    #: Setting name → environment variables read when neither argument nor config file sets it.
    env_settings: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: Default request timeout in seconds.
    default_timeout: ClassVar[float] = 60.0
    #: :meth:`implemented_features` of this very class, once computed.
    _implemented_features: ClassVar[frozenset[Feature] | None] = None

    def __init__(
        self,
        *,
        spec: ProviderSpec | None = None,
        api_key: str | Secret | None = None,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | Mapping[str, Any] | None = None,
        config_file: str | Path | None = None,
        **options: Any,
    ) -> None:
        chosen = spec or type(self).spec
        if chosen is None:
            raise PluginLoadError(f"{type(self).__name__} has no ProviderSpec")
        self._spec = chosen
        self._config_file = Path(config_file) if config_file else None
        self._explicit: dict[str, Any] = hide_secrets(  # kept for configure(): no key in clear
            {
                "api_key": api_key,
                "model": model,
                "base_url": base_url,
                "timeout": timeout,
                "retry": retry,
                **options,
            }
        )
        self._check_declared_features()
        #: Catalogue model → the features it offers here, filled by the first check of each model.
        self._catalogue_features: dict[str, frozenset[Feature]] = {}
        self._apply_settings()
        self._aio: AsyncProvider | None = None

    # -- settings -------------------------------------------------------------------------

    def _apply_settings(self) -> None:
        section = provider_section(self.identifier, self._config_file)
        explicit = self._explicit
        self.api_key: Secret | None = resolve_api_key(
            self.identifier,
            explicit.get("api_key"),
            section=section,
            env=self._spec.credential_env,
            required=self._spec.requires_credentials,
        )

        def setting(name: str) -> Any:
            return resolve_setting(name, explicit.get(name), section=section, env=self.env_settings.get(name, ()))

        self._model: str | None = setting("model") or self._spec.default_model
        self.base_url: str | None = setting("base_url")
        timeout = setting("timeout")
        try:
            self.timeout = float(timeout) if timeout is not None else self.default_timeout
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"timeout must be a number of seconds, got {timeout!r}", provider=self.identifier
            ) from None
        if self.timeout <= 0:
            raise ConfigurationError("timeout must be positive", provider=self.identifier)
        retry = explicit.get("retry")
        if retry is None:
            retry = section.get("retry", {})
        self.retry_policy = retry if isinstance(retry, RetryPolicy) else RetryPolicy.from_mapping(retry)
        reserved = {"api_key", "model", "base_url", "timeout", "retry"}
        file_options = {k: v for k, v in section.items() if k not in reserved}
        # credential-named options (headers, query keys) are kept as Secret, like api_key
        self.options: dict[str, Any] = hide_secrets(
            {**file_options, **{k: v for k, v in explicit.items() if k not in reserved}}
        )
        self._reset_clients()

    def configure(self, config: Mapping[str, Any]) -> None:
        """Change settings (same names as the constructor); clients are rebuilt on next use."""
        self._explicit.update(hide_secrets(config))
        self._apply_settings()

    def _reset_clients(self) -> None:
        """Drop cached SDK clients (plugins override to clear their own)."""

    # -- identity and capabilities ---------------------------------------------------------

    @property
    def provider_spec(self) -> ProviderSpec:
        return self._spec

    @property
    def identifier(self) -> str:
        return self._spec.identifier

    @property
    def name(self) -> str:
        return self._spec.name

    def default_model(self) -> str:
        if not self._model:
            raise ConfigurationError(
                f"no model configured for {self.identifier}: pass model=... ", provider=self.identifier
            )
        return self._model

    def is_available(self) -> bool:
        """Configured and usable (a key is present when one is needed). Sends nothing."""
        return self.api_key is not None or not self._spec.requires_credentials

    @classmethod
    def implemented_features(cls) -> frozenset[Feature]:
        """Features this class implements, from the capability mixins it inherits."""
        # Kept on the class itself: every call checks it, and a function-level import costs
        # more than the rest of the check.
        found: frozenset[Feature] | None = cls.__dict__.get("_implemented_features")
        if found is None:
            from llm_core.capabilities import implemented_features

            found = implemented_features(cls)  # type: ignore[arg-type]  # classes are hashable
            cls._implemented_features = found
        return found

    def _check_declared_features(self) -> None:
        missing = self._spec.features - self.implemented_features()
        if missing:
            names = ", ".join(sorted(f.value for f in missing))
            raise PluginLoadError(
                f"provider {self.identifier!r} declares {names} but {type(self).__name__} does "
                "not implement the matching capability interface",
                distribution=self._spec.distribution,
            )

    def supports_feature(self, feature: Feature | str, model: str | None = None) -> bool:
        """Whether ``feature`` is offered (for ``model`` when given). Unknown names raise."""
        wanted = Feature.parse(feature)
        return wanted in self.model_features(model) and wanted in self.implemented_features()

    def model_features(self, model: str | None = None) -> frozenset[Feature]:
        """Features of ``model``; unknown models get :meth:`unknown_model_features`."""
        if model is None:
            return self._spec.features
        info = self._spec.model(model)  # one lookup (spec.model_features would look it up again)
        if info is None:
            return self.unknown_model_features(model)
        return info.features & self._spec.features

    def unknown_model_features(self, model: str) -> frozenset[Feature]:
        """Features assumed for a model missing from the catalogue (option
        ``unknown_model_features`` overrides; default: the provider-level features)."""
        configured = self.options.get("unknown_model_features")
        if configured is not None:
            from llm_core.features import parse_features

            return parse_features(configured) & self._spec.features
        return self._spec.features

    def _require(self, feature: Feature, model: str) -> None:
        offered = self._catalogue_features.get(model)
        if offered is not None and feature in offered:  # every call checks: one lookup when it passes
            return
        if feature not in self.implemented_features() or feature not in self._spec.features:
            raise UnsupportedFeatureError(f"{self.name} does not support {feature.value}", provider=self.identifier)
        if feature not in self.model_features(model):
            raise UnsupportedFeatureError(
                f"model {model!r} of {self.name} does not support {feature.value}; "
                f"models that do: {', '.join(m.id for m in self._spec.models if feature in m.features) or 'none'}",
                provider=self.identifier,
            )
        if self._spec.model(model) is not None and type(self).model_features is BaseProvider.model_features:
            # a catalogue model's features depend on the (frozen) spec and the class only
            self._catalogue_features[model] = self.model_features(model) & self.implemented_features()

    @property
    def aio(self) -> AsyncProvider:
        """The async twins of every call: ``await provider.aio.chat_completion(...)``."""
        if self._aio is None:
            from llm_core.aio import AsyncProvider

            self._aio = AsyncProvider(self)
        return self._aio

    def __repr__(self) -> str:
        key = "set" if self.api_key is not None else "missing"
        return f"<{type(self).__name__} {self.identifier!r} model={self._model!r} api_key={key}>"

    # -- hooks every plugin implements ---------------------------------------------------

    def map_chat_request(self, request: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_chat(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _asend_chat(self, payload: dict[str, Any]) -> Awaitable[Any]:
        """An awaitable of the SDK's answer: an ``async def``, or a plain ``def`` that returns the
        SDK's own coroutine (one coroutine level less on every await of the call)."""
        raise NotImplementedError

    def parse_chat_response(self, raw: Any, request: ChatRequest) -> CompletionResponse:
        raise NotImplementedError

    def _send_list_models(self) -> list[str]:
        raise NotImplementedError

    async def _asend_list_models(self) -> list[str]:
        raise NotImplementedError

    def map_error(self, error: BaseException) -> LLMError:
        """Map an SDK exception to the taxonomy. The default wraps it as a ProviderError."""
        return ProviderError(f"{type(error).__name__}: {error}", provider=self.identifier)

    # -- request building (shared by sync and async) ----------------------------------------

    def build_chat_request(
        self,
        messages: Sequence[MessageLike] | str | Prompt,
        *,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        system: str | None = None,
        thinking: ThinkingOptions | bool | Mapping[str, Any] | None = None,
        call_context: CallContext | str | None = None,
        feature: Feature = Feature.CHAT,
        **extra: Any,
    ) -> ChatRequest:
        """Normalise and validate a chat call; raises :class:`InvalidInputError` before sending."""
        if type(messages) is list:  # no Prompt and no string to coerce
            usual = plain_messages(messages)  # once: None sends the list to validation below
            if (
                usual is not None
                and not extra
                and temperature is None
                and max_tokens is None
                and thinking is None
                and call_context is None
            ):  # the usual call: plain messages, perhaps a model and a system prompt, nothing else
                chosen = model or self.default_model()
                self._require(feature, chosen)
                request = plain_chat_request([ChatMessage.system(system), *usual] if system else usual, chosen)
                if request is not None:
                    return request
            normalised = usual if usual is not None else validated_messages(messages)
            prompt_settings = _NO_SETTINGS
        else:
            normalised, prompt_settings = coerce_prompt(messages)
        if system:
            normalised = [ChatMessage.system(system), *normalised]
        chosen = model or prompt_settings.get("model") or self.default_model()
        self._require(feature, chosen)
        if thinking is not None and thinking is not False:
            self._require(Feature.THINKING, chosen)
        for message in normalised:  # parts are checked here, before anything is sent
            if not isinstance(message.content, str):
                self._check_message_parts(message, message.content, chosen)
        if (
            not extra
            and not prompt_settings
            and temperature is None
            and max_tokens is None
            and thinking is None
            and call_context is None
        ):  # the common call: messages and a model only
            plain = plain_chat_request(normalised, chosen)
            if plain is not None:
                return plain
        options = dict(extra)
        fields = (
            {key: options.pop(key) for key in _REQUEST_FIELDS if key in options} if options else {}
        )  # most calls pass no extra options
        return build(
            ChatRequest,
            self.identifier,
            messages=normalised,
            model=chosen,
            temperature=temperature if temperature is not None else prompt_settings.get("temperature"),
            max_tokens=max_tokens if max_tokens is not None else prompt_settings.get("max_tokens"),
            thinking=None if thinking is None else _thinking(thinking),
            call_context=None if call_context is None else _call_context(call_context, self.identifier),
            options=options,
            **fields,
        )

    def _check_message_parts(self, message: ChatMessage, parts: Sequence[Any], model: str) -> None:
        from llm_core.capabilities import DocumentCapable, VisionCapable  # only messages with parts get here

        for part in parts:
            if isinstance(part, ImagePart):
                self._require(Feature.VISION, model)
                assert isinstance(self, VisionCapable)
                self.check_image(part)
            elif isinstance(part, DocumentPart):
                self._require(Feature.DOCUMENTS, model)
                assert isinstance(self, DocumentCapable)
                self.check_document(part)
        if message.role is Role.TOOL:
            raise InvalidInputError("a tool result must be a string", provider=self.identifier)

    # -- execution: one attempt, retries, observers ------------------------------------------

    def _event(self, operation: str, model: str | None, call_id: int, **more: Any) -> dict[str, Any]:
        return {"provider": self.identifier, "model": model, "operation": operation, "call_id": call_id, **more}

    def _mapped(self, error: BaseException) -> LLMError:
        if isinstance(error, LLMError):
            mapped = error
        else:
            mapped = self.map_error(error)
            mapped.__cause__ = error
            if mapped.provider is None:
                mapped.provider = self.identifier
        redact_exception(mapped)  # every known key: an upstream may quote one back in its error body
        return mapped

    def _trace(self, operation: str, model: str | None, request: Any = None) -> _CallTrace:
        """Observer bookkeeping for one call (all its attempts); inert when nobody observes."""
        if not observers.active():
            return _UNOBSERVED
        return _CallTrace(operation, model, observers.request_features(operation, request), observers.next_call_id())

    def _execute(
        self,
        operation: str,
        model: str | None,
        send: Callable[..., R],
        *args: Any,
        trace: _CallTrace | None = None,
    ) -> R:
        """Run ``send(*args)`` under the retry policy, mapping SDK errors and notifying observers.

        With ``trace`` the caller reports success itself (after parsing, or at the end of a stream).
        """
        call = trace or self._trace(operation, model)
        if not call.call_id:  # nobody observes: the first attempt runs here, as in _run
            started = time.monotonic()
            try:
                return send(*args)
            except Exception as exc:  # noqa: BLE001 - resume() raises it (mapped) unless it retries
                first = self._failed(call, exc)
            # resumed outside the handler, so that nothing is chained implicitly (see _attempt)
            retried: R = self.retry_policy.resume(first, started, self._attempt, call, send, args)
            return retried
        result: R = self.retry_policy.call(self._attempt, call, send, args)
        if trace is None:
            self._emit_done(call, None)
        return result

    async def _aexecute(
        self,
        operation: str,
        model: str | None,
        send: Callable[..., Awaitable[R]],
        *args: Any,
        trace: _CallTrace | None = None,
    ) -> R:
        call = trace or self._trace(operation, model)
        if not call.call_id:  # as in _execute
            started = time.monotonic()
            try:
                return await send(*args)
            except Exception as exc:  # noqa: BLE001 - as in _execute
                first = self._failed(call, exc)
            return await self.retry_policy.aresume(first, started, self._aattempt, call, send, args)
        result: R = await self.retry_policy.acall(self._aattempt, call, send, args)
        if trace is None:
            self._emit_done(call, None)
        return result

    def _attempt(self, call: _CallTrace, send: Callable[..., R], args: tuple[Any, ...]) -> R:
        """One attempt of a call: observers hear of it, an SDK error leaves it mapped."""
        if call.call_id:
            call.attempts += 1
            self._emit_before(call)
        try:
            return send(*args)
        except Exception as exc:
            error = self._failed(call, exc)
            if error is exc:
                raise
        # raised outside the handler: chained as _mapped left it (the SDK exception, keys removed,
        # or a key-free stand-in for one that cannot be changed), and nothing chained implicitly
        raise error

    async def _aattempt(self, call: _CallTrace, send: Callable[..., Awaitable[R]], args: tuple[Any, ...]) -> R:
        if call.call_id:
            call.attempts += 1
            self._emit_before(call)
        try:
            return await send(*args)
        except Exception as exc:
            error = self._failed(call, exc)
            if error is exc:
                raise
        raise error  # outside the handler, as in _attempt

    def _failed(self, call: _CallTrace, exc: Exception, *, will_retry: bool | None = None) -> LLMError:
        """``exc`` mapped to the taxonomy, reported to observers (the caller raises it)."""
        error = self._mapped(exc)
        if call.call_id:
            self._emit_error(call, error, will_retry=will_retry)
        return error

    def _emit_before(self, call: _CallTrace) -> None:
        observers.emit(
            "llm_core_before_request",
            self._event(call.operation, call.model, call.call_id, attempt=call.attempts, features=call.features),
        )

    def _emit_error(self, call: _CallTrace, error: LLMError, *, will_retry: bool | None = None) -> None:
        if will_retry is None:
            will_retry = self.retry_policy.should_retry(error) and call.attempts < self.retry_policy.max_attempts
        observers.emit(
            "llm_core_on_error",
            self._event(
                call.operation, call.model, call.call_id, error=error, attempt=call.attempts, will_retry=will_retry
            ),
        )

    def _emit_done(self, call: _CallTrace, usage: Any) -> None:
        observers.emit(
            "llm_core_after_response",
            self._event(
                call.operation,
                call.model,
                call.call_id,
                attempts=call.attempts,
                usage=usage.model_dump() if usage is not None and hasattr(usage, "model_dump") else None,
                latency_ms=(time.perf_counter() - call.started) * 1000,
            ),
        )

    def _parsed(self, call: _CallTrace, parse: Callable[[Any, Any], T], raw: Any, request: Any) -> T:
        """Parse a raw response; observers hear of success (with the parsed usage) or failure."""
        error: LLMError | None = None
        try:
            result = parse(raw, request)
        except Exception as exc:
            error = self._failed(call, exc, will_retry=False)
            if error is exc:
                raise
        if error is not None:
            raise error  # outside the handler, as in _attempt
        if call.call_id:
            self._emit_done(call, getattr(result, "usage", None))
        return result

    def _run(
        self,
        operation: str,
        request: Any,
        map_: Callable[[Any], dict[str, Any]],
        send: Callable[[dict[str, Any]], Any],
        parse: Callable[[Any, Any], T],
    ) -> T:
        payload = map_(request)
        if observers.active():
            call = self._trace(operation, request.model, request)
            raw = self.retry_policy.call(self._attempt, call, send, (payload,))  # _execute, with this trace
            return self._parsed(call, parse, raw, request)
        # Nobody observes (the usual call): what _attempt and _parsed do for _UNOBSERVED, in this
        # frame; only a failed first attempt goes on under the retry policy.
        started = time.monotonic()
        first: LLMError | None = None
        try:
            raw = send(payload)
        except Exception as exc:  # noqa: BLE001 - resume() raises it (mapped) unless it retries
            first = self._failed(_UNOBSERVED, exc)
        if first is not None:  # resumed outside the handler, as in _execute
            raw = self.retry_policy.resume(first, started, self._attempt, _UNOBSERVED, send, (payload,))
        try:
            return parse(raw, request)
        except Exception as exc:
            error = self._failed(_UNOBSERVED, exc, will_retry=False)
            if error is exc:
                raise
        raise error  # outside the handler, as in _attempt

    async def _arun(
        self,
        operation: str,
        request: Any,
        map_: Callable[[Any], dict[str, Any]],
        send: Callable[[dict[str, Any]], Awaitable[Any]],
        parse: Callable[[Any, Any], T],
    ) -> T:
        payload = map_(request)
        if observers.active():
            call = self._trace(operation, request.model, request)
            raw = await self.retry_policy.acall(self._aattempt, call, send, (payload,))
            return self._parsed(call, parse, raw, request)
        started = time.monotonic()  # as in _run
        first: LLMError | None = None
        try:
            raw = await send(payload)
        except Exception as exc:  # noqa: BLE001 - as in _run
            first = self._failed(_UNOBSERVED, exc)
        if first is not None:  # as in _run
            raw = await self.retry_policy.aresume(first, started, self._aattempt, _UNOBSERVED, send, (payload,))
        try:
            return parse(raw, request)
        except Exception as exc:
            error = self._failed(_UNOBSERVED, exc, will_retry=False)
            if error is exc:
                raise
        raise error  # outside the handler, as in _attempt

    # -- public calls every provider has --------------------------------------------------

    def chat_completion(self, messages: Sequence[MessageLike] | str | Prompt, **options: Any) -> CompletionResponse:
        """Chat: messages (typed, plain mappings, a string or a Prompt) → response.

        Options: ``model``, ``temperature``, ``max_tokens``, ``system``, ``thinking``,
        ``call_context``, ``top_p``, ``stop`` and provider-specific extras.
        """
        request = self.build_chat_request(messages, **options)
        return self._run("chat", request, self.map_chat_request, self._send_chat, self.parse_chat_response)

    def complete(self, prompt: str | Prompt, **options: Any) -> CompletionResponse:
        """Simple completion from one prompt."""
        request = self.build_chat_request(prompt, feature=Feature.COMPLETION, **options)
        return self._run("complete", request, self.map_chat_request, self._send_chat, self.parse_chat_response)

    def generate_text(self, prompt: str | Prompt, **options: Any) -> str:
        """The generated text for ``prompt``."""
        return self.complete(prompt, **options).content

    def answer(self, prompt: str | Prompt, **options: Any) -> str:
        """Same as :meth:`generate_text` (kept for dispatcher compatibility)."""
        return self.generate_text(prompt, **options)

    def conversation(self, **options: Any) -> Conversation:
        """A conversation with automatic tool calls (``system``, ``tools``, ``model``,
        ``max_steps`` and call options; see ``docs/conversations.md``)."""
        from llm_core.conversation import Conversation, ProviderBackend

        return Conversation(ProviderBackend(self), **options)

    def available_models(self) -> list[str]:
        """The live model list from the provider (``models/`` prefixes stripped)."""
        return self._execute("list_models", None, self._send_list_models)

    def test_connection(self) -> ConnectionStatus:
        """List models to prove key and network work; failures raise a connection error."""
        started = time.perf_counter()
        try:
            models = self.available_models()
        except LLMError as exc:
            raise ProviderConnectionError(f"connection test failed: {exc.message}", provider=self.identifier) from exc
        return ConnectionStatus(
            success=True,
            provider=self.identifier,
            models=models,
            message=f"connected to {self.name}: {len(models)} models available",
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    # -- streaming driver (used by StreamingCapable) ------------------------------------------

    def _stream_events(
        self, request: ChatRequest, open_stream: Callable[[dict[str, Any]], Iterator[Any]], parser: StreamParser
    ) -> Iterator[StreamEvent]:
        """TOKEN* METADATA END, or TOKEN* ERROR END. Only opening (up to the first chunk) is
        retried; once a chunk arrived a failure ends the stream with ERROR. The request is mapped
        here, so that an input the plugin refuses raises at the call, before anything is sent."""
        payload = self.map_chat_request(request)
        return self._stream_mapped(request, payload, open_stream, parser)

    def _stream_mapped(
        self,
        request: ChatRequest,
        payload: dict[str, Any],
        open_stream: Callable[[dict[str, Any]], Iterator[Any]],
        parser: StreamParser,
    ) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        first_token: float | None = None
        opened: Any = None
        chunks: Iterator[Any] | None = None
        call = self._trace("stream", request.model, request)
        try:

            def open_and_peek() -> tuple[Any, Iterator[Any], list[Any]]:
                stream = open_stream(payload)
                iterator = iter(stream)
                head = list(itertools.islice(iterator, 1))
                return stream, iterator, head

            opened, chunks, head = self._execute("stream", request.model, open_and_peek, trace=call)
            feed = parser.feed  # once per stream, not per chunk
            for chunk in itertools.chain(head, chunks):
                for event in feed(chunk):
                    if first_token is None and event.type is StreamEventType.TOKEN:
                        first_token = time.perf_counter()
                    yield event
            meta = self._finish_metadata(parser, request, started, first_token)
            if call.call_id:
                self._emit_done(call, _stream_usage(meta))
            yield StreamEvent.meta(meta)
        except Exception as exc:  # noqa: BLE001 - every failure becomes ERROR, then END
            error = self._mapped(exc)
            if call.call_id and chunks is not None:  # failures while opening were reported per attempt
                self._emit_error(call, error, will_retry=False)
            yield StreamEvent.failure(error)
        finally:
            # the iterator, and what _send_stream returned when that is another object (an SDK
            # stream whose __iter__ is a generator over it): its close releases the connection
            for closable in (chunks,) if opened is chunks else (chunks, opened):
                close = getattr(closable, "close", None)
                if close is not None:
                    close()
        yield StreamEvent.end()

    def _astream_events(
        self,
        request: ChatRequest,
        open_stream: Callable[[dict[str, Any]], Awaitable[AsyncIterator[Any]]],
        parser: StreamParser,
    ) -> AsyncIterator[StreamEvent]:
        """The async twin of :meth:`_stream_events` (mapped at the call, too)."""
        payload = self.map_chat_request(request)
        return self._astream_mapped(request, payload, open_stream, parser)

    async def _astream_mapped(
        self,
        request: ChatRequest,
        payload: dict[str, Any],
        open_stream: Callable[[dict[str, Any]], Awaitable[AsyncIterator[Any]]],
        parser: StreamParser,
    ) -> AsyncIterator[StreamEvent]:
        started = time.perf_counter()
        first_token: float | None = None
        opened: Any = None
        chunks: AsyncIterator[Any] | None = None
        call = self._trace("stream", request.model, request)
        try:

            async def open_and_peek() -> tuple[Any, AsyncIterator[Any], list[Any]]:
                stream = await open_stream(payload)
                iterator = stream.__aiter__()
                try:
                    head = [await iterator.__anext__()]
                except StopAsyncIteration:
                    head = []
                return stream, iterator, head

            opened, iterator, head = await self._aexecute("stream", request.model, open_and_peek, trace=call)
            chunks = iterator
            feed = parser.feed  # once per stream, not per chunk
            for chunk in head:
                for event in feed(chunk):
                    if first_token is None and event.type is StreamEventType.TOKEN:
                        first_token = time.perf_counter()
                    yield event
            async for chunk in iterator:
                for event in feed(chunk):
                    if first_token is None and event.type is StreamEventType.TOKEN:
                        first_token = time.perf_counter()
                    yield event
            meta = self._finish_metadata(parser, request, started, first_token)
            if call.call_id:
                self._emit_done(call, _stream_usage(meta))
            yield StreamEvent.meta(meta)
        except Exception as exc:  # noqa: BLE001 - every failure becomes ERROR, then END
            error = self._mapped(exc)
            if call.call_id and chunks is not None:  # failures while opening were reported per attempt
                self._emit_error(call, error, will_retry=False)
            yield StreamEvent.failure(error)
        finally:
            # the iterator, and what _asend_stream returned when that is another object (an SDK
            # stream whose __aiter__ is an async generator over it)
            for closable in (chunks,) if opened is chunks else (chunks, opened):
                close = getattr(closable, "aclose", None)
                if close is not None:
                    await close()
        yield StreamEvent.end()

    def _finish_metadata(
        self, parser: StreamParser, request: ChatRequest, started: float, first_token: float | None
    ) -> StreamMetadata:
        meta = parser.finish()
        now = time.perf_counter()
        return meta.model_copy(
            update={
                "time_to_first_token_ms": (first_token - started) * 1000 if first_token else None,
                "total_time_ms": (now - started) * 1000,
                "model": meta.model or request.model,
                "provider": self.identifier,
            }
        )


class _CallTrace:
    """One call as observers see it (attempts are counted for them); ``call_id`` 0 means nobody
    is listening, and every such call shares :data:`_UNOBSERVED`, which is never changed.

    A plain class with slots: one is built per call, and a dataclass's generated ``__init__``
    with default factories costs more than the rest of the bookkeeping."""

    __slots__ = ("attempts", "call_id", "features", "model", "operation", "started")

    def __init__(self, operation: str, model: str | None, features: list[str] | None = None, call_id: int = 0) -> None:
        self.operation = operation
        self.model = model
        self.features: list[str] = [] if features is None else features
        self.call_id = call_id
        self.attempts = 0
        self.started = time.perf_counter()


_UNOBSERVED = _CallTrace("", None)


def _stream_usage(meta: StreamMetadata) -> Usage:
    return Usage(
        prompt_tokens=meta.input_tokens or 0,
        completion_tokens=meta.output_tokens or 0,
        thinking_tokens=meta.thinking_tokens,
    )


_NO_SETTINGS: Mapping[str, Any] = MappingProxyType({})

#: ``build_chat_request`` keywords that are ChatRequest fields rather than provider options.
_REQUEST_FIELDS = ("top_p", "stop", "tools", "tool_choice", "json_mode", "response_schema")


def _call_context(value: CallContext | str | None, provider: str) -> CallContext | None:
    if value is None or isinstance(value, CallContext):
        return value
    try:
        return CallContext(value)
    except ValueError:
        names = ", ".join(c.value for c in CallContext)
        raise InvalidInputError(f"call_context {value!r} is unknown; use one of {names}", provider=provider) from None


def _thinking(value: ThinkingOptions | bool | Mapping[str, Any] | None) -> ThinkingOptions | None:
    if value is None or value is False:
        return None
    if value is True:
        return ThinkingOptions()
    if isinstance(value, ThinkingOptions):
        return value
    return build(ThinkingOptions, "request", **dict(value))
