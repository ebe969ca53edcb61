"""Decisions: typed questions about one subject, exactly one valid answer each."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from llm_core.errors import InvalidDecisionResponse, InvalidInputError
from llm_core.responses import Usage

KEY_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class ProbabilityKind(StrEnum):
    CALIBRATED = "calibrated"  # a native decision API
    DISTRIBUTION = "distribution"  # a distribution the model wrote itself
    NONE = "none"  # hard labels from a structured-output fallback


class DecisionSubject(BaseModel):
    """What is being decided about."""

    model_config = ConfigDict(frozen=True)

    task: str | None = None
    candidate: str | None = None
    evidence: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_empty(self) -> DecisionSubject:
        if not (self.task or self.candidate or any(e.strip() for e in self.evidence)):
            raise ValueError("a decision subject needs a task, a candidate or some evidence")
        return self

    def render(self) -> str:
        """The subject as prompt text (used by the structured-output fallback and as input)."""
        lines: list[str] = []
        if self.task:
            lines.append(f"Task: {self.task}")
        if self.candidate:
            lines.append(f"Candidate: {self.candidate}")
        if self.evidence:
            lines.append("Evidence:")
            lines.extend(f"- {item}" for item in self.evidence)
        return "\n".join(lines)


class _Question(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    instructions: str

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not KEY_PATTERN.fullmatch(value):
            raise ValueError(
                f"question key {value!r} must match {KEY_PATTERN.pattern} "
                "(lower-case letter first, then lower-case letters, digits or '_', at most 64)"
            )
        return value

    @field_validator("instructions")
    @classmethod
    def _instructions(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question instructions must not be blank")
        return value


def _unique_non_blank(values: Sequence[str], what: str, low: int, high: int) -> list[str]:
    if not low <= len(values) <= high:
        raise ValueError(f"{what} must have {low} to {high} entries, got {len(values)}")
    if any(not v.strip() for v in values):
        raise ValueError(f"{what} must not be blank")
    if len(set(values)) != len(values):
        raise ValueError(f"{what} must be unique")
    return list(values)


class YesNoQuestion(_Question):
    kind: Literal["yes_no"] = "yes_no"
    yes_description: str | None = None
    no_description: str | None = None


class ChoiceQuestion(_Question):
    kind: Literal["choice"] = "choice"
    options: list[str]
    option_descriptions: dict[str, str] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _options(cls, value: list[str]) -> list[str]:
        return _unique_non_blank(value, "choice options", 2, 255)

    @model_validator(mode="after")
    def _descriptions(self) -> ChoiceQuestion:
        foreign = set(self.option_descriptions) - set(self.options)
        if foreign:
            raise ValueError(f"descriptions given for options not offered: {sorted(foreign)}")
        return self


class ScoreQuestion(_Question):
    kind: Literal["score"] = "score"
    levels: list[str]

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[str]) -> list[str]:
        return _unique_non_blank(value, "score levels", 2, 10)


Question = Annotated[YesNoQuestion | ChoiceQuestion | ScoreQuestion, Field(discriminator="kind")]


class DecisionAnswer(BaseModel):
    """One answer.

    yes/no: ``value`` = P(yes), ``choice`` "yes"/"no"; choice: ``choice`` = the option;
    score: ``value`` = level index, ``choice`` = the level's label, probability keys are indexes.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    kind: Literal["yes_no", "choice", "score"]
    value: float | None = None
    choice: str | None = None
    probabilities: dict[str, float] | None = None
    confidence: float | None = None


def yes_no_answer(key: str, p_yes: float, confidence: float | None = None) -> DecisionAnswer:
    """A yes/no answer from a calibrated P(yes): choice by the 0.5 threshold, both probabilities
    (P(no) rounded so that 1 - 0.96 reads 0.04), confidence defaulting to the larger one."""
    p_no = round(1.0 - p_yes, 12)
    return DecisionAnswer(
        key=key,
        kind="yes_no",
        value=p_yes,
        choice="yes" if p_yes >= 0.5 else "no",
        probabilities={"yes": p_yes, "no": p_no},
        confidence=max(p_yes, p_no) if confidence is None else confidence,
    )


class DecisionResponse(BaseModel):
    answers: dict[str, DecisionAnswer]
    probability_kind: ProbabilityKind
    model: str
    provider: str
    usage: Usage = Field(default_factory=Usage)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __getitem__(self, key: str) -> DecisionAnswer:
        return self.answers[key]


