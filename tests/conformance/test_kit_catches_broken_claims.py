"""Run the kit (with pytester) against providers that each break one claim: exactly the checks
of that claim fail, with a message that says what is wrong; correct providers pass.

Every provider's class goes into one pytester run (a run costs about a second); the tests below
read its outcomes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from llm_core.testing.conformance import SCENARIO_OF, ProviderConformance
from tests.conformance import kit_providers

KIT_PROVIDERS = Path(__file__).with_name("kit_providers.py")
ALL_CHECKS = set(SCENARIO_OF)

HEADER = """
import pytest
import kit_providers as kp  # the copy written beside this file in pytester's directory
from llm_core.testing.conformance import ProviderConformance
"""

SCRIPTED = """
class Test{name}(ProviderConformance):
    @pytest.fixture
    def provider(self, conformance_scenario):
        return kp.scripted_fake(conformance_scenario.name, kp.{name})
"""

SPECIAL = """
class TestDeclaresStreaming(ProviderConformance):
    @pytest.fixture
    def provider(self):
        return kp.DeclaresStreaming(api_key=kp.KEY)


class TestNoProviderFixture(ProviderConformance):
    pass


class TestWithOwnTests(ProviderConformance):
    @pytest.fixture
    def provider(self, conformance_scenario):
        return kp.scripted_fake(conformance_scenario.name)

    def test_plugin_specific(self, provider, conformance_scenario):
        assert conformance_scenario.cassette is False
        assert provider.chat_completion("hi").content == "echo: hi"


class TestNoCassettes(ProviderConformance):
    @pytest.fixture
    def conformance_cassettes(self, tmp_path):
        return tmp_path

    @pytest.fixture
    def provider(self):
        return kp.ChatOnlyFake(api_key=kp.KEY)
"""


@dataclass
class Outcomes:
    passed: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)  # test → failure text
    errors: dict[str, str] = field(default_factory=dict)  # test → setup error text
    skipped: dict[str, str] = field(default_factory=dict)  # test → reason


def run_kit(pytester: pytest.Pytester, classes_source: str) -> dict[str, Outcomes]:
    """Run the given test classes in pytester's directory; outcomes per class name."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(kit_providers=KIT_PROVIDERS.read_text(encoding="utf-8"))
    pytester.makepyfile(test_kit_run=HEADER + classes_source)
    recorder = pytester.inline_run("-p", "no:cacheprovider")
    results: dict[str, Outcomes] = defaultdict(Outcomes)
    for report in recorder.getreports("pytest_runtest_logreport"):
        _, cls, test = report.nodeid.split("::")
        outcome = results[cls]
        if report.when == "call" and report.passed:
            outcome.passed.add(test)
        elif report.failed:
            (outcome.failed if report.when == "call" else outcome.errors)[test] = report.longreprtext
        elif report.skipped:
            outcome.skipped[test] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
    return dict(results)


@pytest.fixture(scope="module")
def _run_cache() -> dict[str, dict[str, Outcomes]]:
    return {}


@pytest.fixture
def kit_run(
    pytester: pytest.Pytester, _run_cache: dict[str, dict[str, Outcomes]]
) -> dict[str, Outcomes]:
    """The outcomes of one run of the kit over every provider of ``kit_providers``."""
    if "run" not in _run_cache:
        names = [cls.__name__ for cls in kit_providers.BROKEN] + ["FakeProvider", "PerModelFake", "ChatOnlyFake"]
        _run_cache["run"] = run_kit(pytester, "".join(SCRIPTED.format(name=n) for n in names) + SPECIAL)
    return _run_cache["run"]


def test_every_check_has_a_scenario() -> None:
    assert {name for name in dir(ProviderConformance) if name.startswith("test_")} == ALL_CHECKS


@pytest.mark.parametrize("name", ["FakeProvider", "PerModelFake"])
def test_correct_providers_pass_every_check(kit_run: dict[str, Outcomes], name: str) -> None:
    outcome = kit_run[f"Test{name}"]
    assert not outcome.failed and not outcome.errors, {**outcome.failed, **outcome.errors}
    assert not outcome.skipped, "a provider that claims every feature must not skip any check"
    assert outcome.passed == ALL_CHECKS


