"""Native decisions (``client.decisions.create``): pure request mapping and answer parsing.

yes/no ↔ ``noul`` (calibrated P(true)), choice ↔ ``choice`` (option id → description),
score ↔ ``score`` (ordered level descriptions). Questions and answers are keyed by our question
keys. The core checks afterwards that there is exactly one valid answer per question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core_gemini_plugin.response_parser import PROVIDER
from llm_core.decisions import (
    ChoiceQuestion,
    DecisionAnswer,
    DecisionResponse,
    ProbabilityKind,
    Question,
    ScoreQuestion,
    YesNoQuestion,
    yes_no_answer,
)
from llm_core.errors import ContentFilteredError, InvalidDecisionResponse
from llm_core.requests import DecisionRequest
from llm_core.responses import Usage

if TYPE_CHECKING:
    from google.genai import decisions as genai_decisions


def map_decision_request(request: DecisionRequest) -> dict[str, Any]:
    """``decisions.create`` arguments: ``{"model": "models/…", "input", "questions"}``."""
    model = request.model if request.model.startswith("models/") else f"models/{request.model}"
    return {
        "model": model,
        "input": request.subject.render(),
        "questions": {q.key: map_question(q) for q in request.questions},
    }


def map_question(question: Question) -> dict[str, Any]:
    if isinstance(question, YesNoQuestion):
        mapped: dict[str, Any] = {"type": "noul", "instructions": question.instructions}
        criteria = {
            key: value
            for key, value in (
                ("true_description", question.yes_description),
                ("false_description", question.no_description),
            )
            if value
        }
        if criteria:
            mapped["criteria"] = criteria
        return mapped
    if isinstance(question, ChoiceQuestion):
        return {
            "type": "choice",
            "instructions": question.instructions,
            "criteria": {option: question.option_descriptions.get(option, "") for option in question.options},
        }
    return {"type": "score", "instructions": question.instructions, "criteria": list(question.levels)}


def parse_decision_response(raw: genai_decisions.CreateDecisionResponse, request: DecisionRequest) -> DecisionResponse:
    """Answers keyed by question key; probability kind ``calibrated``."""
    feedback = raw.prompt_feedback
    if feedback is not None and feedback.block_reason:
        detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
        raise ContentFilteredError(
            f"Gemini blocked the decision input ({feedback.block_reason}){detail}", provider=PROVIDER
        )
    from google.genai import decisions as sdk

    questions = {q.key: q for q in request.questions}
    answers: dict[str, DecisionAnswer] = {}
    expected: dict[str, float] = {}
    for key, answer in (raw.answers or {}).items():
        if isinstance(answer, sdk.NoulAnswer):
            answers[key] = _noul(key, answer)
        elif isinstance(answer, sdk.ChoiceAnswer):
            answers[key] = DecisionAnswer(
                key=key,
                kind="choice",
                choice=answer.choice,
                probabilities=dict(answer.probabilities),
                confidence=answer.confidence,
            )
        elif isinstance(answer, sdk.ScoreAnswer):
            answers[key] = _score(key, answer, questions.get(key))
            expected[key] = answer.score
        else:
            raw_answer = getattr(answer, "raw", answer)
            raise InvalidDecisionResponse(f"answer of an unknown type: {raw_answer!r}", provider=PROVIDER, key=key)
    metadata: dict[str, Any] = {"native": "decisions.create"}
    if expected:
        metadata["expected_scores"] = expected
    return DecisionResponse(
        answers=answers,
        probability_kind=ProbabilityKind.CALIBRATED,
        model=request.model,
        provider=PROVIDER,
        usage=_usage(raw),
        metadata=metadata,
    )


def _noul(key: str, answer: genai_decisions.NoulAnswer) -> DecisionAnswer:
    return yes_no_answer(key, float(answer.noul), answer.confidence)


def _score(key: str, answer: genai_decisions.ScoreAnswer, question: Question | None) -> DecisionAnswer:
    """The most probable level (the answer's ``score`` is the expected value, kept in metadata)."""
    probabilities = {str(k): float(v) for k, v in dict(answer.probabilities).items()}
    ranked = sorted(probabilities.items(), key=lambda item: (-item[1], _index(item[0])))
    level = _index(ranked[0][0]) if ranked else round(float(answer.score))
    label = None
    if isinstance(question, ScoreQuestion) and 0 <= level < len(question.levels):
        label = question.levels[level]
    return DecisionAnswer(
        key=key,
        kind="score",
        value=float(level),
        choice=label,
        probabilities=probabilities,
        confidence=answer.confidence,
    )


def _index(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1


def _usage(raw: genai_decisions.CreateDecisionResponse) -> Usage:
    usage = raw.usage
    if usage is None:
        return Usage()
    return Usage(
        prompt_tokens=usage.total_input_tokens or 0,
        completion_tokens=usage.total_output_tokens or 0,
        total_tokens=usage.total_tokens or 0,
        thinking_tokens=usage.total_thought_tokens,
    )
