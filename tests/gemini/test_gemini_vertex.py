"""Gemini on Vertex AI against a 127.0.0.1 Vertex AI endpoint and token server (vertex_server.py),
through the real google-genai and google-auth code: express mode, a service account (file or
``google.auth`` object) with no Gemini key, the SDK's environment variables alone, token refresh,
faults, and secrets kept out of what the provider hands out."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core_gemini_plugin.provider import GeminiProvider, VertexProvider
from llm_core.errors import (
    AuthenticationError,
    ConfigurationError,
    InvalidInputError,
    RateLimitError,
    UnknownSettingError,
    UnsupportedFeatureError,
)
from llm_core.features import Feature
from llm_core.streaming import StreamEventType
from tests.gemini.gemini_inputs import KEY
from tests.gemini.gemini_support import Delays, fast_retry
from tests.gemini.vertex_server import CLIENT_EMAIL, PROJECT, VertexServer, error_body, write_service_account

MODEL = "gemini-2.5-flash"
PROJECT_PATH = f"/v1beta1/projects/{PROJECT}/locations/us-central1/publishers/google/models/{MODEL}"
QUESTION = "What is the capital of France?"


@pytest.fixture(autouse=True)
def _no_google_cloud_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ADC file of the developer's: gcloud's folder is an empty one."""
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)


@pytest.fixture
def server() -> Iterator[VertexServer]:
    with VertexServer(api_key=KEY) as running:
        yield running


@pytest.fixture
def sa_file(server: VertexServer, tmp_path: Path) -> Path:
    return write_service_account(tmp_path, server.token_uri)


def chat_and_stream(provider: GeminiProvider, mode: str) -> tuple[str, str]:
    """One chat answer and one streamed answer, through the sync API or ``provider.aio``."""
    if mode == "sync":
        text = provider.chat_completion(QUESTION).content
        streamed = "".join(e.text or "" for e in provider.stream_chat_completion(QUESTION)
                           if e.type == StreamEventType.TOKEN)
        return text, streamed

    async def both() -> tuple[str, str]:
        text = (await provider.aio.chat_completion(QUESTION)).content
        streamed = "".join([e.text or "" async for e in provider.aio.stream_chat_completion(QUESTION)
                            if e.type == StreamEventType.TOKEN])
        return text, streamed

    return asyncio.run(both())


ANSWERS = ("The capital of France is Paris.\n", "Paris is the capital of France.")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_express_mode_sends_the_key_on_vertex_paths(server: VertexServer, mode: str) -> None:
    provider = GeminiProvider(vertexai=True, api_key=KEY, base_url=server.url)
    assert chat_and_stream(provider, mode) == ANSWERS
    chat, stream = server.vertex_requests
    assert chat.path == f"/v1beta1/publishers/google/models/{MODEL}:generateContent"
    assert (stream.path, stream.query) == (f"/v1beta1/publishers/google/models/{MODEL}:streamGenerateContent",
                                           {"alt": ["sse"]})
    assert all(seen.headers["x-goog-api-key"] == KEY and "authorization" not in seen.headers
               for seen in (chat, stream))
    assert chat.json()["contents"] == [{"parts": [{"text": QUESTION}], "role": "user"}]
    assert server.issued == []  # no token asked for


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_service_account_file_and_no_gemini_key(server: VertexServer, sa_file: Path, mode: str) -> None:
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=str(sa_file), base_url=server.url)
    assert provider.api_key is None and provider.is_available()
    assert chat_and_stream(provider, mode) == ANSWERS
    chat, stream = server.vertex_requests
    assert (chat.path, stream.path) == (f"{PROJECT_PATH}:generateContent", f"{PROJECT_PATH}:streamGenerateContent")
    [token] = server.issued  # one token for both calls: it is valid for an hour
    assert all(seen.headers["authorization"] == f"Bearer {token}" and "x-goog-api-key" not in seen.headers
               for seen in (chat, stream))
    [grant] = server.grants  # a JWT signed with the file's key, for Vertex AI's scope
    # google-auth's audience is Google's token endpoint, wherever the token_uri points
    assert (grant["iss"], grant["aud"]) == (CLIENT_EMAIL, "https://oauth2.googleapis.com/token")
    assert grant["scope"] == "https://www.googleapis.com/auth/cloud-platform"


