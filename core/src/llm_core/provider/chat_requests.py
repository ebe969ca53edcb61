"""Building a chat request: the public arguments of every chat-shaped call (chat, completion,
streaming, tools, vision, documents, JSON) normalised and validated into one
:class:`ChatRequest` before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llm_core.builtin_tools import coerce_builtin_tools
from llm_core.config import reveal_secrets
from llm_core.errors import ConfigurationError, InvalidInputError
from llm_core.features import Feature
from llm_core.messages import (
    URL_RULE,
    WEB_SCHEMES,
    ChatMessage,
    ContentPart,
    ImagePart,
    MessageLike,
    Role,
    TextPart,
    is_web_or_data_url,
)
from llm_core.provider.settings import ProviderSettings
from llm_core.requests import ChatRequest, Prompt, ThinkingOptions, build, coerce_prompt, refuse_surrogates
from llm_core.streaming import CallContext

#: ``build_chat_request`` keywords that are ChatRequest fields rather than provider options.
REQUEST_FIELDS = ("top_p", "stop", "tools", "tool_choice", "builtin_tools", "json_mode", "response_schema")
#: The ChatRequest fields a provider may take as call defaults (``call_defaults``); any other
#: call default is one of the plugin's per-call options.
DEFAULT_FIELDS = ("temperature", "max_tokens", "top_p", "stop")


class ChatRequestBuilding(ProviderSettings):
    """``build_chat_request``: the one place a chat call's input is checked, and where the
    provider's call defaults join it (so every chat-shaped call, batch lines included, gets them)."""

    def _apply_settings(self) -> None:
        super()._apply_settings()
        self._call_defaults = self._checked_call_defaults()

    def _checked_call_defaults(self) -> dict[str, Any]:
        """The call defaults set (``call_defaults`` names with a value in the options), in clear
        for the request; a request field's value is validated now, as a call's would be, so that a
        bad default fails at construction rather than at every call."""
        defaults = {
            name: reveal_secrets(value)
            for name, value in self.options.items()
            if name in self.call_defaults and value is not None
        }
        fields = {name: defaults[name] for name in DEFAULT_FIELDS if name in defaults}
        if fields:
            try:
                build(ChatRequest, self.identifier, messages=[], model="-", **fields)
            except InvalidInputError as exc:
                raise ConfigurationError(f"call default {exc.message}", provider=self.identifier) from None
        return defaults

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
        normalised, prompt_settings = coerce_prompt(messages)
        if system is not None:
            normalised = [ChatMessage.system(_system_text(system, self.identifier)), *normalised]
        chosen = self._model_or(model, lambda: prompt_settings.get("model") or self.default_model())
        self._require(feature, chosen)
        thinking_options = _thinking(thinking, self.identifier)
        if thinking_options is not None:
            self._require(Feature.THINKING, chosen)
        for index, message in enumerate(normalised):
            self._check_message(index, message, chosen)
        defaults = self._call_defaults
        options = {**{k: v for k, v in defaults.items() if k not in DEFAULT_FIELDS}, **extra}  # the call's win
        fields = {key: options.pop(key) for key in REQUEST_FIELDS if key in options}
        self._check_tools(fields, chosen)
        for name in ("top_p", "stop"):
            if fields.get(name) is None and name in defaults:
                fields[name] = defaults[name]
        request = build(
            ChatRequest,
            self.identifier,
            messages=normalised,
            model=chosen,
            temperature=_first(temperature, prompt_settings.get("temperature"), defaults.get("temperature")),
            max_tokens=_first(max_tokens, prompt_settings.get("max_tokens"), defaults.get("max_tokens")),
            thinking=thinking_options,
            call_context=_call_context(call_context, self.identifier),
            options=options,
            **fields,
        )
        for name in ("messages", "tools", "stop"):
            refuse_surrogates(getattr(request, name), name, self.identifier)
        return request

    def _check_tools(self, fields: dict[str, Any], model: str) -> None:
        """Built-in tools validated, and each one, like a custom tool, offered by the model."""
        if fields.get("builtin_tools") is not None:
            fields["builtin_tools"] = coerce_builtin_tools(fields["builtin_tools"], self.identifier) or None
            for tool in fields["builtin_tools"] or ():
                self._require(tool.feature, model)
        if any(getattr(tool, "kind", None) == "custom" for tool in fields.get("tools") or ()):
            self._require(Feature.CUSTOM_TOOLS, model)

    def _check_message(self, index: int, message: ChatMessage, model: str) -> None:
        """Refuse what no provider accepts in a turn: an empty turn, a tool result that is not a
        string, an image or document in a system message; check each image and document part."""
        where = f"message {index}"
        media = [] if isinstance(message.content, str) else [p for p in message.content if p.type != "text"]
        if message.role is Role.TOOL and not isinstance(message.content, str):
            raise InvalidInputError(f"{where}: a tool result must be a string", provider=self.identifier)
        if media and message.role is Role.SYSTEM:
            raise InvalidInputError(
                f"{where} is a system message with an {media[0].type} part: system instructions are text only, "
                f"so put the {media[0].type} in a user message",
                provider=self.identifier,
            )
        if not media and not message.text.strip() and _needs_text(message):
            raise InvalidInputError(
                f"{where} ({message.role.value}) is empty: give it some text", provider=self.identifier
            )
        for part in media:
            self._check_part(part, model)

    def url_schemes(self) -> frozenset[str]:
        """The URL schemes of image and document parts this provider takes (http, https, data;
        a provider whose service reads Cloud Storage adds ``gs``)."""
        return WEB_SCHEMES

    def _check_part(self, part: ContentPart, model: str) -> None:
        """Check an image or document part before sending: the model must offer the feature.
        ``VisionCapable`` and ``DocumentCapable`` extend this with their format and size checks.
        The URL is checked again: a part made with ``model_construct`` skipped its validators."""
        if not isinstance(part, TextPart) and part.url is not None:
            if not is_web_or_data_url(part.url):
                raise InvalidInputError(f"{part.type} {URL_RULE}", provider=self.identifier)
            scheme = part.url.partition(":")[0].lower()
            if scheme not in self.url_schemes():
                raise InvalidInputError(
                    f"{part.type} url: {self.name} does not read {scheme}: URLs here; give the bytes, or an "
                    f"{' or '.join(sorted(self.url_schemes()))} URL",
                    provider=self.identifier,
                )
        self._require(Feature.VISION if isinstance(part, ImagePart) else Feature.DOCUMENTS, model)


