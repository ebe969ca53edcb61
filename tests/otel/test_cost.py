"""Usage.cost: list prices from the catalogue, [prices.MODEL] overrides, streams and conversations."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

import pytest

from core_gemini_plugin.models import MODELS as GEMINI_MODELS
from core_openai_plugin.models import MODELS as OPENAI_MODELS
from llm_core.errors import ConfigurationError
from llm_core.features import Feature
from llm_core.pricing import Prices, effective_prices
from llm_core.responses import Usage
from llm_core.specs import ModelInfo
from llm_core.streaming import StreamEventType
from llm_core.testing.fake import ALL_FEATURES, FakeProvider, FakeReply, fake_spec

PRICED = Prices.of("test", input="1.00", output="4.00", image="0.04")


def provider(config_file: Path | None = None) -> FakeProvider:
    spec = fake_spec(models=[ModelInfo("priced", ALL_FEATURES, prices=PRICED), ModelInfo("unpriced", ALL_FEATURES)])
    return FakeProvider(spec=spec, model="priced", config_file=config_file)


def test_prices_cost_counts_each_kind_of_token() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000, thinking_tokens=250_000)
    assert PRICED.cost(usage) == Decimal("1.00") + Decimal("2.00") + Decimal("1.00")  # thinking at output
    assert Prices.of(input="1", output="4", reasoning="8").cost(usage) == Decimal(1) + Decimal(2) + Decimal(2)


def test_unknown_price_or_no_counts_is_unknown_cost_not_zero() -> None:
    assert Prices.of(input="1").cost(Usage(prompt_tokens=10, completion_tokens=10)) is None
    assert PRICED.cost(Usage()) is None
    assert PRICED.cost(Usage(), images=2) == Decimal("0.08")


def test_bad_prices_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="'output'"):
        Prices.of(output="cheap")
    with pytest.raises(ConfigurationError, match="non-negative"):
        Prices.of(input=-1)


def test_chat_sync_and_async_responses_carry_cost() -> None:
    fake = provider()
    fake.script(FakeReply(content="hi", usage=Usage(prompt_tokens=1000, completion_tokens=500)))
    assert fake.chat_completion("hello").usage.cost == Decimal("0.003")
    fake.script(FakeReply(content="hi", usage=Usage(prompt_tokens=1000, completion_tokens=500)))
    answer = asyncio.run(fake.aio.chat_completion("hello"))
    assert answer.usage.cost == Decimal("0.003")


def test_unpriced_model_has_no_cost() -> None:
    fake = provider()
    fake.script(FakeReply(content="hi", usage=Usage(prompt_tokens=1000, completion_tokens=500)))
    assert fake.chat_completion("hello", model="unpriced").usage.cost is None


def test_stream_metadata_and_conversation_carry_cost() -> None:
    fake = provider()
    fake.script(FakeReply(content="a b c", usage=Usage(prompt_tokens=1000, completion_tokens=500)))
    events = list(fake.stream_chat_completion("hello"))
    meta = next(e.metadata for e in events if e.type is StreamEventType.METADATA)
    assert meta is not None and meta.cost == Decimal("0.003")
    fake.script(
        FakeReply(content="one", usage=Usage(prompt_tokens=1000, completion_tokens=0)),
        FakeReply(content="two", usage=Usage(prompt_tokens=2000, completion_tokens=0)),
    )
    chat = fake.conversation()
    chat.send("first")
    chat.send("second")
    assert chat.usage.cost == Decimal("0.003")


def test_image_cost_is_per_image() -> None:
    image = provider().generate_image("a cat")
    assert image.usage is not None and image.usage.cost == Decimal("0.04")


def test_config_file_overrides_catalogue_prices(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[prices.priced]\noutput = "10"\n\n[prices.unpriced]\ninput = 2\noutput = 2\n')
    fake = provider(config)
    assert fake.prices("priced") == Prices(
        input=Decimal("1.00"), output=Decimal(10), image=Decimal("0.04"), source="config file [prices.priced]"
    )
    fake.script(FakeReply(content="x", usage=Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)))
    assert fake.chat_completion("hello", model="unpriced").usage.cost == Decimal(4)


def test_bad_override_names_the_price(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[prices.priced]\noutptu = 1\n")
    with pytest.raises(ConfigurationError, match="outptu"):
        effective_prices("priced", PRICED, config)


@pytest.mark.parametrize("models", [GEMINI_MODELS, OPENAI_MODELS], ids=["gemini", "openai"])
def test_catalogue_prices_name_their_source_and_date(models: tuple[ModelInfo, ...]) -> None:
    priced = [m for m in models if m.prices is not None]
    assert priced, "the catalogue ships list prices"
    for info in priced:
        assert info.prices is not None and "2026-12-01" in info.prices.source
        assert info.prices.input is not None and info.prices.output is not None
        assert info.supports(Feature.CHAT)