def test_a_google_auth_credentials_object(server: VertexServer, sa_file: Path) -> None:
    from google.oauth2 import service_account

    credentials = service_account.Credentials.from_service_account_file(
        str(sa_file), scopes=["https://www.googleapis.com/auth/cloud-platform"])
    provider = GeminiProvider(vertexai=True, project=PROJECT, location="us-central1", credentials=credentials,
                              base_url=server.url)
    assert provider.chat_completion(QUESTION).content == ANSWERS[0]
    assert server.vertex_requests[0].headers["authorization"] == f"Bearer {server.issued[0]}"
    pickled = pickle.dumps(provider)  # no credentials object in the pickle: no private key, no token
    assert b"PRIVATE KEY" not in pickled and server.issued[0].encode() not in pickled
    assert pickle.loads(pickled).backend.credentials is None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_sdk_environment_variables_alone(server: VertexServer, sa_file: Path,
                                              monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    from core_gemini_plugin.plugin import SPEC, VERTEX_SPEC
    from llm_core.registry import Registry

    for name, value in {"GOOGLE_GENAI_USE_VERTEXAI": "True", "GOOGLE_CLOUD_PROJECT": PROJECT,
                        "GOOGLE_CLOUD_LOCATION": "us-central1", "GOOGLE_APPLICATION_CREDENTIALS": str(sa_file),
                        "GOOGLE_VERTEX_BASE_URL": server.url}.items():
        monkeypatch.setenv(name, value)
    registry = Registry()
    registry.register(SPEC)
    registry.register(VERTEX_SPEC)
    assert SPEC.credentials_present() and VERTEX_SPEC.credentials_present()
    provider = registry.get("gemini")
    assert provider.api_key is None and provider.backend.vertexai
    assert not provider.supports_feature(Feature.BATCH)
    assert chat_and_stream(provider, mode) == ANSWERS
    assert [seen.path for seen in server.vertex_requests] == [f"{PROJECT_PATH}:generateContent",
                                                              f"{PROJECT_PATH}:streamGenerateContent"]
    assert all(seen.headers["authorization"].startswith("Bearer ya29.loopback-token-")
               for seen in server.vertex_requests)


def test_an_expiring_token_is_refreshed(sa_file: Path, server: VertexServer) -> None:
    server.expires_in = 5  # google-auth refreshes a token expiring within minutes: every call gets a new one
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=sa_file, base_url=server.url)
    provider.chat_completion(QUESTION)
    provider.chat_completion(QUESTION)
    assert len(server.issued) == 2
    assert [seen.headers["authorization"] for seen in server.vertex_requests] == [
        f"Bearer {token}" for token in server.issued]


