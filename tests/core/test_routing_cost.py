"""A router with ``prefer="cheapest"`` orders its capable providers by the expected cost of each
call (llm_core.routing.cost_estimate: characters ÷ 4, images and documents by rule, the call's
max_tokens) at each candidate model's prices; unknown prices last, ties by preference."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

import pytest

from llm_core.messages import ChatMessage, DocumentPart, ImagePart, TextPart
from llm_core.pricing import EXPECTED_ANSWER_TOKENS, Prices
from llm_core.registry import Registry
from llm_core.requests import Prompt
from llm_core.responses import Usage
from llm_core.routing.cost_estimate import DOCUMENT_PAGE_TOKENS, IMAGE_TOKENS, estimate_call
from llm_core.specs import ModelInfo
from llm_core.testing import fake_spec
from llm_core.testing.fake import ALL_FEATURES
from llm_core.tools import ToolSpec

SHORT = "What is 2 + 2?"
LONG = "lorem ipsum " * 40_000  # 480,000 characters: 120,000 prompt tokens


def priced(registry: Registry, identifier: str, prices: Prices | None) -> None:
    registry.register(fake_spec(identifier, models=[ModelInfo(f"{identifier}-model", ALL_FEATURES, prices=prices)]))


@pytest.fixture
def registry() -> Registry:
    """ "reader" reads cheaply and writes dearly, "writer" the other way round, "mystery" has no
    prices; registered (and preferred) with the mystery first, so only cost can put it last."""
    registry = Registry()
    priced(registry, "mystery", None)
    priced(registry, "reader", Prices.of(input="0.10", output="10"))
    priced(registry, "writer", Prices.of(input="5", output="0.50", reasoning="50"))
    return registry


def test_a_long_prompt_and_a_short_one_go_to_different_providers(registry: Registry) -> None:
    router = registry.router("chat", prefer="cheapest")
    # short: 4 prompt + 500 answer tokens; reader $0.0050004, writer $0.00027
    assert router.chat_completion(SHORT).provider == "writer"
    # long, 10 answer tokens: reader $0.0121, writer $0.600005
    assert router.chat_completion(LONG, max_tokens=10).provider == "reader"
    assert asyncio.run(router.aio.chat_completion(LONG, max_tokens=10)).provider == "reader"
    assert "".join(router.stream_text(SHORT)) == f"echo: {SHORT}" and router.last_provider == "writer"
    short = router.candidates("chat_completion", ((SHORT,), {}))
    assert [(c.identifier, c.expected_cost) for c in short] == [
        ("writer", Decimal("0.00027")),
        ("reader", Decimal("0.0050004")),
        ("mystery", None),  # unknown prices rank last, never as free
    ]
    assert "no prices (cost unknown)" in short[-1].reasons


def test_thinking_is_priced_at_the_reasoning_price(registry: Registry) -> None:
    router = registry.router("chat", prefer="cheapest")
    # 500 reasoning tokens more: writer's $50/M makes it the dear one
    assert router.chat_completion(SHORT, thinking=True).provider == "reader"


def test_ties_keep_the_preference_order_then_registration(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    priced(registry, "writer-too", Prices.of(input="5", output="0.50"))
    router = registry.router("chat", prefer="cheapest")
    # the same cost and no preference: registration order
    assert [c.identifier for c in router.candidates("chat_completion", ((SHORT,), {}))][:2] == ["writer", "writer-too"]
    monkeypatch.setenv("LLM_CORE_PREFER", "writer-too,writer")
    assert [c.identifier for c in router.candidates("chat_completion", ((SHORT,), {}))][:2] == ["writer-too", "writer"]


def test_config_prices_override_per_request(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[prices."mystery-model"]\ninput = "0.01"\noutput = "100"\n')
    monkeypatch.setenv("LLM_CORE_CONFIG", str(config))
    router = registry.router("chat", prefer="cheapest")
    assert router.chat_completion(LONG, max_tokens=10).provider == "mystery"  # the cheapest reader now
    assert router.chat_completion(SHORT).provider == "writer"


def test_select_keeps_the_nominal_request(registry: Registry) -> None:
    """No call at hand: 1,000 prompt and 500 answer tokens (reader $0.0051, writer $0.00525)."""
    assert registry.select("chat", prefer="cheapest").identifier == "reader"
    assert registry.router("chat", prefer="cheapest").candidates("chat_completion")[0].identifier == "reader"


def test_other_policies_never_estimate(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> Usage:
        raise AssertionError("estimated without prefer='cheapest'")

    monkeypatch.setattr("llm_core.routing.policy.estimate_call", refuse)
    assert registry.router("chat").chat_completion(LONG).provider == "mystery"
    assert registry.router("chat", prefer="writer").chat_completion(LONG).provider == "writer"


# -- the estimate's rules (docs/observability.md) ---------------------------------------------


def test_characters_over_four_and_the_answer_cap() -> None:
    assert estimate_call("chat_completion", ("x" * 400,), {}) == Usage(
        prompt_tokens=100, completion_tokens=EXPECTED_ANSWER_TOKENS
    )
    assert estimate_call("chat_completion", ("x" * 401,), {"max_tokens": 64}).model_dump(
        include={"prompt_tokens", "completion_tokens"}
    ) == {"prompt_tokens": 101, "completion_tokens": 64}
    prompt = Prompt(text="x" * 40, model="m" * 400, temperature=0.5, max_tokens=32)
    assert estimate_call("complete", (prompt,), {}) == Usage(prompt_tokens=10, completion_tokens=32)
    assert estimate_call("embeddings", (["x" * 40, "y" * 40],), {}).completion_tokens == 0


def test_system_tools_and_schemas_count() -> None:
    bare = estimate_call("chat_completion", ("hi",), {}).prompt_tokens
    assert estimate_call("chat_completion", ("hi",), {"system": "s" * 400}).prompt_tokens == bare + 100
    tool = ToolSpec(name="get_weather", description="d" * 400, parameters={"type": "object", "properties": {}})
    assert estimate_call("chat_completion_with_tools", ("hi", [tool]), {}).prompt_tokens > bare + 100
    assert estimate_call("generate_json", ("hi", {"properties": {"p" * 400: {}}}), {}).prompt_tokens > bare + 100
    assert estimate_call("chat_completion", ("hi",), {"temperature": 0.5, "model": "m" * 400}).prompt_tokens == bare


def test_images_and_documents_count_by_rule() -> None:
    png = ImagePart(data=b"\x89PNG" * 10, mime_type="image/png")
    text = estimate_call("chat_completion", ([ChatMessage.user([TextPart(text="look")])],), {}).prompt_tokens
    with_image = estimate_call("chat_completion", ([ChatMessage.user([TextPart(text="look"), png])],), {})
    assert with_image.prompt_tokens == text + IMAGE_TOKENS
    pdf = DocumentPart(data=b"%PDF" * 30_000, mime_type="application/pdf")  # 120 kB: three pages
    with_pdf = estimate_call("chat_completion", ([ChatMessage.user([TextPart(text="look"), pdf])],), {})
    assert with_pdf.prompt_tokens == text + 3 * DOCUMENT_PAGE_TOKENS
    two_images = estimate_call("analyze_image", ([b"\x89PNG", "https://example.com/a.png"], "what?"), {})
    assert two_images.prompt_tokens == 2 * IMAGE_TOKENS + 2  # "what?": 5 characters, 2 tokens


def test_reasoning_tokens_only_when_thinking_is_asked_for() -> None:
    assert estimate_call("chat_completion", ("hi",), {}).thinking_tokens is None
    assert estimate_call("chat_completion", ("hi",), {"thinking": False}).thinking_tokens is None
    assert estimate_call("chat_completion", ("hi",), {"thinking": True, "max_tokens": 80}).thinking_tokens == 80
    assert estimate_call("chat_completion", ("hi",), {"thinking": {"budget": 2048}}).thinking_tokens == 2048
