"""Decisions (one valid answer per question, in order): native POST /v1/decisions (calibrated) and
the structured-output fallback."""

from __future__ import annotations

import pytest
from openai.types.decision import Decision

from core_openai_plugin.decisions import parse_decision
from llm_core.decisions import DecisionResponse, ProbabilityKind, parse_questions
from llm_core.errors import InvalidDecisionResponse, NotFoundError
from llm_core.requests import DecisionRequest


async def test_native_decisions_map_questions_and_answers(player):
    response = await player.play("decision_native")
    assert isinstance(response, DecisionResponse)
    assert response.probability_kind is ProbabilityKind.CALIBRATED
    assert response.model == "gpt-6-luna" and response.provider == "openai"
    assert list(response.answers) == ["qualified", "seniority", "fit"]
    qualified, seniority, fit = response["qualified"], response["seniority"], response["fit"]
    assert (qualified.kind, qualified.value, qualified.choice) == ("yes_no", 0.82, "yes")
    assert qualified.probabilities == pytest.approx({"yes": 0.82, "no": 0.18})
    assert (seniority.choice, seniority.confidence) == ("senior", 0.74)
    assert seniority.probabilities == {"junior": 0.03, "mid": 0.23, "senior": 0.74}
    assert (fit.value, fit.choice, fit.confidence) == (2.0, "good", 0.61)
    assert fit.probabilities == {"0": 0.04, "1": 0.2, "2": 0.61, "3": 0.15}
    assert response.usage.prompt_tokens == 212 and response.usage.completion_tokens == 3

    sent = player.sent()
    assert player.cassette.requests[0].path == "/v1/decisions"
    assert sent["model"] == "gpt-6-luna"
    assert sent["input"].startswith("Task: Screen a job application") and "Evidence:" in sent["input"]
    predicate, choice, score = sent["questions"]
    assert predicate == {"type": "predicate", "name": "qualified", "instructions": (
        "Does the candidate meet the requirements of the role?\nTrue means: meets every must-have requirement\n"
        "False means: misses a must-have requirement")}
    assert choice == {"type": "choice", "name": "seniority", "instructions": "Which level fits the candidate?",
                      "choices": [{"value": "junior"}, {"value": "mid"},
                                  {"value": "senior", "description": "leads projects and people"}]}
    assert score == {"type": "score", "name": "fit", "instructions": "How well does the candidate fit the team?",
                     "levels": [{"label": "poor"}, {"label": "fair"}, {"label": "good"}, {"label": "excellent"}]}


async def test_a_refused_question_is_an_invalid_decision_naming_it(player):
    with pytest.raises(InvalidDecisionResponse, match="refused") as caught:
        await player.play("decision_refusal")
    assert caught.value.key == "seniority" and caught.value.provider == "openai"


async def test_an_answer_outside_the_options_is_an_invalid_decision(player):
    with pytest.raises(InvalidDecisionResponse, match="not one of the offered options") as caught:
        await player.play("decision_invalid")
    assert caught.value.key == "seniority"


async def test_models_without_native_decisions_use_structured_output(player):
    response = await player.play("decision_fallback")
    assert response.probability_kind is ProbabilityKind.NONE
    assert response["qualified"].choice == "yes" and response["seniority"].choice == "senior"
    assert response["fit"].value == 2.0 and response["fit"].choice == "good"
    sent = player.sent()
    assert player.cassette.requests[0].path == "/v1/responses" and sent["model"] == "gpt-4.1"
    fmt = sent["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True
    assert fmt["schema"]["properties"]["seniority"] == {"type": "string", "enum": ["junior", "mid", "senior"]}


async def test_native_decisions_for_a_model_outside_the_catalogue_are_an_option(player):
    with pytest.raises(NotFoundError):
        await player.play("decision_unknown_model")
    assert player.cassette.requests[0].path == "/v1/decisions"


def _request(questions):
    return DecisionRequest(subject={"task": "t"}, questions=parse_questions(questions), model="gpt-6-luna")


def _decision(answers):
    return Decision.model_validate({"answers": answers, "model": "gpt-6-luna", "usage": {
        "input_tokens": 1, "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0}, "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}})


LEVELS = [{"kind": "score", "key": "fit", "instructions": "Fit?", "levels": ["low", "mid", "high"]}]


def test_unnamed_answers_match_questions_by_position():
    response = parse_decision(_decision([{"type": "predicate", "probability": 0.3}]),
                              _request([{"kind": "yes_no", "key": "ok", "instructions": "OK?"}]))
    assert response["ok"].choice == "no" and response["ok"].confidence == 0.7


def test_a_fractional_score_takes_the_most_probable_level():
    answer = {"type": "score", "name": "fit", "score": 1.4, "confidence": 0.5, "probabilities": [
        {"label": "low", "value": 1, "probability": 0.2}, {"label": "mid", "value": 2, "probability": 0.5},
        {"label": "high", "value": 3, "probability": 0.3}]}
    fit = parse_decision(_decision([answer]), _request(LEVELS))["fit"]
    assert (fit.value, fit.choice) == (1.0, "mid")  # levels are matched by label, whatever their values


def test_a_level_that_was_not_offered_is_invalid():
    answer = {"type": "score", "name": "fit", "score": 0, "confidence": 0.5, "probabilities": [
        {"label": "terrible", "value": 0, "probability": 1.0}]}
    with pytest.raises(InvalidDecisionResponse, match="terrible"):
        parse_decision(_decision([answer]), _request(LEVELS))
