"""Bad input is a typed error before anything is uploaded (the server saw no upload, no job)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batchkit import chats

from llm_core.batch import run
from llm_core.batch.record import record_path
from llm_core.errors import InvalidInputError, UnsupportedFeatureError


def _nothing_sent(server) -> None:
    assert server.uploads == 0
    assert server.creates == 0
    assert server.single_calls == 0


def test_missing_custom_id(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="item 2: custom_id is missing"):
        openai.submit_batch([{"custom_id": "a", "messages": "hi"}, {"messages": "no id"}])
    _nothing_sent(server)


def test_duplicate_ids(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="duplicate custom_id 'a'"):
        openai.submit_batch([{"custom_id": "a", "messages": "hi"}, {"custom_id": "a", "messages": "again"}])
    _nothing_sent(server)


def test_a_feature_batch_apis_do_not_take(openai, gemini, server) -> None:
    for provider in (openai, gemini):
        with pytest.raises(UnsupportedFeatureError, match="not 'image'"):
            provider.submit_batch([{"custom_id": "a", "kind": "image", "prompt": "a cat"}])
    _nothing_sent(server)


def test_a_model_whose_batch_api_is_not_there(gemini, server) -> None:
    item = {"custom_id": "a", "messages": "draw", "options": {"model": "gemini-2.5-flash-image"}}
    with pytest.raises(UnsupportedFeatureError, match="does not support batch"):
        gemini.submit_batch([item])
    _nothing_sent(server)


def test_a_native_decision_model(gemini, server) -> None:
    question = {"key": "ok", "kind": "yes_no", "instructions": "Fine?"}
    item = {"custom_id": "d", "kind": "decision", "subject": "x", "questions": [question]}
    with pytest.raises(UnsupportedFeatureError, match="native decision API, which batch jobs do not take"):
        gemini.submit_batch([item])  # the default decision model is a native one
    _nothing_sent(server)


def test_an_option_a_batch_file_cannot_carry(openai, server) -> None:
    items = [{"custom_id": "a", "messages": "hi", "options": {"extra_headers": {"X-Trace": "1"}}}]
    with pytest.raises(InvalidInputError, match="extra_headers cannot be sent in a batch file"):
        openai.submit_batch(items)
    _nothing_sent(server)


def test_invalid_item_is_refused_as_the_single_call_refuses_it(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="temperature"):
        openai.submit_batch([{"custom_id": "a", "messages": "hi", "options": {"temperature": 9}}])
    _nothing_sent(server)


def test_mixed_endpoints_in_one_job(openai, server) -> None:
    items = [{"custom_id": "a", "messages": "hi"}, {"custom_id": "b", "kind": "embedding", "input": "x"}]
    with pytest.raises(InvalidInputError, match="needs a separate job"):
        openai.submit_batch(items)
    _nothing_sent(server)


def test_input_file_that_is_not_jsonl(openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"custom_id": "a", "messages": "hi"}) + "\n\nnot json at all\n")
    output = tmp_path / "out.jsonl"
    with pytest.raises(InvalidInputError, match=r"line 3: not JSON"):
        run(source, output=output, provider=openai)
    _nothing_sent(server)
    assert not record_path(output).exists()  # nothing was sent: a corrected input starts afresh
    assert not output.exists()


@pytest.mark.parametrize("mode", ["batch", "local"])
def test_runner_checks_the_whole_input_first(mode, openai, server, write_jsonl, tmp_path: Path) -> None:
    source = write_jsonl([*chats(5), {"custom_id": "q3", "messages": "dup"}])
    with pytest.raises(InvalidInputError, match="line 6: duplicate custom_id 'q3'"):
        run(source, output=tmp_path / "out.jsonl", provider=openai, mode=mode)
    _nothing_sent(server)


def test_runner_refuses_a_provider_without_batch_api(tmp_path: Path) -> None:
    from llm_core.testing import FakeProvider

    with pytest.raises(UnsupportedFeatureError, match="has no batch API"):
        run(chats(1), output=tmp_path / "out.jsonl", provider=FakeProvider())
