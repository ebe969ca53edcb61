"""Decisions (one valid answer per question, in order): Gemini's native decisions API (yes/no ↔
noul, choice, score; calibrated) and the structured-output fallback for other models (probability
kind "none")."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from google.genai import decisions as sdk

from core_gemini_plugin.decisions import map_decision_request, map_question, parse_decision_response
from llm_core.decisions import (
    ChoiceQuestion,
    ProbabilityKind,
    ScoreQuestion,
    YesNoQuestion,
    fallback_schema,
    validate_answers,
)
from llm_core.errors import ContentFilteredError, InvalidDecisionResponse, RateLimitError
from llm_core.requests import DecisionRequest
from tests.gemini.gemini_inputs import QUESTIONS, SUBJECT
from tests.gemini.gemini_support import Delays, Runner, cassette, make_provider, sent_body

REQUEST = DecisionRequest(subject=SUBJECT, questions=QUESTIONS, model="decisions-prerelease")
ANSWERS: dict[str, Any] = {
    "needs_refund": {"type": "noul", "noul": 0.97, "confidence": 0.97},
    "category": {"type": "choice", "choice": "billing", "confidence": 0.91,
                 "probabilities": {"billing": 0.91, "technical": 0.04, "sales": 0.05}},
    "urgency": {"type": "score", "score": 1.62, "confidence": 0.68, "probabilities": {"0": 0.06, "1": 0.26, "2": 0.68},
                "legend": {"0": "low", "1": "medium", "2": "high"}},
}


def parsed(answers: dict[str, Any], **fields: Any) -> Any:
    raw = sdk.CreateDecisionResponse.model_validate({"answers": answers, **fields})
    return parse_decision_response(raw, REQUEST)


# -- mapping ---------------------------------------------------------------------------------------


def test_questions_map_to_noul_choice_and_score() -> None:
    assert [map_question(q) for q in QUESTIONS] == [
        {"type": "noul", "instructions": "Does the customer ask for money back?",
         "criteria": {"true_description": "A refund or chargeback is requested.",
                      "false_description": "No money is requested."}},
        {"type": "choice", "instructions": "Which team should handle the ticket?",
         "criteria": {"billing": "Invoices, payments and refunds.", "technical": "", "sales": ""}},
        {"type": "score", "instructions": "How urgent is the ticket?", "criteria": ["low", "medium", "high"]},
    ]
    assert map_question(YesNoQuestion(key="ok", instructions="Fine?")) == {"type": "noul", "instructions": "Fine?"}


def test_request_model_subject_and_question_keys() -> None:
    payload = map_decision_request(REQUEST)
    assert payload["model"] == "models/decisions-prerelease"
    assert payload["input"] == SUBJECT.render()
    assert list(payload["questions"]) == ["needs_refund", "category", "urgency"]
    assert map_decision_request(REQUEST.model_copy(update={"model": "models/x"}))["model"] == "models/x"


# -- parsing and validation -----------------------------------------------------------------------


def test_native_answers_become_calibrated_answers() -> None:
    response = parsed(ANSWERS, usage={"total_input_tokens": 142, "total_output_tokens": 6, "total_tokens": 148})
    yes = response["needs_refund"]
    assert (yes.kind, yes.value, yes.choice, yes.confidence) == ("yes_no", 0.97, "yes", 0.97)
    assert yes.probabilities == pytest.approx({"yes": 0.97, "no": 0.03})
    assert response["category"].choice == "billing" and response["category"].probabilities["sales"] == 0.05
    urgency = response["urgency"]
    assert (urgency.value, urgency.choice, urgency.confidence) == (2.0, "high", 0.68)  # the most probable level
    assert response.metadata["expected_scores"] == {"urgency": 1.62}
    assert response.probability_kind is ProbabilityKind.CALIBRATED
    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (142, 148)
    assert validate_answers(QUESTIONS, response.answers, provider="gemini") == response.answers


def broken(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    answers = copy.deepcopy(ANSWERS)
    target = answers
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return answers


@pytest.mark.parametrize(("answers", "key", "reason"), [
    (broken(("category", "choice"), "refunds"), "category", "not one of the offered options"),
    (broken(("category", "probabilities", "refunds"), 0.1), "category", "exactly the offered options"),
    (broken(("needs_refund",), ...), "needs_refund", "no answer"),
    (broken(("needs_refund", "noul"), 1.4), "needs_refund", "a probability is outside [0, 1]"),
    (broken(("urgency", "confidence"), -0.2), "urgency", "confidence -0.2 is outside [0, 1]"),
    (broken(("urgency", "probabilities", "7"), 0.99), "urgency", "not a level index"),
    (broken(("urgency",), {"type": "choice", "choice": "high", "confidence": 0.5,
                           "probabilities": {"high": 0.5}}), "urgency", "expected a score answer"),
    (broken(("spam",), {"type": "noul", "noul": 0.1, "confidence": 0.9}), "spam", "never asked"),
])
def test_invalid_answers_are_rejected_naming_the_question(answers: dict[str, Any], key: str, reason: str) -> None:
    with pytest.raises(InvalidDecisionResponse, match=re.escape(reason)) as caught:
        validate_answers(QUESTIONS, parsed(answers).answers, provider="gemini")
    assert caught.value.key == key and caught.value.provider == "gemini"


def test_an_answer_of_an_unknown_type_is_rejected() -> None:
    with pytest.raises(InvalidDecisionResponse, match="unknown type") as caught:
        parsed({**ANSWERS, "category": {"type": "refusal", "reason": "no"}})
    assert caught.value.key == "category"


def test_blocked_input_raises_content_filtered() -> None:
    raw = sdk.CreateDecisionResponse.model_validate({"prompt_feedback": {"block_reason": "safety"}})
    with pytest.raises(ContentFilteredError, match="safety"):
        parse_decision_response(raw, REQUEST)


# -- on the wire ------------------------------------------------------------------------------


def test_native_decision(run: Runner) -> None:
    with cassette("decision_native") as recorded:
        response = run("decide", SUBJECT, QUESTIONS)
    assert recorded.requests[0].uri == "https://generativelanguage.googleapis.com/v1/decisions"
    assert sent_body(recorded) == map_decision_request(REQUEST)
    assert response.model == "decisions-prerelease" and response.provider == "gemini"
    assert response.probability_kind is ProbabilityKind.CALIBRATED
    assert [(a.key, a.choice) for a in response.answers.values()] == [
        ("needs_refund", "yes"), ("category", "billing"), ("urgency", "high")]


def test_questions_given_as_mappings(run: Runner) -> None:
    plain = [q.model_dump() for q in QUESTIONS]
    with cassette("decision_native"):
        response = run("decide", SUBJECT.model_dump(), plain)
    assert response["needs_refund"].value == 0.97


def test_native_answer_outside_the_options(run: Runner) -> None:
    with cassette("decision_invalid_answer"), pytest.raises(InvalidDecisionResponse, match="refunds") as caught:
        run("decide", SUBJECT, QUESTIONS)
    assert caught.value.key == "category"


def test_blocked_decision_input(run: Runner) -> None:
    with cassette("decision_blocked"), pytest.raises(ContentFilteredError, match="blocked for safety"):
        run("decide", SUBJECT, QUESTIONS)


def test_rate_limited_decision_is_retried_by_the_core_only(run: Runner, delays: Delays) -> None:
    with cassette("decision_rate_limited_then_ok") as recorded:
        response = run("decide", SUBJECT, QUESTIONS)
    assert delays == [3.0] and recorded.all_played
    assert response["category"].choice == "billing"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_decisions_client_does_not_retry_by_itself(mode: str) -> None:
    provider = make_provider(attempts=1)
    with cassette("decision_rate_limited_then_ok") as recorded, pytest.raises(RateLimitError) as caught:
        Runner(provider, mode)("decide", SUBJECT, QUESTIONS)
    assert caught.value.retry_after == 3.0 and recorded.play_count == 1


def test_structured_output_fallback_for_other_models(run: Runner) -> None:
    with cassette("decision_fallback") as recorded:
        response = run("decide", SUBJECT, QUESTIONS, model="gemini-2.5-flash")
    assert recorded.requests[0].uri.endswith("/v1/models/gemini-2.5-flash:generateContent")
    config = sent_body(recorded)["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == fallback_schema(QUESTIONS)
    assert response.probability_kind is ProbabilityKind.NONE
    assert response["needs_refund"].value == 1.0 and response["needs_refund"].choice == "yes"
    assert response["category"].choice == "billing"
    assert (response["urgency"].value, response["urgency"].choice) == (2.0, "high")


def test_which_models_answer_natively(run: Runner) -> None:
    provider = run.provider
    assert provider.native_decisions("decisions-prerelease")
    assert not provider.native_decisions("gemini-2.5-flash")
    assert provider.builder.default_decision_model() == "decisions-prerelease"
    assert provider.supports_feature("decision", model="gemini-3-flash-preview")
    assert not provider.supports_feature("decision", model="gemini-embedding-001")
    assert isinstance(QUESTIONS[1], ChoiceQuestion) and isinstance(QUESTIONS[2], ScoreQuestion)
