"""prefer="cheapest": candidates ordered by the expected cost of the request at their prices."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from llm_core.pricing import Prices
from llm_core.registry import Registry
from llm_core.responses import Usage
from llm_core.specs import ModelInfo, ProviderSpec
from llm_core.testing import FakeReply, fake_spec
from llm_core.testing.fake import ALL_FEATURES


def priced(identifier: str, prices: Prices | None) -> ProviderSpec:
    return fake_spec(identifier, models=[ModelInfo(f"{identifier}-model", ALL_FEATURES, prices=prices)])


@pytest.fixture
def registry() -> Registry:
    registry = Registry()
    registry.preference = ("dear", "unknown", "cheap", "cheap-too")
    registry.register(priced("dear", Prices.of(input="1", output="10")))
    registry.register(priced("unknown", None))
    registry.register(priced("cheap", Prices.of(input="2", output="1")))
    registry.register(priced("cheap-too", Prices.of(input="2", output="1")))
    return registry


def test_select_cheapest_orders_by_expected_cost_then_preference(registry: Registry) -> None:
    chosen = registry.select("chat", prefer="cheapest")
    ranked = [chosen.candidate, *chosen.alternatives]
    # nominal 1,000 in / 500 out: cheap 0.0025 (tie with cheap-too: preference order), dear 0.006, unknown last
    assert [c.identifier for c in ranked] == ["cheap", "cheap-too", "dear", "unknown"]
    assert [c.expected_cost for c in ranked] == [Decimal("0.0025"), Decimal("0.0025"), Decimal("0.006"), None]
    assert "no prices (cost unknown)" in ranked[-1].reasons
    assert registry.select("chat").identifier == "dear"  # the default policy is unchanged


def test_the_estimate_decides_for_long_prompts(registry: Registry) -> None:
    long_prompt = Usage(prompt_tokens=1_000_000, completion_tokens=10)
    assert registry.select("chat", prefer="cheapest", estimate=long_prompt).identifier == "dear"


def test_router_orders_by_cost(registry: Registry) -> None:
    for identifier in ("dear", "cheap", "cheap-too", "unknown"):
        registry.get(identifier).script(FakeReply(content=f"from {identifier}"))  # type: ignore[attr-defined]
    router = registry.router("chat", prefer="cheapest")
    assert [c.identifier for c in router.candidates("chat_completion")] == ["cheap", "cheap-too", "dear", "unknown"]
    assert router.chat_completion("short question").content == "from cheap"


def test_router_prices_each_request(registry: Registry) -> None:
    """A router has the call at hand: a long prompt with a short answer is cheapest at "dear"
    (10,000 prompt tokens, 10 answer tokens: $0.0101 there, $0.02001 at "cheap")."""
    router = registry.router("chat", prefer="cheapest")
    assert router.chat_completion("x" * 40_000, max_tokens=10).provider == "dear"
    assert router.chat_completion("short question").provider == "cheap"


def test_config_prices_count(registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[prices."unknown-model"]\ninput = 0\noutput = 0\n')
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    assert registry.select("chat", prefer="cheapest").identifier == "unknown"
