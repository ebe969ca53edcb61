"""The Python samples of docs/vertex.md run as written, against the loopback Vertex AI endpoint and
token server (google-genai reads GOOGLE_VERTEX_BASE_URL, google-auth the file's token_uri)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_core.registry import reset_registry
from tests.gemini.gemini_inputs import KEY
from tests.gemini.vertex_server import VertexServer, write_service_account

DOC = Path(__file__).resolve().parents[2] / "docs" / "vertex.md"


def test_python_samples_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    samples = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(samples) == 4
    with VertexServer(api_key=KEY) as server:
        write_service_account(tmp_path, server.token_uri)
        for name, value in {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "my-project",
                            "GOOGLE_CLOUD_LOCATION": "us-central1", "GOOGLE_VERTEX_BASE_URL": server.url,
                            "GOOGLE_APPLICATION_CREDENTIALS": "service-account.json", "GOOGLE_API_KEY": KEY}.items():
            monkeypatch.setenv(name, value)
        reset_registry()
        try:
            namespace: dict[str, object] = {}
            for sample in samples:
                exec(compile(sample, str(DOC), "exec"), namespace)  # the documented code itself
        finally:
            reset_registry()
    assert [line for line in capsys.readouterr().out.splitlines() if line] == [
        "The capital of France is Paris.", "Paris is the capital of France.", "The capital of France is Paris.",
        "The capital of France is Paris.",
    ]
    project_path = "/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    assert [seen.path for seen in server.vertex_requests] == [
        f"{project_path}:generateContent", f"{project_path}:streamGenerateContent",
        f"{project_path}:generateContent", "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent",
    ]
    *with_token, express = server.vertex_requests
    assert all(seen.headers["authorization"].startswith("Bearer ya29.") and "x-goog-api-key" not in seen.headers
               for seen in with_token)
    assert express.headers["x-goog-api-key"] == KEY and "authorization" not in express.headers
