"""The conformance kit's checks of how a chat's parameters are sent: ``temperature`` (``0.0``
included), ``max_tokens`` and ``tool_choice`` reach what the provider hands its send hook, or
are refused before sending, never dropped. Nothing is sent: the send hook records its payload
and stops the call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.retry import RetryPolicy
from llm_core.testing import scenarios as sc
from llm_core.testing.checks import ConformanceError, describe, expect, short

#: Values no provider would send by default, so that finding them in a payload means they were mapped.
TEMPERATURE = 0.37
MAX_TOKENS = 123


class _Captured(Exception):
    """Raised by the recording send hook once it has the payload."""


class Refused:
    """A call refused before sending (its ``InvalidInputError``)."""

    def __init__(self, error: InvalidInputError) -> None:
        self.error = error


def sent_payload(provider: BaseProvider, call: Callable[[], Any]) -> Any:
    """What ``call`` (a sync chat call) hands to ``_send_chat``, or :class:`Refused` when it is
    refused with ``InvalidInputError`` before sending; anything else fails the check."""
    captured: list[Any] = []

    def record(payload: Any) -> Any:
        captured.append(payload)
        raise _Captured

    saved, policy = vars(provider).get("_send_chat"), provider.retry_policy
    provider.retry_policy = RetryPolicy.none()
    setattr(provider, "_send_chat", record)  # noqa: B010 - an instance attribute over the method
    try:
        call()
    except InvalidInputError as exc:
        if not captured:
            return Refused(exc)
    except Exception as exc:  # the captured payload is the result; another failure is reported
        if not captured:
            raise ConformanceError(f"{provider.identifier}: the call failed before sending: {describe(exc)}") from exc
    finally:
        provider.retry_policy = policy
        if saved is None:
            delattr(provider, "_send_chat")
        else:
            setattr(provider, "_send_chat", saved)  # noqa: B010
    expect(captured, f"{provider.identifier}: the chat call returned without calling _send_chat")
    return captured[0]


def payload_values(payload: Any) -> Iterator[Any]:
    """Every leaf value of a payload (mappings, sequences and Pydantic models are walked)."""
    if isinstance(payload, BaseModel):
        payload = payload.model_dump()
    if isinstance(payload, dict):
        for value in payload.values():
            yield from payload_values(value)
    elif isinstance(payload, list | tuple):
        for value in payload:
            yield from payload_values(value)
    else:
        yield payload


def carries(payload: Any, number: float) -> bool:
    return any(isinstance(v, int | float) and not isinstance(v, bool) and v == number for v in payload_values(payload))


class ParameterChecks:
    """How temperature, max_tokens and tool_choice are sent (inherited by
    :class:`~llm_core.testing.conformance.ProviderConformance`)."""

    def model(self, provider: BaseProvider, feature: Feature) -> str | None:
        """The model a check uses for ``feature`` (defined by ``ProviderConformance``)."""
        raise NotImplementedError

    def test_sampling_parameters_are_sent(self, provider: BaseProvider) -> None:
        pid = provider.identifier
        if not provider.supports_feature(Feature.CHAT):
            pytest.skip(f"{pid} does not claim chat")
        model = self.model(provider, Feature.CHAT)

        def chat(**options: Any) -> Any:
            return sent_payload(provider, lambda: provider.chat_completion(sc.CHAT_PROMPT, model=model, **options))

        plain = chat()
        expect(not isinstance(plain, Refused), f"{pid}: a plain chat was refused: {short(plain)}")
        for name, value in (("temperature", TEMPERATURE), ("max_tokens", MAX_TOKENS)):
            sent = chat(**{name: value})
            if isinstance(sent, Refused):
                continue  # refused openly (e.g. temperature on a reasoning model): allowed
            expect(
                carries(sent, value),
                f"{pid}: {name}={value} is nowhere in the payload handed to _send_chat (dropped?): {short(sent)}",
            )
        zero = chat(temperature=0.0)
        expect(
            isinstance(zero, Refused) or zero != plain,
            f"{pid}: temperature=0.0 sends the same payload as no temperature: 0.0 is a value (test `is not None`)",
        )

    def test_tool_choice_is_sent(self, provider: BaseProvider) -> None:
        pid = provider.identifier
        if not provider.supports_feature(Feature.TOOLS):
            pytest.skip(f"{pid} does not claim tools")
        model = self.model(provider, Feature.TOOLS)

        def with_tools(choice: str | None) -> Any:
            return sent_payload(
                provider,
                lambda: provider.chat_completion_with_tools(
                    sc.TOOL_PROMPT, [sc.WEATHER_TOOL], model=model, tool_choice=choice
                ),
            )

        sent = {choice: with_tools(choice) for choice in (None, "none", "required", sc.WEATHER_TOOL.name)}
        mapped = {choice: payload for choice, payload in sent.items() if not isinstance(payload, Refused)}
        expect(None in mapped, f"{pid}: a tool call without tool_choice was refused: {short(sent[None])}")
        for choice, payload in mapped.items():
            for other, other_payload in mapped.items():
                if choice is not None and other != choice:
                    expect(
                        payload != other_payload,
                        f"{pid}: tool_choice={choice!r} sends the same payload as tool_choice={other!r}: "
                        "tool_choice is not mapped",
                    )
