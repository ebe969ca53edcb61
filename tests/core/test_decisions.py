"""Decisions (one valid answer per question, in order): question validation, answer validation,
structured-output fallback."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from llm_core import (
    ChoiceQuestion,
    DecisionAnswer,
    DecisionSubject,
    InvalidDecisionResponse,
    InvalidInputError,
    ScoreQuestion,
    YesNoQuestion,
)
from llm_core.decisions import (
    answers_from_fallback,
    fallback_prompt,
    fallback_schema,
    parse_questions,
    validate_answers,
)

KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")

YES_NO = YesNoQuestion(key="relevant", instructions="Is it relevant?", yes_description="on topic")
CHOICE = ChoiceQuestion(key="colour", instructions="Which colour?", options=["red", "green", "blue"],
                        option_descriptions={"red": "warm"})
SCORE = ScoreQuestion(key="quality", instructions="How good?", levels=["bad", "ok", "good"])
QUESTIONS = [YES_NO, CHOICE, SCORE]


def good_answers() -> dict[str, DecisionAnswer]:
    return {
        "relevant": DecisionAnswer(key="relevant", kind="yes_no", value=0.8, choice="yes",
                                   probabilities={"yes": 0.8, "no": 0.2}, confidence=0.8),
        "colour": DecisionAnswer(key="colour", kind="choice", choice="green",
                                 probabilities={"red": 0.1, "green": 0.7, "blue": 0.2}, confidence=0.7),
        "quality": DecisionAnswer(key="quality", kind="score", value=2, choice="good",
                                  probabilities={"0": 0.1, "1": 0.2, "2": 0.7}),
    }


# -- subject and questions ---------------------------------------------------------------------


def test_subject_renders_task_candidate_and_evidence() -> None:
    subject = DecisionSubject(task="Triage", candidate="Ticket 7", evidence=["crash on start", "since v2"])
    assert subject.render() == "Task: Triage\nCandidate: Ticket 7\nEvidence:\n- crash on start\n- since v2"
    with pytest.raises(ValidationError):
        DecisionSubject()
    with pytest.raises(ValidationError):
        DecisionSubject(evidence=["  "])


@given(st.text(max_size=70))
def test_keys_must_match_the_key_pattern(key: str) -> None:
    if KEY.fullmatch(key):
        assert YesNoQuestion(key=key, instructions="?").key == key
    else:
        with pytest.raises(ValidationError, match="question key"):
            YesNoQuestion(key=key, instructions="?")


@pytest.mark.parametrize("key", ["a", "a" * 64, "x_1", "score2"])
def test_valid_keys(key: str) -> None:
    assert YesNoQuestion(key=key, instructions="?").key == key


@pytest.mark.parametrize("key", ["", "A", "1a", "_a", "a-b", "a" * 65, "ключ", "a\n", "a b"])
def test_invalid_keys(key: str) -> None:
    with pytest.raises(ValidationError, match="question key"):
        YesNoQuestion(key=key, instructions="?")


@pytest.mark.parametrize("instructions", ["", " ", "\n\t"])
def test_instructions_must_not_be_blank(instructions: str) -> None:
    with pytest.raises(ValidationError, match="blank"):
        YesNoQuestion(key="k", instructions=instructions)


@given(st.integers(0, 300))
def test_choice_questions_take_2_to_255_options(count: int) -> None:
    options = [f"o{i}" for i in range(count)]
    if 2 <= count <= 255:
        assert ChoiceQuestion(key="k", instructions="?", options=options).options == options
    else:
        with pytest.raises(ValidationError, match="2 to 255"):
            ChoiceQuestion(key="k", instructions="?", options=options)


@pytest.mark.parametrize(("options", "match"), [(["a", "a"], "unique"), (["a", " "], "blank"),
                                                (["a", ""], "blank")])
def test_choice_options_are_unique_and_non_blank(options: list[str], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        ChoiceQuestion(key="k", instructions="?", options=options)


def test_descriptions_only_for_offered_options() -> None:
    with pytest.raises(ValidationError, match="not offered"):
        ChoiceQuestion(key="k", instructions="?", options=["a", "b"], option_descriptions={"c": "?"})
    assert ChoiceQuestion(key="k", instructions="?", options=["a", "b"],
                          option_descriptions={"b": "bee"}).option_descriptions == {"b": "bee"}


@given(st.integers(0, 12))
def test_score_questions_take_2_to_10_levels(count: int) -> None:
    levels = [f"level {i}" for i in range(count)]
    if 2 <= count <= 10:
        assert ScoreQuestion(key="k", instructions="?", levels=levels).levels == levels
    else:
        with pytest.raises(ValidationError, match="2 to 10"):
            ScoreQuestion(key="k", instructions="?", levels=levels)


@pytest.mark.parametrize("levels", [["a", "a"], ["a", ""], ["  ", "b"]])
def test_score_levels_are_unique_and_non_blank(levels: list[str]) -> None:
    with pytest.raises(ValidationError):
        ScoreQuestion(key="k", instructions="?", levels=levels)


def test_parse_questions_accepts_mappings_and_typed_questions() -> None:
    parsed = parse_questions([
        {"kind": "yes_no", "key": "a", "instructions": "?"},
        {"kind": "choice", "key": "b", "instructions": "?", "options": ["x", "y"]},
        SCORE,
    ])
    assert [type(q) for q in parsed] == [YesNoQuestion, ChoiceQuestion, ScoreQuestion]
    assert parsed[2] is SCORE


@pytest.mark.parametrize(
    ("questions", "match"),
    [
        ([], "at least one"),
        ([YES_NO, YES_NO], "duplicate"),
        ([YES_NO, {"kind": "maybe", "key": "x", "instructions": "?"}], "question 1"),
        ([{"kind": "choice", "key": "x", "instructions": "?", "options": ["only"]}], "question 0"),
        ([YES_NO, {"kind": "yes_no", "key": "Bad", "instructions": "?"}], "question 1"),
    ],
)
def test_parse_questions_errors_are_invalid_input(questions: list[Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        parse_questions(questions)


# -- answers -----------------------------------------------------------------------------------


def test_valid_answers_come_back_in_question_order() -> None:
    answers = good_answers()
    shuffled = {k: answers[k] for k in ("quality", "relevant", "colour")}
    result = validate_answers(QUESTIONS, shuffled, provider="fake")
    assert list(result) == ["relevant", "colour", "quality"]
    assert result == answers


def change(question: str, /, **update: Any) -> dict[str, DecisionAnswer]:
    answers = good_answers()
    answers[question] = answers[question].model_copy(update=update)
    return answers


BAD_ANSWERS: list[tuple[str, dict[str, DecisionAnswer], str]] = [
    ("relevant", {k: v for k, v in good_answers().items() if k != "relevant"}, "no answer"),
    ("colour", change("colour", kind="yes_no"), "expected a choice answer"),
    ("colour", change("colour", key="other"), "carries key"),
    ("relevant", change("relevant", value=1.5), "not a probability"),
    ("relevant", change("relevant", value=-0.1), "not a probability"),
    ("relevant", change("relevant", value=None), "not a probability"),
    ("relevant", change("relevant", value=math.nan), "not a probability"),
    ("relevant", change("relevant", choice="maybe"), "neither 'yes' nor 'no'"),
    ("relevant", change("relevant", probabilities={"yes": 0.5, "no": 0.4, "maybe": 0.1}), "exactly the keys"),
    ("relevant", change("relevant", probabilities={"yes": 1.0}), "exactly the keys"),
    ("relevant", change("relevant", confidence=1.01), "confidence"),
    ("relevant", change("relevant", confidence=math.nan), "confidence"),
    ("colour", change("colour", choice="purple"), "not one of the offered options"),
    ("colour", change("colour", choice=None), "not one of the offered options"),
    ("colour", change("colour", probabilities={"red": 0.5, "green": 0.5}), "offered options as keys"),
    ("colour", change("colour", probabilities={"red": 0.2, "green": 0.2, "blue": 0.2, "pink": 0.4}),
     "offered options as keys"),
    ("colour", change("colour", probabilities={"red": 2.0, "green": 0.0, "blue": 0.0}), "outside [0, 1]"),
    ("colour", change("colour", probabilities={"red": -0.5, "green": 1.0, "blue": 0.5}), "outside [0, 1]"),
    ("quality", change("quality", value=3, choice=None), "level index"),
    ("quality", change("quality", value=-1, choice=None), "level index"),
    ("quality", change("quality", value=None, choice=None), "level index"),
    ("quality", change("quality", value=1.5, choice=None), "whole level index"),
    ("quality", change("quality", value=math.nan, choice=None), "level index"),
    ("quality", change("quality", value=math.inf, choice=None), "level index"),
    ("quality", change("quality", probabilities={"0": 0.5, "1": 0.5}), "level indexes as keys"),
    ("quality", change("quality", probabilities={"bad": 0.1, "ok": 0.2, "good": 0.7}), "level indexes as keys"),
    ("quality", change("quality", choice="excellent"), "level"),
    ("quality", change("quality", choice="bad"), "level"),  # label of another level than the value
]


@pytest.mark.parametrize(("key", "answers", "reason"), BAD_ANSWERS)
def test_invalid_answers_name_provider_key_and_reason(key: str, answers: dict[str, DecisionAnswer],
                                                       reason: str) -> None:
    with pytest.raises(InvalidDecisionResponse) as info:
        validate_answers(QUESTIONS, answers, provider="acme")
    error = info.value
    assert error.provider == "acme"
    assert error.key == key
    assert reason in error.reason
    assert "acme" in str(error) and repr(key) in str(error) and reason in str(error)


def test_answers_for_questions_never_asked_are_rejected() -> None:
    answers = good_answers()
    answers["bonus"] = DecisionAnswer(key="bonus", kind="yes_no", value=1.0)
    with pytest.raises(InvalidDecisionResponse, match="never asked") as info:
        validate_answers(QUESTIONS, answers, provider="acme")
    assert info.value.key == "bonus"


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_p_yes_is_accepted_exactly_inside_the_unit_interval(value: float) -> None:
    answers = change("relevant", value=value, probabilities=None, confidence=None)
    if 0.0 <= value <= 1.0:
        assert validate_answers(QUESTIONS, answers, provider="p")["relevant"].value == value
    else:
        with pytest.raises(InvalidDecisionResponse):
            validate_answers(QUESTIONS, answers, provider="p")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_score_is_accepted_only_as_a_level_index(value: float) -> None:
    answers = change("quality", value=value, choice=None, probabilities=None)
    if value in (0.0, 1.0, 2.0):
        assert validate_answers(QUESTIONS, answers, provider="p")["quality"].value == value
    else:
        with pytest.raises(InvalidDecisionResponse):
            validate_answers(QUESTIONS, answers, provider="p")


# -- structured-output fallback ------------------------------------------------------------------


def test_fallback_schema_is_a_closed_object_with_one_property_per_question() -> None:
    assert fallback_schema(QUESTIONS) == {
        "type": "object",
        "properties": {
            "relevant": {"type": "string", "enum": ["yes", "no"]},
            "colour": {"type": "string", "enum": ["red", "green", "blue"]},
            "quality": {"type": "integer", "minimum": 0, "maximum": 2},
        },
        "required": ["relevant", "colour", "quality"],
        "additionalProperties": False,
    }


def test_fallback_prompt_carries_subject_instructions_options_and_levels() -> None:
    prompt = fallback_prompt(DecisionSubject(task="Pick", evidence=["e1"]), QUESTIONS)
    for text in ("Task: Pick", "- e1", "relevant: Is it relevant?", "yes means: on topic", "'red': warm",
                 "'blue'", "level 2: good", "JSON"):
        assert text in prompt


def test_fallback_answers_are_hard_labels() -> None:
    answers = answers_from_fallback(QUESTIONS, {"relevant": "no", "colour": "blue", "quality": 1}, provider="p")
    assert answers["relevant"].value == 0.0 and answers["relevant"].choice == "no"
    assert answers["colour"].choice == "blue" and answers["colour"].probabilities is None
    assert answers["quality"].value == 1 and answers["quality"].choice == "ok"


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"relevant": "maybe", "colour": "blue", "quality": 1}, "relevant"),
        ({"relevant": True, "colour": "blue", "quality": 1}, "relevant"),
        ({"relevant": "yes", "colour": "pink", "quality": 1}, "colour"),
        ({"relevant": "yes", "colour": "blue", "quality": 7}, "quality"),
        ({"relevant": "yes", "colour": "blue", "quality": "1"}, "quality"),
        ({"relevant": "yes", "colour": "blue", "quality": True}, "quality"),
        ({"relevant": "yes", "colour": "blue", "quality": 0.5}, "quality"),
        ({"relevant": "yes", "colour": "blue"}, "quality"),
        ({"relevant": "yes", "colour": "blue", "quality": 1, "extra": "x"}, "extra"),
    ],
)
def test_fallback_answers_are_validated(data: dict[str, Any], key: str) -> None:
    with pytest.raises(InvalidDecisionResponse) as info:
        answers_from_fallback(QUESTIONS, data, provider="p")
    assert info.value.key == key


def test_fallback_with_nan_from_lenient_json_is_invalid_not_a_crash() -> None:
    data = json.loads('{"relevant": "yes", "colour": "red", "quality": NaN}')
    with pytest.raises(InvalidDecisionResponse) as info:
        answers_from_fallback(QUESTIONS, data, provider="p")
    assert info.value.key == "quality"


@pytest.mark.parametrize("data", [[], "yes", None, 3])
def test_fallback_needs_a_json_object(data: Any) -> None:
    with pytest.raises(InvalidDecisionResponse, match="JSON object"):
        answers_from_fallback(QUESTIONS, data, provider="p")


def test_yes_no_answer_from_a_calibrated_probability() -> None:
    from llm_core.decisions import yes_no_answer

    answer = yes_no_answer("is_bug", 0.96)
    assert answer.choice == "yes"
    assert answer.probabilities == {"yes": 0.96, "no": 0.04}
    assert answer.confidence == 0.96
    low = yes_no_answer("is_bug", 0.2, confidence=0.7)
    assert (low.choice, low.confidence) == ("no", 0.7)
