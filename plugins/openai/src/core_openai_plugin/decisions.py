"""Native decisions (``POST /v1/decisions``): pure request mapping and answer parsing.

yes/no questions ↔ ``predicate``, choices ↔ ``choice``, scores ↔ ``score``; question keys are the
``name`` of each question. The core checks afterwards that there is exactly one valid answer per
question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core_openai_plugin.request_mapper import PROVIDER, check_options, passthrough
from core_openai_plugin.response_parser import dump
from core_openai_plugin.usage import usage_from
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
from llm_core.errors import InvalidDecisionResponse
from llm_core.requests import DecisionRequest

if TYPE_CHECKING:
    from openai.types.decision import Decision

DECISION_OPTIONS = frozenset({"safety_identifier", "prompt_cache_key", "extra_body", "extra_headers", "extra_query"})


def map_decision(request: DecisionRequest) -> dict[str, Any]:
    """Keyword arguments of ``decisions.create``: the rendered subject as input; yes/no questions
    become ``predicate``, choices ``choice`` and scores ``score``; question keys become ``name``."""
    check_options(request.options, DECISION_OPTIONS, "decision")
    payload: dict[str, Any] = {
        "model": request.model,
        "input": request.subject.render(),
        "questions": [decision_question(q) for q in request.questions],
    }
    passthrough(payload, request.options, DECISION_OPTIONS)
    return payload


def decision_question(question: Question) -> dict[str, Any]:
    """One question of ``POST /v1/decisions``."""
    if isinstance(question, YesNoQuestion):
        lines = [question.instructions]
        if question.yes_description:
            lines.append(f"True means: {question.yes_description}")
        if question.no_description:
            lines.append(f"False means: {question.no_description}")
        return {"type": "predicate", "name": question.key, "instructions": "\n".join(lines)}
    if isinstance(question, ChoiceQuestion):
        choices: list[dict[str, Any]] = []
        for option in question.options:
            choice: dict[str, Any] = {"value": option}
            if option in question.option_descriptions:
                choice["description"] = question.option_descriptions[option]
            choices.append(choice)
        return {"type": "choice", "name": question.key, "instructions": question.instructions, "choices": choices}
    return {
        "type": "score",
        "name": question.key,
        "instructions": question.instructions,
        "levels": [{"label": level} for level in question.levels],
    }


def parse_decision(raw: Decision, request: DecisionRequest) -> DecisionResponse:
    """Native decision answers → :class:`DecisionResponse` (probability kind ``calibrated``).

    Answers are matched to questions by ``name`` (by position when a name is missing). A refusal
    raises :class:`InvalidDecisionResponse` naming the question; the core then checks every answer.
    """
    questions = list(request.questions)
    by_key = {q.key: q for q in questions}
    answers: dict[str, DecisionAnswer] = {}
    for index, answer in enumerate(raw.answers or ()):
        key = getattr(answer, "name", None) or (questions[index].key if index < len(questions) else f"answer_{index}")
        question = by_key.get(key)
        if answer.type == "refusal":
            raise InvalidDecisionResponse("the model refused to answer this question", provider=PROVIDER, key=key)
        if question is None:
            answers[key] = DecisionAnswer(key=key, kind="choice")  # rejected by validation as never asked
            continue
        answers[key] = decision_answer(question, answer)
    usage = usage_from(raw.usage)
    return DecisionResponse(
        answers=answers,
        probability_kind=ProbabilityKind.CALIBRATED,
        model=raw.model or request.model,
        provider=PROVIDER,
        usage=usage,
        metadata={"raw_answers": [dump(a) for a in raw.answers or ()]},
    )


def decision_answer(question: Question, answer: Any) -> DecisionAnswer:
    """One native answer in the shape of our question's kind (a wrong kind fails validation)."""
    key = question.key
    if answer.type == "predicate":
        return yes_no_answer(key, float(answer.probability))
    if answer.type == "choice":
        if isinstance(answer.choice, bool):
            raise InvalidDecisionResponse(
                f"choice {answer.choice!r} is a boolean; the options are strings", provider=PROVIDER, key=key
            )
        probabilities = {str(p.value): float(p.probability) for p in answer.probabilities or ()}
        return DecisionAnswer(
            key=key,
            kind="choice",
            choice=str(answer.choice),
            confidence=answer.confidence,
            probabilities=probabilities or None,
        )
    if answer.type == "score" and isinstance(question, ScoreQuestion):
        return _score_answer(question, answer)
    kind = {"predicate": "yes_no", "score": "score"}.get(answer.type, "choice")
    return DecisionAnswer(key=key, kind=kind)  # validation names the mismatch


def _score_answer(question: ScoreQuestion, answer: Any) -> DecisionAnswer:
    """Levels are identified by label; the answer is the level whose ``value`` equals ``score``
    when ``score`` is whole, else the most probable level."""
    index_of_value: dict[int, int] = {}
    probabilities: dict[str, float] = {}
    for entry in answer.probabilities or ():
        if entry.label not in question.levels:
            raise InvalidDecisionResponse(f"level {entry.label!r} was not offered", provider=PROVIDER, key=question.key)
        index = question.levels.index(entry.label)
        index_of_value[int(entry.value)] = index
        probabilities[str(index)] = float(entry.probability)
    score = float(answer.score)
    if score.is_integer() and int(score) in index_of_value:
        chosen: float = index_of_value[int(score)]
    elif probabilities:
        chosen = float(max(probabilities, key=lambda k: probabilities[k]))
    else:
        chosen = score
    label = question.levels[int(chosen)] if float(chosen).is_integer() and 0 <= chosen < len(question.levels) else None
    return DecisionAnswer(
        key=question.key,
        kind="score",
        value=float(chosen),
        choice=label,
        probabilities=probabilities or None,
        confidence=answer.confidence,
    )
