"""A router sends a call that names its model only to providers that offer that model: listed in
their catalogue (with the features the call needs), without a catalogue at all, or declaring what
models outside their catalogue offer (``unknown_model_features``, in the router's settings for
the provider or in the config file). None → NoMatchingProviderError naming the model, before
anything is sent. The same holds for streams, async calls and conversations over a router."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_core import NoMatchingProviderError, Registry, StreamEventType
from llm_core.specs import ModelInfo
from llm_core.testing import FakeProvider, fake_spec
from llm_core.testing.fake import ALL_FEATURES

RegisterFake = Callable[..., FakeProvider]


def named(model: str) -> str:
    """The pattern of an error message naming ``model``."""
    return re.escape(repr(model))


def catalogue(*ids: str, features: Any = ALL_FEATURES) -> list[ModelInfo]:
    return [ModelInfo(model, features) for model in ids]


@pytest.fixture
def pair(registry: Registry, register_fake: RegisterFake) -> tuple[FakeProvider, FakeProvider]:
    """"a" (preferred) lists a-model, "b" lists b-model and b-embed (embeddings only)."""
    a = register_fake(registry, "a", models=catalogue("a-model"))
    b = register_fake(registry, "b", models=[*catalogue("b-model"), *catalogue("b-embed", features=["embeddings"])])
    return a, b


def test_a_call_goes_to_the_provider_listing_its_model(registry: Registry, pair: Any) -> None:
    a, b = pair
    router = registry.router("chat", prefer=["a", "b"])
    response = router.chat_completion("hi", model="b-model")
    assert response.metadata["answered_by"] == "b"
    assert response.metadata["fallback_from"] == []  # "a" was not tried, not failed
    assert a.requests == []
    assert [r["model"] for r in b.requests] == ["b-model"]
    assert router.chat_completion("hi").metadata["answered_by"] == "a"  # no model named: preference


def test_a_model_nobody_offers_is_refused_naming_it(registry: Registry, pair: Any) -> None:
    a, b = pair
    router = registry.router("chat", prefer=["a", "b"])
    with pytest.raises(NoMatchingProviderError, match=named("gpt-5.4-mini")):
        router.chat_completion("hi", model="gpt-5.4-mini")
    with pytest.raises(NoMatchingProviderError, match=named("gpt-5.4-mini")):
        router.stream_chat_completion("hi", model="gpt-5.4-mini")
    assert a.requests == [] and b.requests == []


def test_a_listed_model_without_the_feature_does_not_fit(registry: Registry, pair: Any) -> None:
    router = registry.router("chat", prefer=["a", "b"])
    with pytest.raises(NoMatchingProviderError, match="b-embed"):
        router.chat_completion("hi", model="b-embed")
    assert registry.router("embeddings").embeddings(["x"], model="b-embed").provider == "b"


async def test_streams_and_async_calls_follow_the_model(registry: Registry, pair: Any) -> None:
    a, b = pair
    router = registry.router("chat", prefer=["a", "b"])
    events = list(router.stream_chat_completion("hi", model="b-model"))
    assert events[-2].metadata is not None and events[-2].metadata.extra["answered_by"] == "b"
    assert (await router.aio.chat_completion("hi", model="b-model")).provider == "b"
    streamed = [e async for e in router.aio.stream_chat_completion("hi", model="b-model")]
    assert streamed[-1].type is StreamEventType.END
    assert a.requests == []
    assert len(b.requests) == 3


def test_the_router_settings_can_admit_unknown_models(registry: Registry, pair: Any) -> None:
    a, _ = pair
    router = registry.router("chat", prefer=["a", "b"], a={"unknown_model_features": ["chat", "streaming"]})
    assert router.chat_completion("hi", model="llama3.2").provider == "a"
    assert [r["model"] for r in a.requests] == ["llama3.2"]
    with pytest.raises(NoMatchingProviderError, match=named("llama3.2")):  # declared without tools
        router.chat_completion_with_tools("hi", [{"name": "f", "parameters": {"type": "object"}}], model="llama3.2")


def test_the_config_file_can_admit_unknown_models(
    registry: Registry, pair: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[providers.b]\nunknown_model_features = ["chat"]\n', encoding="utf-8")
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    router = registry.router("chat", prefer=["a", "b"])
    assert router.chat_completion("hi", model="llama3.2").provider == "b"
    assert [c.identifier for c in registry.candidates("chat", model="llama3.2")] == ["b"]
    assert [s.identifier for s in registry.supporting("chat", model="llama3.2")] == ["b"]


def test_a_provider_without_a_catalogue_takes_any_model(registry: Registry, register_fake: RegisterFake) -> None:
    register_fake(registry, "listed", models=catalogue("listed-model"))
    open_ended = register_fake(registry, "open", models=[])
    router = registry.router("chat", prefer=["listed", "open"])
    assert router.chat_completion("hi", model="anything").provider == "open"
    assert [r["model"] for r in open_ended.requests] == ["anything"]


def test_the_provider_is_built_as_for_a_call_naming_no_model(registry: Registry) -> None:
    """The call passes its model itself: the router's provider keeps its own default model, so a
    later call without a model is not sent to the model an earlier call named."""
    registry.register(fake_spec("a", models=catalogue("a-default", "a-other")))  # built by the router
    router = registry.router("chat")
    assert router.chat_completion("hi", model="a-other").model == "a-other"
    assert router.chat_completion("hi").model == "a-default"
    (candidate,) = router.candidates("chat_completion", (("hi",), {"model": "a-other"}))
    assert "with model a-other" in candidate.reasons[0]


def test_cheapest_ranks_by_the_named_model(registry: Registry, register_fake: RegisterFake) -> None:
    from llm_core.pricing import Prices

    cheap = ModelInfo("shared", ALL_FEATURES, prices=Prices.of(input="0.1", output="0.1"))
    dear = ModelInfo("shared", ALL_FEATURES, prices=Prices.of(input="9", output="9"))
    default = ModelInfo("default", ALL_FEATURES, prices=Prices.of(input="0.01", output="0.01"))
    free = ModelInfo("x", ALL_FEATURES, prices=Prices.of(input="0", output="0"))
    register_fake(registry, "dear", models=[free, dear])  # the cheapest for a call naming no model
    register_fake(registry, "cheap", models=[default, cheap])
    router = registry.router("chat", prefer="cheapest")
    assert router.chat_completion("hi", model="shared").provider == "cheap"


def test_a_conversation_over_a_router_follows_its_model(registry: Registry, pair: Any) -> None:
    a, b = pair
    router = registry.router("chat", prefer=["a", "b"])
    assert router.conversation(model="b-model").send("hi").provider == "b"
    assert [e.type for e in router.conversation(model="b-model").stream("hi")][-1] is StreamEventType.END
    with pytest.raises(NoMatchingProviderError, match=named("gpt-5.4-mini")):
        router.conversation(model="gpt-5.4-mini")  # refused when made, before anything is sent
    assert a.requests == []
    assert len(b.requests) == 2


async def test_an_async_conversation_over_a_router_follows_its_model(registry: Registry, pair: Any) -> None:
    a, _ = pair
    router = registry.router("chat", prefer=["a", "b"])
    assert (await router.aio.conversation(model="b-model").send("hi")).provider == "b"
    assert a.requests == []


def test_the_real_plugins_offer_their_own_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reported case: an OpenAI model through a router preferring Gemini."""
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test-key-0001")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0002")
    registry = Registry.discover()
    router = registry.router("chat", prefer=["gemini", "openai"])
    named = [c.identifier for c in router.candidates("chat_completion", (("hi",), {"model": "gpt-5.4-mini"}))]
    assert named == ["openai"]
    named = [c.identifier for c in router.candidates("chat_completion", (("hi",), {"model": "gemini-2.5-flash"}))]
    assert named == ["gemini", "vertex"]  # Vertex AI serves Gemini's models too, after the preferred one
    with pytest.raises(NoMatchingProviderError, match="no-such-model"):
        router.candidates("chat_completion", (("hi",), {"model": "no-such-model"}))
