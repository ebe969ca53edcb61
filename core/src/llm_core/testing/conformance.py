"""The conformance kit: pytest checks that a provider does what it claims.

Subclass :class:`ProviderConformance` in a test module and give it the provider::

    from llm_core.testing.conformance import ProviderConformance

    class TestAcmeConformance(ProviderConformance):
        @pytest.fixture
        def provider(self):
            return AcmeProvider(api_key="test-key")

The checks follow the provider's claims (``supports_feature`` and the spec's per-model
features): a check is skipped only when the feature is not claimed. Each check plays one
*scenario* (:data:`~llm_core.testing.scenarios.SCENARIOS`); with ``conformance_cassettes`` each
scenario replays ``<dir>/<scenario>.json``, otherwise the ``provider`` fixture wires its own fake
transport (the ``conformance_scenario`` fixture names the scenario). The checks of optional
capabilities live in :mod:`llm_core.testing.capability_checks`. See ``docs/conformance.md``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from llm_core.capabilities import DecisionCapable, StructuredOutputCapable
from llm_core.errors import InvalidInputError, LLMError, PluginLoadError, ProviderError, UnsupportedFeatureError
from llm_core.features import Feature
from llm_core.provider import BaseProvider
from llm_core.retry import RetryPolicy
from llm_core.streaming import StreamEventType
from llm_core.testing import scenarios as sc
from llm_core.testing.capability_checks import CapabilityChecks
from llm_core.testing.checks import (
    ConformanceError,
    agree,
    check_completion,
    check_error,
    check_stream,
    check_stream_failure,
    completion_key,
    describe,
    expect,
    short,
    stream_key,
)
from llm_core.testing.claims import (
    FEATURE_PROBES,
    INVALID_INPUTS,
    LIST_MODELS_HOOKS,
    NATIVE_DECISION_HOOKS,
    REQUIRED_HOOKS,
    overrides,
    recording_sends,
    supports_helper,
)
from llm_core.testing.conformance_calls import astream_events, call_both, call_ok, call_outcome, stream_events
from llm_core.testing.parameter_checks import ParameterChecks
from llm_core.testing.scenarios import SCENARIOS, Scenario, model_for

__all__ = ["ConformanceError", "ProviderConformance", "Scenario"]


#: Test name → scenario. Subclasses that override a check keep its scenario.
SCENARIO_OF: dict[str, str] = {
    "test_claims_are_backed": "static",
    "test_secrets_stay_hidden": "static",
    "test_invalid_input_sends_nothing": "invalid_input",
    "test_unsupported_features_send_nothing": "unsupported",
    "test_sampling_parameters_are_sent": "parameters",
    "test_tool_choice_is_sent": "parameters",
    "test_available_models": "models",
    "test_models_sync_and_async_agree": "models",
    "test_chat_response": "chat",
    "test_complete_matches_chat": "chat",
    "test_chat_sync_and_async_agree": "chat",
    "test_error_maps_to_taxonomy": "error",
    "test_error_sync_and_async_agree": "error",
    "test_stream_event_order": "stream",
    "test_stream_text_is_only_text": "stream",
    "test_stream_sync_and_async_agree": "stream",
    "test_stream_error_ends_with_error_then_end": "stream_error",
    "test_stream_error_sync_and_async_agree": "stream_error",
    "test_tool_call_round_trip": "tools",
    "test_tools_sync_and_async_agree": "tools",
    "test_tool_loop": "tool_loop",
    "test_json_validates_into_model": "json",
    "test_json_sync_and_async_agree": "json",
    "test_vision_response": "vision",
    "test_vision_sync_and_async_agree": "vision",
    "test_documents_response": "documents",
    "test_thinking_response": "thinking",
    "test_stream_thinking": "stream_thinking",
    "test_thinking_with_tools": "thinking_tools",
    "test_embeddings_response": "embeddings",
    "test_embeddings_sync_and_async_agree": "embeddings",
    "test_image_response": "image",
    "test_image_sync_and_async_agree": "image",
    "test_decision_response": "decision",
    "test_decision_sync_and_async_agree": "decision",
    "test_count_tokens_response": "count_tokens",
    "test_count_tokens_sync_and_async_agree": "count_tokens",
}


class ProviderConformance(CapabilityChecks, ParameterChecks):
    """Checks that a provider does what it claims. Subclass it as ``Test…`` and define the
    ``provider`` fixture (and ``conformance_cassettes`` to replay recorded traffic)."""

    #: The error class the ``error`` and ``stream_error`` scenarios must raise (e.g.
    #: ``AuthenticationError`` when they are recorded with an invalid key).
    expected_error: ClassVar[type[LLMError]] = ProviderError
    #: Feature value → model id, where the kit's choice (:func:`~llm_core.testing.scenarios.model_for`)
    #: is not the model the cassettes were recorded with.
    conformance_models: ClassVar[Mapping[str, str]] = {}

    # -- fixtures a plugin provides --------------------------------------------------------

    @pytest.fixture
    def provider(self) -> BaseProvider:
        """The provider under test (override). Built offline: cassettes or a fake transport."""
        pytest.fail(
            f"{type(self).__name__}: define a `provider` fixture returning the provider under test "
            "(see docs/conformance.md)",
            pytrace=False,
        )

    @pytest.fixture
    def conformance_cassettes(self) -> Path | None:
        """Folder holding ``<scenario>.json`` cassettes (override); ``None``: the provider
        fixture serves every scenario itself."""
        return None

    @pytest.fixture
    def conformance_scenario(self, request: pytest.FixtureRequest) -> Scenario:
        """The scenario of the running check (request it to script a fake transport)."""
        name = SCENARIO_OF.get(request.function.__name__)
        if name is None:  # a test the subclass added: the kit sets nothing up for it
            return Scenario(request.function.__name__, None, "a test of the plugin's own", cassette=False)
        return SCENARIOS[name]

    @pytest.fixture(autouse=True)
    def _conformance_setup(
        self, request: pytest.FixtureRequest, conformance_scenario: Scenario, conformance_cassettes: Path | None
    ) -> Iterator[None]:
        scenario = conformance_scenario
        if not scenario.cassette:
            yield
            return
        provider: BaseProvider = request.getfixturevalue("provider")
        unclaimed = scenario.claimed_by(provider)
        if unclaimed is not None:
            pytest.skip(f"{provider.identifier} does not claim {unclaimed.value}")
        if scenario.name == "error" and sc.error_feature(provider) is None:
            pytest.skip(f"{provider.identifier} claims none of chat, embeddings, image")
        provider.retry_policy = RetryPolicy.none()  # a recorded failure is answered once
        if conformance_cassettes is None:
            yield
            return
        from llm_core.testing.cassettes import record_mode, use_cassette

        path = Path(conformance_cassettes) / f"{scenario.name}.json"
        if not path.is_file() and record_mode() == "none":
            pytest.fail(
                f"{provider.identifier} claims what scenario {scenario.name!r} checks "
                f"({scenario.description}) but there is no cassette {path}: record it "
                "(LLM_CORE_RECORD=once with a real key) or author it; see docs/conformance.md",
                pytrace=False,
            )
        with use_cassette(path, allow_playback_repeats=True):
            yield

    def model(self, provider: BaseProvider, feature: Feature) -> str | None:
        """The model the checks use for ``feature``."""
        chosen = model_for(provider, feature, self.conformance_models)
        expect(
            chosen is not None,
            f"{provider.identifier} claims {feature.value} but no model in its catalogue offers it",
        )
        return chosen

    # -- static: claims, catalogue, hooks, secrets ------------------------------------------

    def test_claims_are_backed(self, request: pytest.FixtureRequest) -> None:
        try:
            provider: BaseProvider = request.getfixturevalue("provider")
        except PluginLoadError as exc:
            raise ConformanceError(f"the provider cannot be built: {exc.message}") from exc
        pid, cls, spec = provider.identifier, type(provider), provider.provider_spec
        for feature in Feature:
            helper = supports_helper(feature)
            if hasattr(provider, helper):
                expect(
                    getattr(provider, helper)() == provider.supports_feature(feature),
                    f"{pid}: {helper}() disagrees with supports_feature({feature.value!r})",
                )
            if not provider.supports_feature(feature):
                continue
            missing = [hook for hook in REQUIRED_HOOKS.get(feature, ()) if not overrides(cls, hook)]
            expect(
                not missing,
                f"{pid} claims {feature.value} but {cls.__name__} does not implement {', '.join(missing)}",
            )
            self.model(provider, feature)
        missing = [hook for hook in LIST_MODELS_HOOKS if not overrides(cls, hook)]
        expect(not missing, f"{pid}: {cls.__name__} does not implement {', '.join(missing)} (test_connection)")
        for info in spec.models:
            extra = info.features - spec.features
            expect(
                not extra,
                f"{pid}: model {info.id} lists {', '.join(sorted(f.value for f in extra))}, which the provider "
                "does not declare (add them to ProviderSpec.features or drop them from the model)",
            )
        if provider.supports_feature(Feature.DECISION):
            self._check_decision_paths(provider)

    def _check_decision_paths(self, provider: BaseProvider) -> None:
        pid, cls = provider.identifier, type(provider)
        assert isinstance(provider, DecisionCapable)
        for info in provider.provider_spec.models:
            if not provider.supports_feature(Feature.DECISION, info.id):
                continue
            if provider.native_decisions(info.id):
                missing = [hook for hook in NATIVE_DECISION_HOOKS if not overrides(cls, hook)]
                expect(
                    not missing,
                    f"{pid}: model {info.id} claims native decisions but {cls.__name__} does not implement "
                    f"{', '.join(missing)}",
                )
            else:
                expect(
                    isinstance(provider, StructuredOutputCapable)
                    and provider.supports_feature(Feature.JSON_MODE, info.id),
                    f"{pid}: model {info.id} offers decisions without native_decisions, so they go through "
                    "structured output, but the model does not offer json_mode",
                )

    def test_secrets_stay_hidden(self, provider: BaseProvider) -> None:
        if provider.api_key is None:
            return
        key = provider.api_key.reveal()
        for what, text in (("repr", repr(provider)), ("str", str(provider)), ("vars", repr(vars(provider)))):
            expect(key not in text, f"{provider.identifier}: the API key shows in the provider's {what}")

    # -- nothing is sent for invalid input or unsupported features ---------------------------

    def test_invalid_input_sends_nothing(self, provider: BaseProvider) -> None:
        pid = provider.identifier
        with recording_sends(provider) as sent:
            for what, feature, probe in INVALID_INPUTS:
                if not provider.supports_feature(feature):
                    continue
                model = self.model(provider, feature)
                for label, api in (("", provider), (" (aio)", provider.aio)):
                    outcome = call_outcome(probe, api, model)
                    expect(not sent, f"{pid} sent a request ({', '.join(sent)}) for {what}{label}")
                    expect(
                        isinstance(outcome, InvalidInputError),
                        f"{pid}: {what}{label} must raise InvalidInputError before sending, got {describe(outcome)}",
                    )

    def test_unsupported_features_send_nothing(self, provider: BaseProvider) -> None:
        pid, spec = provider.identifier, provider.provider_spec
        claimed = {f for f in FEATURE_PROBES if provider.supports_feature(f)}
        with recording_sends(provider) as sent:
            for info in spec.models:
                for feature in sorted(claimed - info.features, key=lambda f: f.value):
                    for label, api in (("", provider), (" (aio)", provider.aio)):
                        outcome = call_outcome(FEATURE_PROBES[feature], api, info.id)
                        expect(not sent, f"{pid} sent a request for {feature.value}{label} with model {info.id}")
                        expect(
                            isinstance(outcome, UnsupportedFeatureError),
                            f"{pid}: model {info.id} does not offer {feature.value} (catalogue), so the call{label} "
                            f"must raise UnsupportedFeatureError, got {describe(outcome)}",
                        )
            default = spec.default_model or (spec.models[0].id if spec.models else None)
            for feature in sorted(set(FEATURE_PROBES) - claimed, key=lambda f: f.value):
                for label, api in (("", provider), (" (aio)", provider.aio)):
                    outcome = call_outcome(FEATURE_PROBES[feature], api, default)
                    expect(not sent, f"{pid} sent a request for unclaimed {feature.value}{label}")
                    expect(
                        isinstance(outcome, UnsupportedFeatureError),
                        f"{pid} does not claim {feature.value}, so the call{label} must raise "
                        f"UnsupportedFeatureError, got {describe(outcome)}",
                    )

    # -- models --------------------------------------------------------------------------

    def test_available_models(self, provider: BaseProvider) -> None:
        pid = provider.identifier
        models = call_ok(provider, "available_models", provider.available_models)
        expect(
            isinstance(models, list) and models and all(isinstance(m, str) and m for m in models),
            f"{pid}: available_models() must return a non-empty list of model ids, got {short(models)}",
        )
        status = call_ok(provider, "test_connection", provider.test_connection)
        expect(status.success and status.provider == pid, f"{pid}: test_connection() returned {short(status)}")
        expect(status.models == models, f"{pid}: test_connection() lists other models than available_models()")

    def test_models_sync_and_async_agree(self, provider: BaseProvider) -> None:
        models = call_ok(provider, "available_models", provider.available_models)
        amodels = call_ok(provider, "aio.available_models", provider.aio.available_models)
        agree(provider, "available_models()", models, amodels)

    # -- chat ----------------------------------------------------------------------------

    def test_chat_response(self, provider: BaseProvider) -> None:
        response = call_ok(provider, "chat", sc.call, "chat", provider, self.model(provider, Feature.CHAT))
        check_completion(provider, response, "chat_completion")
        expect(not response.tool_calls, f"{provider.identifier}: a chat without tools returned tool calls")

    def test_complete_matches_chat(self, provider: BaseProvider) -> None:
        if not provider.supports_feature(Feature.COMPLETION):
            pytest.skip(f"{provider.identifier} does not claim completion")
        model = self.model(provider, Feature.CHAT)
        chat = call_ok(provider, "chat", sc.call, "chat", provider, model)
        completed = call_ok(provider, "complete", provider.complete, sc.CHAT_PROMPT, model=model)
        check_completion(provider, completed, "complete")
        text = call_ok(provider, "generate_text", provider.generate_text, sc.CHAT_PROMPT, model=model)
        answer = call_ok(provider, "answer", provider.answer, sc.CHAT_PROMPT, model=model)
        agree(
            provider, "chat_completion() and complete() contents", chat.content, completed.content, ("chat", "complete")
        )
        agree(provider, "complete() and generate_text()", completed.content, text, ("complete", "generate_text"))
        agree(provider, "generate_text() and answer()", text, answer, ("generate_text", "answer"))

    def test_chat_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync, async_ = call_both(provider, "chat", self.model(provider, Feature.CHAT))
        check_completion(provider, async_, "aio.chat_completion")
        agree(provider, "chat_completion", completion_key(sync), completion_key(async_))

    # -- errors --------------------------------------------------------------------------

    def _error_call(self, provider: BaseProvider, api: Any) -> BaseException:
        feature = sc.error_feature(provider)
        assert feature is not None
        outcome = call_outcome(sc.call, f"error:{feature.value}", api, self.model(provider, feature))
        expect(
            isinstance(outcome, BaseException),
            f"{provider.identifier}: the error scenario's call succeeded; its cassette (or fake transport) must "
            "answer with a failure, e.g. HTTP 401 for an invalid key",
        )
        assert isinstance(outcome, BaseException)
        return outcome

    def test_error_maps_to_taxonomy(self, provider: BaseProvider) -> None:
        check_error(provider, self._error_call(provider, provider), self.expected_error)

    def test_error_sync_and_async_agree(self, provider: BaseProvider) -> None:
        sync = self._error_call(provider, provider)
        async_ = self._error_call(provider, provider.aio)
        check_error(provider, async_, self.expected_error)
        agree(provider, "error types", type(sync).__name__, type(async_).__name__)

    # -- streaming -----------------------------------------------------------------------

    def test_stream_event_order(self, provider: BaseProvider) -> None:
        events = stream_events(provider, "stream", self.model(provider, Feature.STREAMING))
        check_stream(provider, events)

    def test_stream_text_is_only_text(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.STREAMING)
        events = stream_events(provider, "stream", model)
        streaming: Any = provider
        chunks = list(streaming.stream_text(sc.STREAM_PROMPT, model=model))
        expect(
            all(isinstance(c, str) for c in chunks),
            f"{provider.identifier}: stream_text must yield str only, got {short(chunks)}",
        )
        expected = "".join(e.text or "" for e in events if e.type is StreamEventType.TOKEN and not e.is_thinking)
        agree(provider, "stream_text() and the stream's response tokens", "".join(chunks), expected, ("text", "tokens"))

    def test_stream_sync_and_async_agree(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.STREAMING)
        events = stream_events(provider, "stream", model)
        aevents = astream_events(provider, "stream", model)
        check_stream(provider, aevents)
        agree(provider, "streams", stream_key(events), stream_key(aevents))

    def test_stream_error_ends_with_error_then_end(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.STREAMING)
        events = stream_events(provider, "stream_error", model)
        check_stream_failure(provider, events, self.expected_error)
        streaming: Any = provider
        outcome = call_outcome(lambda: list(streaming.stream_text(sc.STREAM_ERROR_PROMPT, model=model)))
        expect(
            isinstance(outcome, LLMError),
            f"{provider.identifier}: stream_text over a failing stream must raise the stream's LLMError, "
            f"got {describe(outcome)}",
        )

    def test_stream_error_sync_and_async_agree(self, provider: BaseProvider) -> None:
        model = self.model(provider, Feature.STREAMING)
        events = stream_events(provider, "stream_error", model)
        aevents = astream_events(provider, "stream_error", model)
        check_stream_failure(provider, aevents, self.expected_error)
        agree(provider, "failing streams", stream_key(events), stream_key(aevents))