def _first(*values: Any) -> Any:
    """The first value that is set (``0.0`` is a value), else ``None``."""
    return next((value for value in values if value is not None), None)


def _call_context(value: CallContext | str | None, provider: str) -> CallContext | None:
    if value is None or isinstance(value, CallContext):
        return value
    try:
        return CallContext(value)
    except ValueError:
        names = ", ".join(c.value for c in CallContext)
        raise InvalidInputError(f"call_context {value!r} is unknown; use one of {names}", provider=provider) from None


def _thinking(value: Any, provider: str) -> ThinkingOptions | None:
    if value is None or value is False:
        return None
    if value is True:
        return ThinkingOptions()
    if isinstance(value, ThinkingOptions):
        return value
    if isinstance(value, Mapping):
        return build(ThinkingOptions, provider, **{str(key): item for key, item in value.items()})
    raise InvalidInputError(
        f"thinking must be True, False, a ThinkingOptions or a mapping such as {{'level': 'low'}}, "
        f"not {type(value).__name__}",
        provider=provider,
    )


def _system_text(value: Any, provider: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"system must be a string, not {type(value).__name__}", provider=provider)
    if not value.strip():
        raise InvalidInputError(
            "system is blank: give the instructions as text, or leave system out", provider=provider
        )
    return value


def _needs_text(message: ChatMessage) -> bool:
    """Whether a turn without text says nothing: an assistant turn may carry only tool calls or
    replay metadata, a tool result may be empty."""
    if message.role is Role.TOOL:
        return False
    if message.role is Role.ASSISTANT:
        return not (message.tool_calls or message.metadata or message.model_extra)
    return True
