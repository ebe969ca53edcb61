"""What each claim requires, and how the kit probes it without sending anything."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from llm_core.features import BUILTIN_TOOLS, CHAT_OPTIONS, Feature
from llm_core.messages import ChatMessage
from llm_core.operation import Operation
from llm_core.operations import OPERATIONS, Operations
from llm_core.provider import BaseProvider
from llm_core.testing import scenarios as sc
from llm_core.tools import ToolSpec
from llm_core.wire import WIRES, ChatWire, DecisionWire, ModelsWire, members

# -- what each claim requires of the class, from the operation declarations -----------------

_DECIDE = Operations.decide
CHAT_HOOKS = members(ChatWire)
#: Feature → the plugin methods a class claiming it must implement (its route's protocol, see
#: :mod:`llm_core.wire`). A feature with no operation of its own (thinking, documents) is a part
#: of the chat call. Decisions need their own methods only where a model has native decisions
#: (:data:`NATIVE_DECISION_HOOKS`): the others are answered through structured output.
REQUIRED_HOOKS: dict[Feature, tuple[str, ...]] = {
    **dict.fromkeys(CHAT_OPTIONS, CHAT_HOOKS),  # thinking, built-in and custom tools
    Feature.DOCUMENTS: CHAT_HOOKS,
    **{op.feature: members(op.route.wire) for op in OPERATIONS if op is not _DECIDE},
}
NATIVE_DECISION_HOOKS = members(DecisionWire)
LIST_MODELS_HOOKS = members(ModelsWire)
#: Every method that sends: the SDK calls of every family, sync and async.
SEND_HOOKS = tuple(
    dict.fromkeys(name for wire in WIRES for name in members(wire) if name.startswith(("_send", "_asend")))
)


def supports_helper(feature: Feature) -> str:
    """The name of an interface's ``supports_<feature>()`` helper (where it has one)."""
    return f"supports_{feature.value}"


def _probe(op: Operation) -> Callable[[Any, str | None], Any]:
    args, options = op.example
    return lambda api, model: getattr(api, op.name)(*args, **{**options, "model": model})


#: The settings a built-in tool cannot go without, for its probe.
_BUILTIN_SETTINGS: dict[Feature, dict[str, Any]] = {
    Feature.FILE_SEARCH: {"stores": ["store"]},
    Feature.REMOTE_MCP: {"server_label": "probe", "server_url": "https://mcp.example.org/mcp"},
}


def _builtin_probe(feature: Feature) -> Callable[[Any, str | None], Any]:
    tool = {"type": feature.value, **_BUILTIN_SETTINGS.get(feature, {})}
    return lambda api, model: api.chat_completion("Hello.", model=model, builtin_tools=[tool])


#: One call per feature, made with a model that lacks it: it must be refused before sending
#: (each operation's example; thinking and documents as options of a chat).
FEATURE_PROBES: dict[Feature, Callable[[Any, str | None], Any]] = {
    **{op.feature: _probe(op) for op in reversed(OPERATIONS)},  # the first operation of a feature wins
    Feature.THINKING: lambda api, m: api.chat_completion("Hello.", model=m, thinking=True),
    Feature.DOCUMENTS: lambda api, m: api.chat_completion([sc.document_message()], model=m),
    **{feature: _builtin_probe(feature) for feature in BUILTIN_TOOLS},
    Feature.CUSTOM_TOOLS: lambda api, m: api.chat_completion_with_tools("Hello.", [ToolSpec.custom("calc")], model=m),
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
    """Whether ``cls`` implements ``hook`` (the core itself implements no plugin method)."""
    try:
        impl = inspect.getattr_static(cls, hook)
    except AttributeError:
        return False
    return vars(BaseProvider).get(hook) is not impl