def test_unclaimed_features_are_skipped_with_a_reason(kit_run: dict[str, Outcomes]) -> None:
    outcome = kit_run["TestChatOnlyFake"]
    assert not outcome.failed and not outcome.errors, {**outcome.failed, **outcome.errors}
    always = ("static", "invalid_input", "unsupported", "parameters", "models", "chat", "error")
    claimed = {test for test, scenario in SCENARIO_OF.items() if scenario in always} - {"test_tool_choice_is_sent"}
    assert outcome.passed == claimed
    assert set(outcome.skipped) == ALL_CHECKS - claimed
    assert outcome.skipped["test_stream_event_order"] == "Skipped: chat-only does not claim streaming"
    assert outcome.skipped["test_decision_response"] == "Skipped: chat-only does not claim decision"
    assert outcome.skipped["test_tool_choice_is_sent"] == "Skipped: chat-only does not claim tools"


def test_broken_claims_fail_exactly_their_checks(kit_run: dict[str, Outcomes]) -> None:
    problems: list[str] = []
    for cls, expected in kit_providers.BROKEN.items():
        outcome = kit_run[f"Test{cls.__name__}"]
        phrase = kit_providers.MESSAGES[cls]
        if outcome.errors:
            problems.append(f"{cls.__name__}: setup errors in {sorted(outcome.errors)}")
        if set(outcome.failed) != expected:
            problems.append(f"{cls.__name__}: failed {sorted(outcome.failed)}, expected {sorted(expected)}")
        if outcome.passed != ALL_CHECKS - expected:
            problems.append(f"{cls.__name__}: did not pass {sorted(ALL_CHECKS - expected - outcome.passed)}")
        if not any(phrase in text for text in outcome.failed.values()):
            problems.append(f"{cls.__name__}: no failure says {phrase!r}")
        if not all("ConformanceError" in text for text in outcome.failed.values()):
            problems.append(f"{cls.__name__}: a failure is not a ConformanceError")
    assert not problems, "\n".join(problems)


def test_a_spec_claiming_an_unimplemented_interface_fails_clearly(kit_run: dict[str, Outcomes]) -> None:
    outcome = kit_run["TestDeclaresStreaming"]
    assert set(outcome.failed) == {"test_claims_are_backed"}
    text = outcome.failed["test_claims_are_backed"]
    assert "the provider cannot be built" in text
    assert "declares streaming but DeclaresStreaming does not implement" in text
    assert not outcome.passed
    assert set(outcome.errors) == ALL_CHECKS - {"test_claims_are_backed"}


def test_a_missing_provider_fixture_is_named(kit_run: dict[str, Outcomes]) -> None:
    outcome = kit_run["TestNoProviderFixture"]
    assert not outcome.passed
    texts = [*outcome.errors.values(), *outcome.failed.values()]
    assert len(texts) == len(ALL_CHECKS)
    assert all("TestNoProviderFixture: define a `provider` fixture" in text for text in texts)


def test_a_subclass_may_add_its_own_tests(kit_run: dict[str, Outcomes]) -> None:
    outcome = kit_run["TestWithOwnTests"]
    assert outcome.passed == ALL_CHECKS | {"test_plugin_specific"}, {**outcome.failed, **outcome.errors}


def test_a_missing_cassette_fails_the_claimed_checks(kit_run: dict[str, Outcomes]) -> None:
    outcome = kit_run["TestNoCassettes"]
    offline = {test for test, s in SCENARIO_OF.items() if s in ("static", "invalid_input", "unsupported")}
    offline.add("test_sampling_parameters_are_sent")  # nothing is sent: no cassette needed
    recorded = {test for test, s in SCENARIO_OF.items() if s in ("models", "chat", "error")}
    assert outcome.passed == offline
    assert set(outcome.errors) == recorded
    assert set(outcome.skipped) == ALL_CHECKS - offline - recorded
    text = outcome.errors["test_chat_response"]
    assert "claims what scenario 'chat' checks" in text
    assert "chat.json" in text
    assert "LLM_CORE_RECORD=once" in text
