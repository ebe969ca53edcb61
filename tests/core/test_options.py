"""A provider-neutral per-call option is declared once, on its ChatRequest field: calls, prompts,
call defaults, both plugins' settings, observers and the docs' option tables follow from it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llm_core import Prompt
from llm_core.hooks import hookimpl
from llm_core.registry import Registry
from llm_core.requests import CALL_FIELDS, OBSERVED_OPTIONS, SAMPLING_OPTIONS, ChatRequest
from llm_core.testing import FakeProvider, fake_spec

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: A value each sampling option accepts, and another one.
VALUES: dict[str, tuple[Any, Any]] = {
    "temperature": (0.0, 0.7),
    "max_tokens": (16, 32),
    "top_p": (0.5, 0.9),
    "stop": (["END"], ["STOP"]),
}


class Defaulting(FakeProvider):
    """A fake that takes every sampling option as a call default."""

    call_defaults: ClassVar[frozenset[str]] = SAMPLING_OPTIONS
    spec = fake_spec("defaulting")


def test_the_sampling_options_are_read_from_the_request_fields() -> None:
    assert set(VALUES) == SAMPLING_OPTIONS, "give each new option two values here"
    assert SAMPLING_OPTIONS <= CALL_FIELDS <= set(ChatRequest.model_fields)
    assert set(OBSERVED_OPTIONS) <= SAMPLING_OPTIONS
    assert all(attribute.startswith("gen_ai.request.") for attribute in OBSERVED_OPTIONS.values())


@pytest.mark.parametrize("name", sorted(SAMPLING_OPTIONS))
def test_an_option_comes_from_the_call_else_the_prompt_else_the_call_default(name: str) -> None:
    default, given = VALUES[name]
    provider = Defaulting(**{name: default})
    assert getattr(provider.builder.chat("hi"), name) == default
    assert getattr(provider.builder.chat("hi", **{name: given}), name) == given
    if name in Prompt.model_fields:
        assert getattr(provider.builder.chat(Prompt(text="hi", **{name: given})), name) == given
    assert name not in provider.builder.chat("hi").options  # a request field, not a provider option


@pytest.mark.parametrize("name", sorted(SAMPLING_OPTIONS))
def test_a_bad_call_default_is_refused_when_the_provider_is_built(name: str) -> None:
    from llm_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=f"call default invalid {name}"):
        Defaulting(**{name: "not a value" if name != "stop" else 7})


def test_observers_hear_each_observed_option_that_is_set() -> None:
    heard: list[dict[str, Any]] = []

    class Listener:
        @hookimpl
        def llm_core_before_request(self, event: dict[str, Any]) -> None:
            heard.append(event)

    registry = Registry.discover()
    registry.register(fake_spec("defaulting"))
    registry.add_observer(Listener())
    provider = registry.get("defaulting")
    provider.chat_completion("hi", **{name: VALUES[name][1] for name in OBSERVED_OPTIONS})
    assert {name: heard[-1].get(name) for name in OBSERVED_OPTIONS} == {n: VALUES[n][1] for n in OBSERVED_OPTIONS}


def test_each_bundled_plugin_takes_the_sampling_options_its_api_has_as_call_defaults() -> None:
    from core_gemini_plugin.provider import GeminiProvider
    from core_openai_plugin import request_mapper
    from core_openai_plugin.chat_provider import ChatCompletionsProvider
    from core_openai_plugin.provider import OpenAIProvider

    assert GeminiProvider.call_defaults >= SAMPLING_OPTIONS
    assert ChatCompletionsProvider.call_defaults >= SAMPLING_OPTIONS
    assert OpenAIProvider.call_defaults & SAMPLING_OPTIONS == SAMPLING_OPTIONS - request_mapper.REFUSED_SAMPLING.keys()


@pytest.mark.parametrize(
    ("page", "row"),
    [
        ("gemini.md", r"^\| `temperature`.*call defaults"),
        ("observers.md", r"^\| `llm_core_before_request\(event\)`"),
        ("observability.md", r"^\| `gen_ai\.request\.temperature`"),
    ],
)
def test_the_docs_option_tables_name_every_declared_option(page: str, row: str) -> None:
    (line,) = [line for line in (DOCS / page).read_text(encoding="utf-8").splitlines() if re.search(row, line)]
    wanted = SAMPLING_OPTIONS if page == "gemini.md" else set(OBSERVED_OPTIONS)
    missing = [name for name in sorted(wanted) if f"`{name}`" not in line and f".{name}`" not in line]
    assert missing == [], f"docs/{page}: the option table does not name {missing}"
