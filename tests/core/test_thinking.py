"""Separating visible text from thinking: thought parts are thinking, ``<think>`` blocks in the
visible text move to thinking (the vectors below say exactly how), and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from llm_core.thinking import combine_thinking, extract_think_tags, split_text_parts

T = True  # a native thought part
V = False  # a visible text part

VECTORS: list[tuple[list[tuple[str, bool]], str, str | None]] = [
    ([("  Visible\tanswer.\n", V)], "  Visible\tanswer.\n", None),
    ([("One ", V), ("two", V), (".", V)], "One two.", None),
    ([("Reason.", T), ("Answer.", V)], "Answer.", "Reason."),
    ([("Ans", V), ("Reason.", T), ("wer.", V)], "Answer.", "Reason."),
    ([("Answer.", V), ("Reason.", T)], "Answer.", "Reason."),
    ([("Reason ", T), ("Answer.", V), ("continued.", T)], "Answer.", "Reason continued."),
    ([("", T)], "", None),
    ([("  foo<think> inline </think>\tbar  ", V)], "foo bar", "inline"),
    ([("A<think> first </think>B<think> second </think>C", V)], "A B C", "first \n second"),
    ([("Native.", T), ("foo<think> inline </think>bar", V)], "foo bar", "Native.\ninline"),
    ([("<think>Native.</think>", T)], "", "<think>Native.</think>"),
    ([("Native.", T), ("foo<think> </think>bar", V)], "foo bar", "Native."),
    ([], "", None),
    # the delimiter split across parts is still found (the visible parts are joined first)
    ([("foo<th", V), ("ink>split", V), ("</think>bar", V)], "foo bar", "split"),
    # native text keeps its whitespace byte for byte
    ([(" \t\n", T), ("x", V)], "x", " \t\n"),
    # case-insensitive, across lines
    ([("a<THINK>line 1\nline 2</Think>b", V)], "a b", "line 1\nline 2"),
    # non-greedy
    ([("<think>1</think>mid<think>2</think>", V)], "mid", "1\n2"),
    # a thought-only response has content ""
    ([("Only thinking.", T)], "", "Only thinking."),
]


@pytest.mark.parametrize(("parts", "content", "thinking"), VECTORS)
def test_spec_vectors(parts: list[tuple[str, bool]], content: str, thinking: str | None) -> None:
    assert split_text_parts(parts) == (content, thinking)


def test_extract_think_tags_without_a_block_leaves_text_exactly() -> None:
    assert extract_think_tags("  as is\t \n") == ("  as is\t \n", None)
    assert extract_think_tags("<think>unclosed") == ("<think>unclosed", None)


def test_combine_thinking() -> None:
    assert combine_thinking("N", "I") == "N\nI"
    assert combine_thinking("N", None) == "N"
    assert combine_thinking(None, "I") == "I"
    assert combine_thinking(None, None) is None
    assert combine_thinking("", "") is None


alphabet = st.sampled_from(["a", "b", " ", "\t", "\n", "<", ">", "/", "think", "THINK", "<think>", "</think>", "é"])
texts = st.lists(alphabet, max_size=12).map("".join)
parts_strategy = st.lists(st.tuples(texts, st.booleans()), max_size=8)


@given(parts_strategy)
def test_never_raises_and_returns_str_and_optional_non_empty_thinking(parts: list[tuple[str, bool]]) -> None:
    content, thinking = split_text_parts(parts)
    assert isinstance(content, str)
    assert thinking is None or (isinstance(thinking, str) and thinking != "")


@given(st.lists(st.tuples(st.text(max_size=20).filter(lambda t: "<" not in t), st.booleans()), max_size=8))
def test_without_tags_visible_text_is_the_exact_join(parts: list[tuple[str, bool]]) -> None:
    content, thinking = split_text_parts(parts)
    assert content == "".join(t for t, thought in parts if not thought)
    native = "".join(t for t, thought in parts if thought)
    assert thinking == (native or None)


@given(st.lists(texts, min_size=1, max_size=5), st.lists(st.text(max_size=10).filter(lambda t: "<" not in t),
                                                         max_size=3))
def test_native_thinking_is_never_parsed(native: list[str], visible: list[str]) -> None:
    parts = [(t, True) for t in native] + [(t, False) for t in visible]
    joined = "".join(native)
    _, thinking = split_text_parts(parts)
    assert thinking == (joined or None)


@given(parts_strategy)
def test_native_thinking_always_leads_the_combined_thinking(parts: list[tuple[str, bool]]) -> None:
    native = "".join(t for t, thought in parts if thought)
    _, thinking = split_text_parts(parts)
    if native:
        assert thinking is not None and thinking.startswith(native)


@given(st.lists(texts, max_size=6))
def test_content_never_contains_a_complete_think_block(chunks: list[str]) -> None:
    content, _ = split_text_parts([(c, False) for c in chunks])
    lowered = content.lower()
    start = lowered.find("<think>")
    assert start == -1 or lowered.find("</think>", start) == -1


@given(st.lists(texts, max_size=6))
def test_splitting_visible_text_differently_does_not_change_the_result(chunks: list[str]) -> None:
    assert split_text_parts([(c, False) for c in chunks]) == split_text_parts([("".join(chunks), False)])
