"""What each claim requires, and how the kit probes it without sending anything."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from llm_core.capabilities import FEATURE_INTERFACES
from llm_core.features import Feature
from llm_core.messages import ChatMessage
from llm_core.provider import BaseProvider
from llm_core.testing import scenarios as sc

# -- what each claim requires of the class -------------------------------------------------

_CHAT_HOOKS = ("map_chat_request", "_send_chat", "_asend_chat", "parse_chat_response")
REQUIRED_HOOKS: dict[Feature, tuple[str, ...]] = {
    Feature.CHAT: _CHAT_HOOKS,
    Feature.COMPLETION: _CHAT_HOOKS,
    Feature.TOOLS: _CHAT_HOOKS,
    Feature.VISION: _CHAT_HOOKS,
    Feature.DOCUMENTS: _CHAT_HOOKS,
    Feature.JSON_MODE: _CHAT_HOOKS,
    Feature.THINKING: _CHAT_HOOKS,
    Feature.STREAMING: ("map_chat_request", "_send_stream", "_asend_stream", "new_stream_parser"),
    Feature.EMBEDDINGS: ("map_embedding_request", "_send_embeddings", "_asend_embeddings", "parse_embedding_response"),
    Feature.IMAGE: ("map_image_request", "_send_image", "_asend_image", "parse_image_response"),
}
NATIVE_DECISION_HOOKS = ("map_decision_request", "_send_decision", "_asend_decision", "parse_decision_response")
LIST_MODELS_HOOKS = ("_send_list_models", "_asend_list_models")
SEND_HOOKS = (
    "_send_chat",
    "_asend_chat",
    "_send_stream",
    "_asend_stream",
    "_send_embeddings",
    "_asend_embeddings",
    "_send_image",
    "_asend_image",
    "_send_decision",
    "_asend_decision",
    "_send_list_models",
    "_asend_list_models",
)
_CORE_CLASSES = frozenset({BaseProvider, *FEATURE_INTERFACES.values()})
SUPPORTS_HELPERS = {
    Feature.STREAMING: "supports_streaming",
    Feature.TOOLS: "supports_tools",
    Feature.VISION: "supports_vision",
    Feature.DOCUMENTS: "supports_documents",
}

#: One call per feature, made with a model that lacks it: it must be refused before sending.
FEATURE_PROBES: dict[Feature, Callable[[Any, str | None], Any]] = {
    Feature.CHAT: lambda api, m: api.chat_completion("Hello.", model=m),
    Feature.COMPLETION: lambda api, m: api.complete("Hello.", model=m),
    Feature.STREAMING: lambda api, m: api.stream_chat_completion("Hello.", model=m),
    Feature.TOOLS: lambda api, m: api.chat_completion_with_tools("Hello.", [sc.WEATHER_TOOL], model=m),
    Feature.VISION: lambda api, m: api.analyze_image(sc.PNG_IMAGE, "What is this?", mime_type="image/png", model=m),
    Feature.DOCUMENTS: lambda api, m: api.chat_completion([sc.document_message()], model=m),
    Feature.JSON_MODE: lambda api, m: api.generate_json("Hello.", sc.CityFacts, model=m),
    Feature.THINKING: lambda api, m: api.chat_completion("Hello.", model=m, thinking=True),
    Feature.EMBEDDINGS: lambda api, m: api.embeddings("Hello.", model=m),
    Feature.IMAGE: lambda api, m: api.generate_image("A red square.", model=m),
    Feature.DECISION: lambda api, m: api.decide(sc.DECISION_SUBJECT, list(sc.DECISION_QUESTIONS), model=m),
}

#: Invalid inputs (what, the feature it needs, the call): each must raise InvalidInputError unsent.
INVALID_INPUTS: tuple[tuple[str, Feature, Callable[[Any, str | None], Any]], ...] = (
    ("an empty message list", Feature.CHAT, lambda api, m: api.chat_completion([], model=m)),
    ("a blank prompt", Feature.CHAT, lambda api, m: api.chat_completion("   ", model=m)),
    (
        "an unknown role",
        Feature.CHAT,
        lambda api, m: api.chat_completion([{"role": "robot", "content": "hi"}], model=m),
    ),
    ("only a system message", Feature.CHAT, lambda api, m: api.chat_completion([ChatMessage.system("x")], model=m)),
    ("temperature 5", Feature.CHAT, lambda api, m: api.chat_completion("Hello.", temperature=5.0, model=m)),
    ("max_tokens 0", Feature.CHAT, lambda api, m: api.chat_completion("Hello.", max_tokens=0, model=m)),
    ("an empty stream prompt", Feature.STREAMING, lambda api, m: api.stream_chat_completion([], model=m)),
    (
        "an invalid tool name",
        Feature.TOOLS,
        lambda api, m: api.chat_completion_with_tools("Hello.", [{"name": "not a name!"}], model=m),
    ),
    ("an empty tool list", Feature.TOOLS, lambda api, m: api.chat_completion_with_tools("Hello.", [], model=m)),
    ("a schema that is no model", Feature.JSON_MODE, lambda api, m: api.generate_json("Hello.", int, model=m)),
    (
        "bytes that are not a PNG",
        Feature.VISION,
        lambda api, m: api.analyze_image(b"not an image", mime_type="image/png", model=m),
    ),
    (
        "an unsupported image format",
        Feature.VISION,
        lambda api, m: api.analyze_image(sc.PNG_IMAGE, mime_type="image/x-unknown", model=m),
    ),
    ("a blank embedding input", Feature.EMBEDDINGS, lambda api, m: api.embeddings(["ok", " "], model=m)),
    ("a blank image prompt", Feature.IMAGE, lambda api, m: api.generate_image("  ", model=m)),
    ("no decision questions", Feature.DECISION, lambda api, m: api.decide(sc.DECISION_SUBJECT, [], model=m)),
    (
        "an invalid question key",
        Feature.DECISION,
        lambda api, m: api.decide(
            sc.DECISION_SUBJECT, [{"kind": "yes_no", "key": "Bad Key", "instructions": "?"}], model=m
        ),
    ),
)


class SendAttempted(Exception):
    """Raised by :func:`recording_sends` in place of a real request."""


@contextmanager
def recording_sends(provider: BaseProvider) -> Iterator[list[str]]:
    """Within the block, every ``_send_*``/``_asend_*`` hook records its name and raises."""
    sent: list[str] = []
    saved: dict[str, Any] = {}
    for name in SEND_HOOKS:
        if not hasattr(provider, name):
            continue
        saved[name] = vars(provider).get(name, _MISSING)
        setattr(provider, name, _recorder(name, sent))
    try:
        yield sent
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                delattr(provider, name)
            else:
                setattr(provider, name, value)


_MISSING = object()


def _recorder(name: str, sent: list[str]) -> Callable[..., Any]:
    if name.startswith("_asend"):

        async def arecord(*args: Any, **kwargs: Any) -> Any:
            sent.append(name)
            raise SendAttempted(name)

        return arecord

    def record(*args: Any, **kwargs: Any) -> Any:
        sent.append(name)
        raise SendAttempted(name)

    return record


def overrides(cls: type, hook: str) -> bool:
    """Whether ``hook`` has an implementation other than the core's ``NotImplementedError`` stub."""
    try:
        impl = inspect.getattr_static(cls, hook)
    except AttributeError:
        return False
    return not any(vars(core).get(hook) is impl for core in _CORE_CLASSES)