def parse_questions(questions: Iterable[Question | Mapping[str, Any]]) -> list[Question]:
    """Validate questions (plain mappings accepted); duplicate keys are refused."""
    from pydantic import TypeAdapter, ValidationError

    adapter: TypeAdapter[Question] = TypeAdapter(Question)
    parsed: list[Question] = []
    for index, question in enumerate(questions):
        if isinstance(question, YesNoQuestion | ChoiceQuestion | ScoreQuestion):
            parsed.append(question)
            continue
        try:
            parsed.append(adapter.validate_python(dict(question)))
        except (ValidationError, TypeError, ValueError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise InvalidInputError(f"decision question {index} is invalid: {detail}") from None
    if not parsed:
        raise InvalidInputError("a decision needs at least one question")
    keys = [q.key for q in parsed]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise InvalidInputError(f"duplicate decision question keys: {duplicates}")
    return parsed


def _unit(value: float | None) -> bool:
    return value is not None and not math.isnan(value) and 0.0 <= value <= 1.0


def validate_answers(
    questions: Sequence[Question], answers: Mapping[str, DecisionAnswer], *, provider: str
) -> dict[str, DecisionAnswer]:
    """Check that ``answers`` hold exactly one valid answer per question.

    Returns the answers in question order; raises :class:`InvalidDecisionResponse`.
    """
    asked = {q.key for q in questions}
    extra = sorted(set(answers) - asked)
    if extra:
        raise InvalidDecisionResponse(f"answers for questions never asked: {extra}", provider=provider, key=extra[0])
    ordered: dict[str, DecisionAnswer] = {}
    for question in questions:
        answer = answers.get(question.key)
        fail = _answer_problem(question, answer)
        if fail:
            raise InvalidDecisionResponse(fail, provider=provider, key=question.key)
        assert answer is not None
        ordered[question.key] = answer
    return ordered


def _answer_problem(question: Question, answer: DecisionAnswer | None) -> str | None:
    if answer is None:
        return "no answer"
    if answer.key != question.key:
        return f"answer carries key {answer.key!r}"
    if answer.kind != question.kind:
        return f"expected a {question.kind} answer, got {answer.kind}"
    if answer.confidence is not None and not _unit(answer.confidence):
        return f"confidence {answer.confidence} is outside [0, 1]"
    if answer.probabilities is not None and any(not _unit(p) for p in answer.probabilities.values()):
        return "a probability is outside [0, 1]"
    if isinstance(question, YesNoQuestion):
        if not _unit(answer.value):
            return f"P(yes) {answer.value} is not a probability in [0, 1]"
        if answer.choice not in (None, "yes", "no"):
            return f"yes/no answer {answer.choice!r} is neither 'yes' nor 'no'"
        if answer.probabilities is not None and set(answer.probabilities) != {"yes", "no"}:
            return "yes/no probabilities must have exactly the keys 'yes' and 'no'"
        return None
    if isinstance(question, ChoiceQuestion):
        if answer.value is not None and not math.isfinite(answer.value):  # no parser sets one
            return f"choice value {answer.value} is not a finite number"
        if answer.choice not in question.options:
            return f"choice {answer.choice!r} is not one of the offered options"
        if answer.probabilities is not None and set(answer.probabilities) != set(question.options):
            return "probabilities must have exactly the offered options as keys"
        return None
    levels = [str(i) for i in range(len(question.levels))]
    if answer.value is None or not 0 <= answer.value <= len(levels) - 1:  # also refuses NaN
        return f"score {answer.value} is not a level index in 0..{len(levels) - 1}"
    if answer.value != int(answer.value):
        return f"score {answer.value} is not a whole level index"
    label = question.levels[int(answer.value)]
    if answer.choice is not None and answer.choice != label:
        return f"score label {answer.choice!r} is not the label of level {int(answer.value)} ({label!r})"
    if answer.probabilities is not None and set(answer.probabilities) != set(levels):
        return "probabilities must have exactly the level indexes as keys"
    return None


def fallback_schema(questions: Sequence[Question]) -> dict[str, Any]:
    """JSON schema that a structured-output model fills when no native decision API exists."""
    properties: dict[str, Any] = {}
    for q in questions:
        if isinstance(q, YesNoQuestion):
            properties[q.key] = {"type": "string", "enum": ["yes", "no"]}
        elif isinstance(q, ChoiceQuestion):
            properties[q.key] = {"type": "string", "enum": list(q.options)}
        else:
            properties[q.key] = {"type": "integer", "minimum": 0, "maximum": len(q.levels) - 1}
    return {
        "type": "object",
        "properties": properties,
        "required": [q.key for q in questions],
        "additionalProperties": False,
    }


def fallback_prompt(subject: DecisionSubject, questions: Sequence[Question]) -> str:
    """Prompt text for the structured-output fallback."""
    lines = [subject.render(), "", "Answer each question; reply with JSON only."]
    for q in questions:
        lines.append(f"- {q.key}: {q.instructions}")
        if isinstance(q, YesNoQuestion):
            if q.yes_description:
                lines.append(f"  yes means: {q.yes_description}")
            if q.no_description:
                lines.append(f"  no means: {q.no_description}")
        elif isinstance(q, ChoiceQuestion):
            for option in q.options:
                desc = q.option_descriptions.get(option)
                lines.append(f"  option {option!r}" + (f": {desc}" if desc else ""))
        else:
            for index, level in enumerate(q.levels):
                lines.append(f"  level {index}: {level}")
    return "\n".join(lines)


def answers_from_fallback(questions: Sequence[Question], data: Any, *, provider: str) -> dict[str, DecisionAnswer]:
    """Turn the fallback's JSON object into answers (probability kind "none")."""
    if not isinstance(data, Mapping):
        raise InvalidDecisionResponse("the model did not return a JSON object", provider=provider)
    answers: dict[str, DecisionAnswer] = {}
    by_key = {q.key: q for q in questions}
    for key, raw in data.items():
        question = by_key.get(key)
        if question is None:
            answers[key] = DecisionAnswer(key=key, kind="choice", choice=str(raw))
        elif isinstance(question, YesNoQuestion):
            if raw not in ("yes", "no"):
                raise InvalidDecisionResponse(f"{raw!r} is not yes or no", provider=provider, key=key)
            answers[key] = DecisionAnswer(key=key, kind="yes_no", choice=raw, value=1.0 if raw == "yes" else 0.0)
        elif isinstance(question, ChoiceQuestion):
            answers[key] = DecisionAnswer(key=key, kind="choice", choice=str(raw))
        else:
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                raise InvalidDecisionResponse(f"{raw!r} is not a level index", provider=provider, key=key)
            label = question.levels[int(raw)] if 0 <= raw < len(question.levels) else None
            answers[key] = DecisionAnswer(key=key, kind="score", value=float(raw), choice=label)
    return validate_answers(questions, answers, provider=provider)
