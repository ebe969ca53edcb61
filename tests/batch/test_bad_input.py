"""Bad input is a typed error before anything is uploaded (the server saw no upload, no job)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llm_core.batch import run
from llm_core.batch.record import record_path
from llm_core.errors import InvalidInputError, UnsupportedFeatureError
from tests.batch.batchkit import HERE, chats

MIB = 1 << 20


def _nothing_sent(server) -> None:
    assert server.uploads == 0
    assert server.creates == 0
    assert server.single_calls == 0


def test_missing_custom_id(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="item 2: custom_id is missing"):
        openai.batch.submit([{"custom_id": "a", "messages": "hi"}, {"messages": "no id"}])
    _nothing_sent(server)


def test_duplicate_ids(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="duplicate custom_id 'a'"):
        openai.batch.submit([{"custom_id": "a", "messages": "hi"}, {"custom_id": "a", "messages": "again"}])
    _nothing_sent(server)


def test_a_feature_batch_apis_do_not_take(openai, gemini, server) -> None:
    for provider in (openai, gemini):
        with pytest.raises(UnsupportedFeatureError, match="not 'image'"):
            provider.batch.submit([{"custom_id": "a", "kind": "image", "prompt": "a cat"}])
    _nothing_sent(server)


def test_a_model_whose_batch_api_is_not_there(gemini, server) -> None:
    item = {"custom_id": "a", "messages": "draw", "options": {"model": "gemini-2.5-flash-image"}}
    with pytest.raises(UnsupportedFeatureError, match="does not support batch"):
        gemini.batch.submit([item])
    _nothing_sent(server)


def test_a_native_decision_model(gemini, server) -> None:
    question = {"key": "ok", "kind": "yes_no", "instructions": "Fine?"}
    item = {"custom_id": "d", "kind": "decision", "subject": "x", "questions": [question]}
    with pytest.raises(UnsupportedFeatureError, match="native decision API, which batch jobs do not take"):
        gemini.batch.submit([item])  # the default decision model is a native one
    _nothing_sent(server)


def test_an_option_a_batch_file_cannot_carry(openai, server) -> None:
    items = [{"custom_id": "a", "messages": "hi", "options": {"extra_headers": {"X-Trace": "1"}}}]
    with pytest.raises(InvalidInputError, match="extra_headers cannot be sent in a batch file"):
        openai.batch.submit(items)
    _nothing_sent(server)


def test_invalid_item_is_refused_as_the_single_call_refuses_it(openai, server) -> None:
    with pytest.raises(InvalidInputError, match="temperature"):
        openai.batch.submit([{"custom_id": "a", "messages": "hi", "options": {"temperature": 9}}])
    _nothing_sent(server)


def test_mixed_endpoints_in_one_job(openai, server) -> None:
    items = [{"custom_id": "a", "messages": "hi"}, {"custom_id": "b", "kind": "embedding", "input": "x"}]
    with pytest.raises(InvalidInputError, match="needs a separate job"):
        openai.batch.submit(items)
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


# -- the input file itself: numbers JSON has not, bytes that are not UTF-8, nesting, line size -----


def _refused(source: Path, output: Path, provider, mode: str = "local") -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        run(source, output=output, provider=provider, mode=mode)
    assert not record_path(output).exists()  # nothing was sent: a corrected input starts afresh
    assert not output.exists()
    return caught.value


@pytest.mark.parametrize("mode", ["batch", "local"])
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_json_has_not_is_refused_naming_file_and_line(
    number: str, mode: str, openai, server, tmp_path: Path
) -> None:
    source = tmp_path / "in.jsonl"
    good = json.dumps({"custom_id": "a", "messages": "hi"})
    bad = '{"custom_id": "b", "messages": "hi", "options": {"temperature": ' + number + "}}"
    source.write_text(good + "\n" + bad + "\n")
    error = _refused(source, tmp_path / "out.jsonl", openai, mode)
    assert f"{source}: line 2" in str(error)
    assert "not a finite number" in str(error)
    _nothing_sent(server)


def test_a_non_finite_number_from_python_is_refused(openai, server, tmp_path: Path) -> None:
    items = [{"custom_id": "a", "messages": "hi", "options": {"temperature": float("nan")}}]
    with pytest.raises(InvalidInputError, match=r"item 1: options.temperature is nan: not a finite number"):
        run(items, output=tmp_path / "out.jsonl", provider=openai, mode="local")
    with pytest.raises(InvalidInputError, match="not a finite number"):
        openai.batch.submit(items)
    _nothing_sent(server)


def test_bytes_that_are_not_utf8_are_refused_naming_file_and_line(openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"custom_id": "a", "messages": "hi"}\n{"custom_id": "b", "messages": "caf\xe9"}\n')
    error = _refused(source, tmp_path / "out.jsonl", openai)
    assert f"{source}: line 2: not UTF-8 (byte 36 of the line)" in str(error)
    assert isinstance(error.__cause__, UnicodeDecodeError)
    _nothing_sent(server)


def test_a_utf8_byte_order_mark_is_skipped(openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + json.dumps({"custom_id": "a", "messages": "hi"}).encode() + b"\r\n")
    summary = run(source, output=tmp_path / "out.jsonl", provider=openai, mode="local")
    assert summary.done == summary.total == 1


@pytest.mark.parametrize("depth", [65, 300, 100_000])
def test_deep_nesting_is_refused(depth: int, openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    # the item object is level 1 and options level 2: the value adds depth - 2 more
    nested = "[" * (depth - 2) + "]" * (depth - 2)
    source.write_text('{"custom_id": "a", "messages": "hi", "options": {"x": ' + nested + "}}\n")
    error = _refused(source, tmp_path / "out.jsonl", openai)
    assert f"{source}: line 1: nested deeper than 64 levels" in str(error)
    _nothing_sent(server)


def test_nesting_up_to_the_limit_is_accepted(tmp_path: Path) -> None:
    from llm_core.batch.types import item_from_json

    nested = "[" * 62 + "]" * 62  # 64 levels with the item and its options
    item = item_from_json('{"custom_id": "a", "messages": "hi", "options": {"x": ' + nested + "}}", where="line 1")
    assert item.custom_id == "a"


def test_a_lone_surrogate_is_refused_before_it_reaches_the_record(openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"custom_id": "a", "messages": "hi", "options": {"system": "\\udc00"}}\n')
    error = _refused(source, tmp_path / "out.jsonl", openai)
    assert f"{source}: line 1: options.system contains a lone surrogate" in str(error)
    _nothing_sent(server)


def test_a_line_over_the_limit_is_refused_before_it_is_parsed(openai, server, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    line = json.dumps({"custom_id": "a", "messages": "x" * 2000})
    source.write_text(json.dumps({"custom_id": "b", "messages": "hi"}) + "\n" + line + "\n")
    output = tmp_path / "out.jsonl"
    with pytest.raises(InvalidInputError, match=rf"{source}: line 2: longer than 1000 bytes \(max_line_bytes\)"):
        run(source, output=output, provider=openai, mode="local", max_line_bytes=1000)
    assert not record_path(output).exists()
    summary = run(source, output=output, provider=openai, mode="local", max_line_bytes=len(line))  # just fits
    assert summary.done == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_100_mb_line_is_refused_within_the_limit_s_memory(tmp_path: Path) -> None:
    from llm_core.batch.jsonl import MAX_LINE_BYTES

    source = tmp_path / "in.jsonl"
    with open(source, "wb") as handle:
        handle.write(b'{"custom_id": "a", "messages": "hi"}\n{"custom_id": "big", "messages": "')
        block = b"x" * (1 << 20)
        for _ in range(100):
            handle.write(block)
        handle.write(b'"}\n')
    done = subprocess.run(
        [sys.executable, str(HERE / "big_line_child.py"), str(source), str(tmp_path / "out.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figure = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\n{figure}")
    assert figure["error"] == "InvalidInputError"
    assert f"line 2: longer than {MAX_LINE_BYTES} bytes" in figure["message"]
    assert figure["growth_kib"] * 1024 < MAX_LINE_BYTES + 16 * MIB  # not the 100 MB line, nor 5 x it