def test_a_developer_key_is_never_sent_to_vertex(server: VertexServer, sa_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Without GOOGLE_GENAI_USE_VERTEXAI, GEMINI_API_KEY is a Developer API key: the ``vertex``
    provider is not available on it alone, and with an ADC file it authenticates with that."""
    from core_gemini_plugin.plugin import VERTEX_SPEC

    monkeypatch.setenv("GEMINI_API_KEY", "AIza-developer-key-0123456789")
    assert not VERTEX_SPEC.credentials_present()
    provider = VertexProvider(base_url=server.url)
    assert not provider.is_available()
    with pytest.raises(ConfigurationError, match="no Vertex AI credentials for provider 'vertex'"):
        provider.chat_completion(QUESTION)
    assert server.requests == []
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(sa_file))
    assert VERTEX_SPEC.credentials_present()
    assert VertexProvider(location="us-central1", base_url=server.url).chat_completion(QUESTION).content
    [seen] = server.vertex_requests
    assert "x-goog-api-key" not in seen.headers and seen.path == f"{PROJECT_PATH}:generateContent"


def test_vertex_errors_are_mapped_and_the_token_is_kept_secret(server: VertexServer, sa_file: Path) -> None:
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=sa_file, base_url=server.url,
                              retry=fast_retry(Delays()))
    provider.chat_completion(QUESTION)
    token = server.issued[0]
    server.faults.append((401, error_body(401, "UNAUTHENTICATED", f"token {token} was revoked")))
    with pytest.raises(AuthenticationError) as caught:
        provider.chat_completion(QUESTION)
    assert caught.value.provider == "vertex" and caught.value.status_code == 401
    shown = [str(caught.value), repr(caught.value), str(caught.value.__cause__), repr(caught.value.__cause__)]
    assert not any(token in text for text in shown)
    assert token not in repr(vars(provider))
    server.faults.append((429, error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded.")))
    assert provider.chat_completion(QUESTION).content == ANSWERS[0]  # retried once by the core's policy
    server.faults.extend([(429, error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded."))] * 3)
    with pytest.raises(RateLimitError):
        provider.chat_completion(QUESTION)


def test_a_refused_token_grant_is_an_authentication_error(server: VertexServer, sa_file: Path) -> None:
    server.token_faults.append((400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}))
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=sa_file, base_url=server.url)
    with pytest.raises(AuthenticationError, match="credentials are missing or invalid"):
        provider.chat_completion(QUESTION)
    assert server.vertex_requests == []


@pytest.mark.parametrize(("config", "error", "message"), [
    ({"vertex_project": "p"}, UnknownSettingError, "vertex_project is no longer read: .* project=..."),
    ({"vertex_location": "europe-west4"}, UnknownSettingError, "location=..."),
    ({"project": "p"}, ConfigurationError, "project only apply to Vertex AI"),
    ({"vertexai": True, "project": "p", "credentials": "/no/such/file.json", "api_key": None},
     ConfigurationError, "does not exist"),
    ({"vertexai": "yes"}, ConfigurationError, "vertexai must be true or false"),
])
def test_settings_refused_before_anything_is_sent(config: dict[str, Any], error: type[Exception],
                                                   message: str) -> None:
    with pytest.raises(error, match=message):
        GeminiProvider(**{"api_key": KEY, **config})


def test_the_vertex_provider_refuses_the_developer_api_and_a_key_with_credentials(sa_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="always uses Vertex AI"):
        VertexProvider(vertexai=False, project="p")
    with pytest.raises(ConfigurationError, match="either credentials or an API key"):
        VertexProvider(api_key=KEY, credentials=sa_file)


def test_what_vertex_lacks_is_refused_with_the_reason(sa_file: Path) -> None:
    provider = VertexProvider(project=PROJECT, credentials=sa_file)
    assert provider.backend.location == "global"  # Vertex AI's default location, as google-genai's
    assert Feature.BATCH not in provider.provider_spec.features and not provider.supports_batch()
    assert provider.provider_spec.model("decisions-prerelease") is None  # decisions: structured output
    with pytest.raises(UnsupportedFeatureError, match=r"batch is not offered on Vertex AI: .*Cloud Storage"):
        provider.batch.prepare([{"custom_id": "a", "prompt": "hi"}])
    from llm_core.batch import run

    with pytest.raises(UnsupportedFeatureError, match=r"batch is not offered on Vertex AI: .*BigQuery"):
        run([{"custom_id": "a", "messages": "hi"}], output=sa_file.parent / "out.jsonl", provider=provider)
    from llm_core.builtin_tools import FileSearch

    with pytest.raises(UnsupportedFeatureError, match="file_search is not offered on Vertex AI: file search stores"):
        provider.chat_completion("hi", builtin_tools=[FileSearch(stores=["fileSearchStores/a"])])


def test_the_developer_api_client_is_unchanged() -> None:
    provider = GeminiProvider(api_key=KEY)
    assert provider.client_arguments() == {"vertexai": False, "api_key": KEY}
    assert provider.http_options().api_version == "v1" and provider.http_options().base_url is None
    assert Feature.BATCH in provider.provider_spec.features


def test_a_cloud_storage_url_is_read_by_vertex_only(offline: Any) -> None:
    from llm_core.messages import ChatMessage, ImagePart, TextPart

    message = ChatMessage.user([TextPart(text="What is this?"),
                                ImagePart(url="gs://bucket/photo.png", mime_type="image/png")])
    provider, sent = offline()
    with pytest.raises(InvalidInputError, match="Google Gemini does not read gs: URLs here"):
        provider.chat_completion([message])
    assert sent == []
    vertex = VertexProvider(project=PROJECT, location="us-central1")
    assert "gs" in vertex.url_schemes()
    contents = vertex.map_chat_request(vertex.builder.chat([message]))["contents"]
    assert contents[0]["parts"][1] == {"file_data": {"file_uri": "gs://bucket/photo.png", "mime_type": "image/png"}}


def test_vertex_counts_the_system_text_and_refuses_what_count_tokens_has_no_place_for() -> None:
    vertex = VertexProvider(project=PROJECT, location="us-central1")
    request = vertex.builder.chat("Hi", system="Be brief.", temperature=0.2)
    payload = vertex.map_count_tokens_request(request)
    assert payload["config"]["system_instruction"] and payload["config"]["generation_config"] == {"temperature": 0.2}
    with pytest.raises(InvalidInputError, match="safety_settings cannot be counted on Vertex AI"):
        vertex.map_count_tokens_request(vertex.builder.chat(
            "Hi", safety_settings=[{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]))


def test_no_log_record_shows_the_token(server: VertexServer, sa_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=sa_file, base_url=server.url)
    provider.chat_completion(QUESTION)
    [token] = server.issued
    assert caplog.records and not any(token in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(("env", "expected"), [
    ({"GOOGLE_GENAI_USE_VERTEXAI": "TRUE"}, True),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "1"}, True),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "yes"}, False),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_GENAI_USE_ENTERPRISE": "false"}, False),  # the SDK's order
    ({}, None),
])
def test_the_switch_is_read_as_google_genai_reads_it(env: dict[str, str], expected: bool | None) -> None:
    from core_gemini_plugin.backend import switched_on

    assert switched_on(env) is expected


@pytest.mark.filterwarnings("ignore:The generate_images method is deprecated")
def test_imagen_goes_through_the_providers_own_vertex_client(server: VertexServer, sa_file: Path) -> None:
    provider = VertexProvider(project=PROJECT, location="us-central1", credentials=sa_file, base_url=server.url)
    assert provider.imagen_client is provider.client
    data, mime = provider.generate_imagen_bytes("A lighthouse at dusk, oil painting.")
    assert mime == "image/jpeg" and data.startswith(bytes.fromhex("ffd8"))
    [seen] = server.vertex_requests
    assert seen.path == f"/v1beta1/projects/{PROJECT}/locations/us-central1/publishers/google/models/" \
                       "imagen-4.0-generate-001:predict"
    assert seen.headers["authorization"] == f"Bearer {server.issued[0]}"


def test_select_ranks_by_the_credentials_each_backend_has(sa_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core_gemini_plugin.plugin import SPEC, VERTEX_SPEC
    from llm_core.registry import Registry

    registry = Registry()
    registry.register(SPEC)
    registry.register(VERTEX_SPEC)
    first, second = registry.candidates("chat")
    assert not first.credentials and not second.credentials
    assert "no credentials (set GOOGLE_CLOUD_PROJECT with application default credentials" in " ".join(
        registry.candidates("chat", prefer="vertex")[0].reasons)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(sa_file))  # a Vertex AI user: no Gemini key
    assert [c.identifier for c in registry.candidates("chat") if c.credentials] == ["vertex"]
    assert registry.select("chat").identifier == "vertex"


def _vertex_answer(request: Any) -> Any:
    """A Vertex AI answer fitting what was asked: a function call when tools were sent, JSON when
    a schema was, an image when image output was, else text (the Gemini API's shapes, which
    Vertex AI shares: INDEX.md; a functionCall on Vertex AI is recorded in file 26)."""
    import base64
    import json

    import httpx2

    from tests.gemini.gemini_inputs import PNG
    from tests.gemini.vertex_server import answer

    body = json.loads(request.content)
    config = body.get("generationConfig", {})
    reply = answer("Paris.", MODEL)
    parts = reply["candidates"][0]["content"]["parts"]
    if any("functionDeclarations" in tool for tool in body.get("tools", [])):
        parts[:] = [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]
    elif "true_claim" in config.get("responseJsonSchema", {}).get("properties", {}):  # decide()
        parts[:] = [{"text": json.dumps({"true_claim": "yes"})}]
    elif "responseJsonSchema" in config:
        parts[:] = [{"text": json.dumps({"city": "Paris", "country": "France"})}]
    elif config.get("responseModalities") == ["IMAGE"]:
        parts[:] = [{"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}]
    elif "thinkingConfig" in config:
        parts[:] = [{"text": "Counting the letters.", "thought": True}, {"text": "Three."}]
    return httpx2.Response(200, headers={"content-type": "application/json"}, content=json.dumps(reply).encode())


def test_every_chat_shaped_capability_on_vertex_paths() -> None:
    """Tools, JSON, thinking, vision, documents, decisions (through structured output) and Gemini
    image models go through google-genai's Vertex AI request converters, on Vertex AI paths."""
    import httpx2

    from llm_core.decisions import YesNoQuestion
    from tests.gemini.gemini_inputs import PDF, PNG, WEATHER

    sent: list[Any] = []

    def handler(request: Any) -> Any:
        sent.append(request)
        return _vertex_answer(request)

    transport = httpx2.MockTransport(handler)
    vertex = VertexProvider(api_key=KEY, client_args={"transport": transport},
                            async_client_args={"transport": transport})
    assert vertex.chat_completion_with_tools(QUESTION, [WEATHER]).tool_calls[0].arguments == {"city": "Paris"}
    assert vertex.generate_json(QUESTION, {"type": "object", "properties": {"city": {"type": "string"}}}) == {
        "city": "Paris", "country": "France"}
    thought = vertex.chat_completion("How many r in strawberry?", model="gemini-2.5-flash", thinking={"budget": 128})
    assert thought.thinking == "Counting the letters." and thought.content == "Three."
    assert vertex.analyze_image(PNG, "What is this?", mime_type="image/png").content == "Paris."
    assert vertex.chat_completion([{"role": "user", "content": [
        {"type": "text", "text": "Summarise."}, {"type": "document", "data": PDF, "mime_type": "application/pdf"}]}])
    decision = vertex.decide("Paris is in France.", [YesNoQuestion(key="true_claim", instructions="Is it true?")])
    assert decision.probability_kind == "none"  # no native decisions on Vertex AI: structured output
    assert decision["true_claim"].choice == "yes"
    data, mime = vertex.generate_image_bytes("A red square.")
    assert (data, mime) == (PNG, "image/png")
    assert all(r.url.path.startswith("/v1beta1/publishers/google/models/") and r.url.host == "aiplatform.googleapis.com"
               and r.headers["x-goog-api-key"] == KEY for r in sent)
    assert len(sent) == 7
