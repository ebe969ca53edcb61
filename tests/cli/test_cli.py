"""The ``llm-core`` command line, run through its real entry point."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess[str]]


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.stdout, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_providers_table_lists_features_and_availability(run: Run) -> None:
    result = run("providers")
    assert result.returncode == 0, result.stderr
    assert "fake" in result.stdout and "cli-test-plugin 1.2.3" in result.stdout
    assert "needs KEYED_TEST_API_KEY" in result.stdout
    assert "streaming" in result.stdout


def test_providers_json_is_machine_readable(run: Run) -> None:
    data = as_json(run("providers", "--json"))
    rows = {row["provider"]: row for row in data["providers"]}  # type: ignore[attr-defined]
    assert rows["fake"]["available"] is True
    assert rows["keyed"]["available"] is False
    assert "vision" in rows["fake"]["features"]


def test_models_shows_per_model_features(run: Run) -> None:
    data = as_json(run("models", "fake", "--json"))
    models = {m["model"]: m for m in data["models"]}  # type: ignore[attr-defined]
    assert models["fake-model"]["default"] is True
    assert "decision" in models["fake-model"]["features"]


def test_route_explains_choice_and_prefers_credentials(run: Run) -> None:
    result = run("route", "vision", "streaming")
    assert result.returncode == 0
    assert result.stdout.startswith("streaming, vision -> fake")
    assert "credentials present" in result.stdout
    assert "fallback: keyed" in result.stdout


def test_route_with_key_set_and_preference(run: Run) -> None:
    data = as_json(run("route", "chat", "--prefer", "keyed", "--json", env={"KEYED_TEST_API_KEY": "k"}))
    assert data["provider"] == "keyed"


def test_route_unknown_feature_is_usage_error(run: Run) -> None:
    result = run("route", "vison")
    assert result.returncode == 2
    assert "unknown feature 'vison'" in result.stderr and "vision" in result.stderr


def test_route_with_no_match_names_missing_feature(run: Run) -> None:
    result = run("route", "chat", "audio", "--json")
    assert result.returncode == 4
    assert "audio" in as_json(result)["message"]  # type: ignore[operator]


def test_chat_prints_answer_and_thinking_apart(run: Run) -> None:
    result = run("chat", "What is 2+2?", "--think")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[thinking]", "2 and 2 make 4.", "[answer]", "The answer is 4."]


def test_chat_stream_think_shows_sections(run: Run) -> None:
    result = run("chat", "What is 2+2?", "--stream", "--think", "-p", "fake")
    assert result.returncode == 0, result.stderr
    assert "[thinking]\n2 and 2 make 4." in result.stdout
    assert "[answer]\nThe answer is 4." in result.stdout
    assert "first token" in result.stderr


def test_chat_json_and_stdin_prompt(run: Run) -> None:
    data = as_json(run("chat", "-", "--json", stdin="hello from stdin"))
    assert data["content"] == "The answer is 4." and data["provider"] == "fake"
    assert data["replay"] is False


def test_unknown_provider_exit_code(run: Run) -> None:
    result = run("chat", "hi", "-p", "nope")
    assert result.returncode == 4
    assert "unknown provider 'nope'" in result.stderr and "fake" in result.stderr


def test_missing_key_exit_code_names_variable(run: Run) -> None:
    result = run("chat", "hi", "-p", "keyed")
    assert result.returncode == 3
    assert "KEYED_TEST_API_KEY" in result.stderr


def test_key_never_printed(run: Run) -> None:
    secret = "sk-canary-0123456789abcdef0123456789"
    for args in (("providers", "--json"), ("chat", "hi", "-p", "keyed", "--json"), ("check", "keyed")):
        result = run(*args, env={"KEYED_TEST_API_KEY": secret})
        assert secret not in result.stdout + result.stderr


def test_json_command_with_schema_file(run: Run, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object"}))
    result = run("json", "give json", "--schema", str(schema), "-p", "fake")
    # the fake answers prose, so the JSON decoding fails as an invalid response
    assert result.returncode == 1
    assert "not valid JSON" in result.stderr


def test_image_writes_file_with_suffix_from_type(run: Run, tmp_path: Path) -> None:
    result = run("image", "a red square", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    written = tmp_path / "out.png"
    assert written.read_bytes().startswith(b"\x89PNG")
    assert str(written) in result.stdout and "image/png" in result.stdout


def test_embed_from_file_in_batches(run: Run, tmp_path: Path) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(f"text {i}" for i in range(5)) + "\n\n")
    data = as_json(run("embed", "--file", str(texts), "--batch", "2", "--dimensions", "3", "--json"))
    vectors = data["vectors"]
    assert isinstance(vectors, list) and len(vectors) == 5 and all(len(v) == 3 for v in vectors)


def test_decide_from_toml_questions(run: Run, tmp_path: Path) -> None:
    questions = tmp_path / "q.toml"
    questions.write_text(
        '[[questions]]\nkey = "is_bug"\nkind = "yes_no"\ninstructions = "Is it a bug?"\n'
        '[[questions]]\nkey = "area"\nkind = "choice"\ninstructions = "Area?"\noptions = ["ui", "api"]\n'
    )
    result = run("decide", "--subject", "ticket", "--questions", str(questions), "--json")
    assert result.returncode == 0, result.stderr
    data = as_json(result)
    assert set(data["answers"]) == {"is_bug", "area"}  # type: ignore[arg-type]
    assert data["probability_kind"] == "calibrated"


def test_decide_invalid_question_is_usage_error(run: Run, tmp_path: Path) -> None:
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps([{"key": "Bad Key", "kind": "yes_no", "instructions": "x"}]))
    result = run("decide", "--subject", "s", "--questions", str(questions))
    assert result.returncode == 2
    assert "Bad Key" in result.stderr


def test_check_reports_each_provider(run: Run) -> None:
    data = as_json(run("check", "--json"))
    checks = {c["provider"]: c for c in data["checks"]}  # type: ignore[attr-defined]
    assert checks["fake"]["success"] is True
    # a provider without its key is listed, not checked: it is no failure of the others
    assert checks["keyed"]["success"] is None
    assert "not configured" in checks["keyed"]["message"]
    named = as_json(run("check", "keyed", "--json"))  # asked for by name, it is checked and fails
    assert named["checks"][0]["success"] is False  # type: ignore[index]


def test_plugins_lists_versions_and_load_errors(run: Run) -> None:
    plugins = "cli-test-plugin,broken-test-plugin"
    data = as_json(run("plugins", "--json", plugins=plugins))
    plugin: dict[str, object] = data["plugins"][0]  # type: ignore[index]
    assert len(data["plugins"]) == 1  # type: ignore[arg-type]
    load_ms = plugin.pop("load_ms")
    assert plugin == {"distribution": "cli-test-plugin", "version": "1.2.3", "entry_point": "cliplug"}
    assert isinstance(load_ms, float) and load_ms > 0
    assert data["errors"][0]["distribution"] == "broken-test-plugin"  # type: ignore[index]
    assert "broken on purpose" in data["errors"][0]["error"]  # type: ignore[index]
    assert run("plugins", "--strict", plugins=plugins).returncode == 5
    assert run("providers", plugins=plugins).returncode == 0


def test_startup_imports_no_sdk(plugin_path: Path) -> None:
    import sys

    code = (
        "import sys; from llm_core.cli import main; main(['providers', '--json']); "
        "main(['route', 'chat', '--json']); "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('openai', 'httpx2') or m.startswith('google.genai')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(plugin_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_output_into_a_closed_pipe_is_not_an_error(plugin_path: Path) -> None:
    """`llm-core models | head`: when the reader has gone, the CLI exits 0 without a traceback."""
    import sys

    code = (
        "import sys\n"
        "from llm_core.cli import commands, main\n"
        "def closed(*args, **kwargs):\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "commands.table = closed\n"
        "sys.exit(main(['models']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(plugin_path), "LLM_CORE_PLUGINS": "cli-test-plugin"},
    )
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
