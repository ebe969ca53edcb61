"""Building a chat request: the public arguments of every chat-shaped call (chat, completion,
streaming, tools, vision, documents, JSON) normalised and validated into one
:class:`ChatRequest` before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.messages import ChatMessage, ContentPart, ImagePart, MessageLike, Role
from llm_core.requests import ChatRequest, Prompt, ThinkingOptions, build, coerce_prompt
from llm_core.settings import ProviderSettings
from llm_core.streaming import CallContext

#: ``build_chat_request`` keywords that are ChatRequest fields rather than provider options.
REQUEST_FIELDS = ("top_p", "stop", "tools", "tool_choice", "json_mode", "response_schema")


class ChatRequestBuilding(ProviderSettings):
    """``build_chat_request``: the one place a chat call's input is checked."""

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
        if system:
            normalised = [ChatMessage.system(system), *normalised]
        chosen = model or prompt_settings.get("model") or self.default_model()
        self._require(feature, chosen)
        if thinking is not None and thinking is not False:
            self._require(Feature.THINKING, chosen)
        for message in normalised:
            if not isinstance(message.content, str):
                if message.role is Role.TOOL:
                    raise InvalidInputError("a tool result must be a string", provider=self.identifier)
                for part in message.content:
                    if part.type != "text":
                        self._check_part(part, chosen)
        options = dict(extra)
        fields = {key: options.pop(key) for key in REQUEST_FIELDS if key in options}
        return build(
            ChatRequest,
            self.identifier,
            messages=normalised,
            model=chosen,
            temperature=temperature if temperature is not None else prompt_settings.get("temperature"),
            max_tokens=max_tokens if max_tokens is not None else prompt_settings.get("max_tokens"),
            thinking=_thinking(thinking),
            call_context=_call_context(call_context, self.identifier),
            options=options,
            **fields,
        )

    def _check_part(self, part: ContentPart, model: str) -> None:
        """Check an image or document part before sending: the model must offer the feature.
        ``VisionCapable`` and ``DocumentCapable`` extend this with their format and size checks."""
        self._require(Feature.VISION if isinstance(part, ImagePart) else Feature.DOCUMENTS, model)


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
