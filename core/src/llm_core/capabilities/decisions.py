"""Decisions: ``decide(subject, questions)`` natively, or through structured output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llm_core.decisions import (
    DecisionResponse,
    DecisionSubject,
    ProbabilityKind,
    Question,
    answers_from_fallback,
    fallback_prompt,
    fallback_schema,
    parse_questions,
    validate_answers,
)
from llm_core.errors import InvalidInputError
from llm_core.features import Feature
from llm_core.operation import CHAT_HOOKS, Hooks, Plan
from llm_core.provider.base import BaseProvider
from llm_core.requests import ChatRequest, DecisionRequest, build, refuse_surrogates
from llm_core.responses import CompletionResponse, decode_json


class DecisionCapable(BaseProvider):
    """``decide(subject, questions)`` natively, or through structured output (kind "none")."""

    def map_decision_request(self, request: DecisionRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _send_decision(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _asend_decision(self, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def parse_decision_response(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        raise NotImplementedError

    def native_decisions(self, model: str) -> bool:
        """Whether ``model`` serves the provider's native decision API (catalogue ``extra``)."""
        info = self.provider_spec.model(model)
        if info is None:
            return bool(self.options.get("native_decisions", False))
        return bool(info.extra.get("native_decisions", False))

    def default_decision_model(self) -> str:
        for info in self.provider_spec.models:
            if Feature.DECISION in info.features and info.extra.get("native_decisions"):
                return info.id
        return self.default_model()

    def build_decision_request(
        self,
        subject: DecisionSubject | Mapping[str, Any] | str,
        questions: Sequence[Question | Mapping[str, Any]],
        *,
        model: str | None = None,
        **options: Any,
    ) -> DecisionRequest:
        if isinstance(subject, str):
            subject = {"task": subject}
        if not isinstance(subject, DecisionSubject):
            if not isinstance(subject, Mapping):
                raise InvalidInputError(
                    f"subject must be a string, a mapping or a DecisionSubject, not {type(subject).__name__}",
                    provider=self.identifier,
                )
            subject = build(DecisionSubject, self.identifier, **{str(k): v for k, v in subject.items()})
        if isinstance(questions, str | bytes | Mapping) or not isinstance(questions, Iterable):
            raise InvalidInputError(
                f"questions must be a list of questions (or mappings), not {type(questions).__name__}",
                provider=self.identifier,
            )
        parsed = parse_questions(questions)
        refuse_surrogates(subject, "subject", self.identifier)
        refuse_surrogates(parsed, "questions", self.identifier)
        chosen = self._model_or(model, self.default_decision_model)
        self._require(Feature.DECISION, chosen)
        return build(
            DecisionRequest,
            self.identifier,
            subject=subject,
            questions=parsed,
            model=chosen,
            options=options,
        )

    def _checked(self, raw: Any, request: DecisionRequest) -> DecisionResponse:
        response = self.parse_decision_response(raw, request)
        answers = validate_answers(request.questions, response.answers, provider=self.identifier)
        return response.model_copy(update={"answers": answers})

    def fallback_chat_request(self, request: DecisionRequest) -> ChatRequest:
        if Feature.JSON_MODE not in self.implemented_features():
            raise InvalidInputError(
                f"model {request.model!r} has no native decisions and {self.name} has no structured output",
                provider=self.identifier,
            )
        return self.build_chat_request(
            fallback_prompt(request.subject, request.questions),
            model=request.model,
            feature=Feature.JSON_MODE,
            json_mode=True,
            response_schema=fallback_schema(request.questions),
        )

    def fallback_response(self, response: CompletionResponse, request: DecisionRequest) -> DecisionResponse:
        data = decode_json(response, None, self.identifier)
        answers = answers_from_fallback(request.questions, data, provider=self.identifier)
        return DecisionResponse(
            answers=answers,
            probability_kind=ProbabilityKind.NONE,
            model=response.model,
            provider=self.identifier,
            usage=response.usage,
            metadata={"fallback": "structured_output"},
        )

    def decision_plan(self, request: DecisionRequest, hooks: Hooks) -> Plan:
        """The native decision API where the model has one (answers checked against the
        questions), else one structured-output chat whose JSON becomes the answers."""
        if self.native_decisions(request.model):
            return Plan(hooks._replace(parse="_checked"), (request,))
        chat = self.fallback_chat_request(request)
        return Plan(CHAT_HOOKS, (chat,), combine=lambda answers: self.fallback_response(answers[0], request))
