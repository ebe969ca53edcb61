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
from llm_core.hooks import hookimpl
from llm_core.pricing import Prices, effective_prices
from llm_core.registry import Registry
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


def test_cached_prompt_tokens_are_billed_at_the_cached_input_price() -> None:
    usage = Usage(prompt_tokens=1_000_000, cached_tokens=400_000, completion_tokens=100_000)
    with_cache = Prices.of(input="2", cached_input="0.5", output="8")
    # 600k uncached x 2 + 400k cached x 0.5 + 100k x 8, per million
    assert with_cache.cost(usage) == Decimal("1.2") + Decimal("0.2") + Decimal("0.8")
    # no cached-input price: cached tokens cost input (an upper bound, never an unknown)
    assert Prices.of(input="2", output="8").cost(usage) == Decimal("2.0") + Decimal("0.8")
    # every prompt token cached: no input price is needed
    assert Prices.of(cached_input="0.5", output="8").cost(Usage(prompt_tokens=10, cached_tokens=10)) == Decimal(
        "0.000005"
    )
    assert Prices.of(output="8").cost(Usage(prompt_tokens=10, cached_tokens=10)) is None


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
    assert fake.executor.prices("priced") == Prices(
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


CACHED_PRICES = Prices.of("test", input="1.00", cached_input="0.10", output="4.00")


def test_conversation_totals_sum_cached_tokens_and_cost() -> None:
    spec = fake_spec(models=[ModelInfo("priced", ALL_FEATURES, prices=CACHED_PRICES)])
    fake = FakeProvider(spec=spec, model="priced")
    fake.script(
        FakeReply(content="one", usage=Usage(prompt_tokens=1000, completion_tokens=10)),
        FakeReply(content="two", usage=Usage(prompt_tokens=2000, completion_tokens=10, cached_tokens=1000)),
    )
    chat = fake.conversation()
    chat.send("first")
    chat.send("second")
    assert chat.usage.prompt_tokens == 3000 and chat.usage.cached_tokens == 1000
    # turn 1: 1000 x 1 + 10 x 4; turn 2: 1000 x 1 + 1000 x 0.10 + 10 x 4 (per million)
    assert chat.usage.cost == Decimal("0.00104") + Decimal("0.00114")


def test_streamed_conversation_turns_keep_cached_tokens_and_response_id() -> None:
    spec = fake_spec(models=[ModelInfo("priced", ALL_FEATURES, prices=CACHED_PRICES)])
    fake = FakeProvider(spec=spec, model="priced")
    fake.script(FakeReply(content="a b", usage=Usage(prompt_tokens=2000, cached_tokens=1500), response_id="r-1"))
    chat = fake.conversation()
    events = list(chat.stream("hello"))
    meta = next(e.metadata for e in events if e.type is StreamEventType.METADATA)
    assert meta is not None and meta.response_id == "r-1" and meta.cached_tokens == 1500
    assert chat.usage.cached_tokens == 1500
    assert chat.usage.cost == Decimal("0.0005") + Decimal("0.00015")  # 500 x 1 + 1500 x 0.10 per million


class _Events:
    def __init__(self) -> None:
        self.seen: list[dict[str, object]] = []

    @hookimpl
    def llm_core_after_response(self, event: dict[str, object]) -> None:
        self.seen.append(event)


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
def test_after_response_events_carry_response_id_and_cached_tokens(streamed: bool) -> None:
    registry, events = Registry(), _Events()
    registry.add_observer(events)
    spec = fake_spec(models=[ModelInfo("priced", ALL_FEATURES, prices=CACHED_PRICES)])
    fake = FakeProvider(spec=spec, model="priced")
    fake.script(FakeReply(content="a b", usage=Usage(prompt_tokens=2000, cached_tokens=1500), response_id="r-7"))
    if streamed:
        list(fake.stream_chat_completion("hello"))
    else:
        fake.chat_completion("hello")
    (event,) = events.seen
    assert event["response_id"] == "r-7"
    usage = event["usage"]
    assert isinstance(usage, dict) and usage["cached_tokens"] == 1500
    assert usage["cost"] == Decimal("0.0005") + Decimal("0.00015")


def test_a_batch_item_costs_the_batch_share_and_is_unknown_without_one(tmp_path: Path) -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    listed = Prices.of(input="1.00", output="3.00")
    assert listed.cost(usage) == Decimal("4.00")
    assert listed.cost(usage, batch=True) is None  # no batch share known: unknown, not list price
    assert Prices.of(input="1.00", output="3.00", batch_factor="0.5").cost(usage, batch=True) == Decimal("2.00")
    config = tmp_path / "config.toml"
    config.write_text('[prices."m"]\nbatch_factor = "0.25"\n', encoding="utf-8")
    overridden = effective_prices("m", listed, config)
    assert overridden is not None and overridden.cost(usage, batch=True) == Decimal("1.00")


@pytest.mark.parametrize("models", [GEMINI_MODELS, OPENAI_MODELS], ids=["gemini", "openai"])
def test_every_priced_catalogue_model_has_the_half_price_batch_share(models: tuple[ModelInfo, ...]) -> None:
    priced = [info for info in models if info.prices is not None]
    assert priced and all(info.prices.batch_factor == Decimal("0.5") for info in priced if info.prices)
