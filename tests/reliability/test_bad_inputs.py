"""Every entry of the bad-input catalogue raises a typed error that says what to fix, and no
request reaches the wire (the fake records nothing; the loopback server counts zero)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_core.errors import LLMError
from llm_core.registry import Registry
from llm_core.specs import ModelInfo
from llm_core.testing import FakeProvider, fake_spec
from llm_core.testing.fake import ALL_FEATURES
from tests.reliability.bad_inputs import API_CASES, CLI_CASES, SETUP_CASES, Case, CliCase, SetupCase, total_inputs
from tests.reliability.fault_fixtures import Rig, Sleeps


def test_the_catalogue_has_at_least_forty_inputs() -> None:
    assert total_inputs() >= 40
    keys = [c.key for c in API_CASES] + [c.key for c in SETUP_CASES] + [c.key for c in CLI_CASES]
    assert len(keys) == len(set(keys)), "catalogue keys are unique"


def _fake() -> FakeProvider:
    spec = fake_spec(
        "fake",
        models=[
            ModelInfo("fake-model", ALL_FEATURES, extra={"native_decisions": True}),
            ModelInfo("text-only", ["chat", "completion"]),
        ],
    )
    return FakeProvider(spec=spec)


def _provider(name: str, rigs: dict[str, Rig], sleeps: Sleeps) -> tuple[Any, Any]:
    if name == "fake":
        fake = _fake()
        return fake, lambda: len(fake.requests)
    if name not in rigs:
        pytest.fail(f"plugin {name} is not installed")
    rig = rigs[name]
    server = rig.reset()
    return rig.provider(retry=sleeps.policy()), lambda: server.count


async def _as_awaitable(call: Any, provider: Any) -> Any:
    return call(provider)


def _check(error: BaseException, case_error: type[LLMError], fix: str) -> None:
    assert isinstance(error, case_error), f"{type(error).__name__}: {error}"
    assert isinstance(error, LLMError)
    assert fix.lower() in str(error).lower(), f"the message does not say what to fix: {error}"


API_PARAMS = [
    pytest.param(case, name, mode, id=f"{case.key}-{name}-{mode}")
    for case in API_CASES
    for name in case.providers
    for mode in (("sync", "async") if case.has_async else ("sync",))
]


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize(("case", "name", "mode"), API_PARAMS)
async def test_bad_input_is_refused_before_sending(
    case: Case, name: str, mode: str, rigs: dict[str, Rig], sleeps: Sleeps
) -> None:
    provider, sent = _provider(name, rigs, sleeps)
    with pytest.raises(LLMError) as caught:
        await (case.acall(provider) if mode == "async" else _as_awaitable(case.call, provider))
    _check(caught.value, case.error, case.fix)
    assert case.param.lower() in str(caught.value).lower(), f"the message does not name {case.param}"
    assert sent() == 0, "nothing may be sent for an invalid input"
    assert sleeps.waits == [], "an invalid input is never retried"


STREAMS = [c for c in API_CASES if c.method == "stream_chat_completion"]


@pytest.mark.parametrize(
    ("case", "name"), [pytest.param(c, n, id=f"{c.key}-{n}") for c in STREAMS for n in c.providers]
)
def test_stream_input_errors_raise_at_the_call(case: Case, name: str, rigs: dict[str, Rig], sleeps: Sleeps) -> None:
    """Not at the first ``next()``: a stream that cannot be sent is refused when it is asked for."""
    provider, sent = _provider(name, rigs, sleeps)
    with pytest.raises(case.error):
        provider.stream_chat_completion(*case.args, **case.kwargs)
    with pytest.raises(case.error):
        provider.aio.stream_chat_completion(*case.args, **case.kwargs)
    assert sent() == 0


@pytest.fixture
def registry(rigs: dict[str, Rig]) -> Registry:
    registry = Registry(strict=False)
    registry.register(_fake().provider_spec)
    for rig in rigs.values():
        registry.register(rig.target.provider_class().spec)
    return registry


@pytest.mark.parametrize("case", SETUP_CASES, ids=[c.key for c in SETUP_CASES])
def test_bad_setting_is_refused(case: SetupCase, registry: Registry, rigs: dict[str, Rig]) -> None:
    for rig in rigs.values():
        rig.reset()
    with pytest.raises(LLMError) as caught:
        case.run(registry)
    _check(caught.value, case.error, case.fix)
    assert all(rig.server.count == 0 for rig in rigs.values())


# -- the CLI --------------------------------------------------------------------------------------


@pytest.fixture
def cli(
    registry: Registry, rigs: dict[str, Rig], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> dict[str, Any]:
    """``llm-core`` in-process, its registry holding the fake and both plugins pointed at the
    loopback servers (keys and base URLs from the environment, as a user would set them)."""
    import llm_core.registry.registry as registry_module

    fake = _fake()
    spec = fake.provider_spec
    registry.register(type(spec)(spec.identifier, spec.name, spec.features, lambda **_: fake, spec.models,
                                 spec.default_model, requires_credentials=False))
    monkeypatch.setattr(registry_module, "_registry", registry)
    if "gemini" in rigs:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", rigs["gemini"].reset().url)
    if "openai" in rigs:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", rigs["openai"].reset().url + "/v1")
    monkeypatch.chdir(tmp_path)
    return {"fake": fake, "rigs": rigs}


CLI_PARAMS = [
    pytest.param(case, name, id=f"{case.key}-{name}") for case in CLI_CASES for name in ("fake", "gemini", "openai")
]


@pytest.mark.parametrize(("case", "name"), CLI_PARAMS)
def test_cli_bad_input_exits_with_a_hint(
    case: CliCase, name: str, cli: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from llm_core.cli.main import main

    for filename, text in case.files.items():
        (tmp_path / filename).write_text(text)
    argv = list(case.argv)
    if argv[0] in ("chat", "json", "decide", "embed", "image") and "--provider" not in argv:
        argv += ["--provider", name]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse refuses the arguments themselves
        code = int(exit_.code or 0)
    out = capsys.readouterr()
    assert code == case.code, out
    assert case.fix.lower() in (out.err + out.out).lower()
    assert "Traceback" not in out.err
    assert cli["fake"].requests == []
    assert all(rig.server.count == 0 for rig in cli["rigs"].values())

