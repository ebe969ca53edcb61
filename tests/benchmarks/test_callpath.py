"""``python -m benchmarks.callpath``: how far a reader follows one call stays within its limits."""

from __future__ import annotations

import pytest
from benchmarks.server import LoopbackServer

from benchmarks import callpath


def test_every_path_is_measured_and_none_grew_past_its_limit(
    fresh_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the provider plugins only, in a registry of their own: observers another test installed
    # (or an installed OpenTelemetry plugin) would add their own path
    monkeypatch.setenv("LLM_CORE_PLUGINS", "core-gemini-plugin,core-openai-plugin")
    with LoopbackServer(deltas=3, max_seconds=120) as server:
        paths = callpath.measures(server.url)
    assert set(paths) == set(callpath.LIMITS)
    for name, path in paths.items():
        plugin = "core_gemini_plugin/" if name.startswith("gemini") else "core_openai_plugin/"
        assert any(f.startswith(plugin) for f in path.files), (name, path.files)
        assert "llm_core/provider/execution.py" in path.files and "llm_core/wire.py" in path.files
        assert path.changes >= len(path.files) - 1  # every file is entered at least once
    assert callpath.over_limits(paths) == []


def test_calls_within_one_file_are_no_change_and_files_outside_the_project_do_not_count() -> None:
    from llm_core.features import Feature, parse_features

    path = callpath.measure(lambda: parse_features(["vision", "Streaming"]))  # Feature.parse, same module
    assert (path.files, path.changes) == (("llm_core/features.py",), 0)
    assert callpath.measure(lambda: sorted([Feature.CHAT])).files == ()


def test_a_path_without_the_transport_joins_what_the_transport_cut_in_two() -> None:
    path = callpath.Path_(("a.py", "llm_core/transport/guard.py", "a.py", "b.py"))
    assert (len(path.files), path.changes) == (3, 3)
    assert path.without(callpath.HTTP_DRIVEN) == callpath.Path_(("a.py", "b.py"))
