"""Gemini batch mode with an uploaded input file, for jobs above the inlined limits.

The job's requests go as one JSONL file (``client.files.upload``, then ``batches.create`` /
``batches.create_embeddings`` with the file's name as ``src``); its results come back as one
JSONL file (``BatchJob.dest.file_name``, fetched with ``client.files.download`` into a temporary
file and read line by line, so a large output is never held whole).

Line shapes: the Gemini batch API docs ("Input file": each line a complete request with a
``key``) and google-gemini/cookbook ``quickstarts/Batch_mode.ipynb`` (its input and output
lines): input ``{"key": ..., "request": GenerateContentRequest | EmbedContentRequest}``, output
``{"key": ..., "response": GenerateContentResponse | {"embedding": ContentEmbedding,
"tokenCount": ...}}`` or ``{"key": ..., "error": google.rpc.Status}`` (``code``, ``message``:
the docs' "status object"). Request fields carry their proto names (``generation_config``,
``system_instruction``), which the proto JSON parser accepts as well as lowerCamelCase (the
cookbook's embedding lines use ``output_dimensionality``); the values inside (JSON schemas, tool
parameters) are sent as given. The SDK is imported only inside the calls.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import pydantic_core

from core_gemini_plugin.errors import error_for_status
from llm_core.batch.capability import Item, Result
from llm_core.errors import InvalidInputError, InvalidResponseError, LLMError

if TYPE_CHECKING:
    from google import genai

PROVIDER = "gemini"
#: The MIME type the docs upload a batch input file with.
FILE_MIME_TYPE = "jsonl"
#: The Files API takes files of at most 2 GB.
MAX_FILE_BYTES = 2 * 1024**3
#: ``GenerateContentConfig`` keys the mapper sets that are fields of the request itself; every
#: other key is a ``generation_config`` field.
REQUEST_FIELDS = frozenset({"system_instruction", "tools", "tool_config", "safety_settings", "cached_content"})
#: Between an embedding item's ``custom_id`` and the index of its input, in a line's ``key``.
INPUT_SEPARATOR = "#"
#: google.rpc codes (``JobError.code``, a line's ``error.code``) → the HTTP status the single call
#: would have had.
RPC_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 13: 500, 14: 503, 16: 401}


def rpc_error(code: int | None, message: str | None) -> LLMError:
    """The typed error of one failed request (a google.rpc status: a code and a message)."""
    return error_for_status(RPC_HTTP.get(code, code) if code is not None else None, None, message)


# -- requests -> lines --------------------------------------------------------------------------


def generate_line(custom_id: str, payload: Mapping[str, Any]) -> str:
    """One ``generate_content`` payload of the mapper as an input line."""
    contents = payload["contents"]
    if isinstance(contents, str):  # what the SDK's t_contents makes of a plain prompt
        contents = [{"role": "user", "parts": [{"text": contents}]}]
    request: dict[str, Any] = {"contents": _plain(contents)}
    generation: dict[str, Any] = {}
    for name, value in (payload.get("config") or {}).items():
        if name == "system_instruction" and isinstance(value, str):
            request[name] = {"parts": [{"text": value}]}
        elif name in REQUEST_FIELDS:
            request[name] = _plain(value)
        else:
            generation[name] = _plain(value)
    if generation:
        request["generation_config"] = generation
    return json.dumps({"key": custom_id, "request": request})


def embedding_lines(custom_id: str, payload: Mapping[str, Any]) -> list[str]:
    """One ``embed_content`` payload as input lines: one ``EmbedContentRequest`` per input."""
    settings = _plain(payload.get("config") or {})
    return [
        json.dumps({"key": f"{custom_id}{INPUT_SEPARATOR}{n}", "request": {"content": _content(text), **settings}})
        for n, text in enumerate(payload["contents"])
    ]


def _content(value: Any) -> Any:
    return {"parts": [{"text": value}]} if isinstance(value, str) else _plain(value)


def _plain(value: Any) -> Any:
    """JSON values: SDK models by their field names, bytes as base64 (as the REST API takes them)."""
    return pydantic_core.to_jsonable_python(value, by_alias=False, exclude_none=True, bytes_mode="base64")


def check_size(lines: Sequence[str]) -> int:
    """The file's size in bytes; a job too big for one file is refused before any upload."""
    size = sum(len(line.encode()) + 1 for line in lines)
    if size > MAX_FILE_BYTES:
        raise InvalidInputError(
            f"the job's input file would be {size} bytes, more than the {MAX_FILE_BYTES} the Gemini Files API "
            "takes; split the items into smaller jobs (llm_core.batch.run(chunk_size=...))",
            provider=PROVIDER,
        )
    return size


# -- lines -> results ---------------------------------------------------------------------------


def file_results(lines: Iterable[Mapping[str, Any]], items: Mapping[str, Item]) -> Iterator[Result]:
    """``(custom_id, SDK response | LLMError)`` per output line, in the file's order (keyed, so
    any order is read right); an embedding item waits for the lines of all its inputs."""
    from google.genai import types

    pending: dict[str, dict[int, Any]] = {}
    for line in lines:
        key = str(line.get("key", ""))
        if key in items and items[key].kind != "embedding":
            yield key, _generate_result(line, types)
            continue
        custom_id, _, index = key.rpartition(INPUT_SEPARATOR)
        item = items.get(custom_id)
        if item is None or item.kind != "embedding" or not index.isdigit():
            continue  # a key this job never sent: the core reports the ids left without a result
        group = pending.setdefault(custom_id, {})
        group[int(index)] = _embedding_result(line, types)
        count = 1 if isinstance(item.input, str) else len(item.input)
        if len(group) < count:
            continue
        del pending[custom_id]
        errors = [r for r in group.values() if isinstance(r, LLMError)]
        if errors:
            yield custom_id, errors[0]
            continue
        yield custom_id, types.EmbedContentResponse(embeddings=[group[n] for n in sorted(group)])


def _generate_result(line: Mapping[str, Any], types: Any) -> Any:
    if line.get("error") is not None:
        return _line_error(line["error"])
    try:
        return types.GenerateContentResponse.model_validate(line.get("response") or {}, extra="ignore")
    except pydantic_core.ValidationError as exc:
        return _unreadable(exc)


def _embedding_result(line: Mapping[str, Any], types: Any) -> Any:
    if line.get("error") is not None:
        return _line_error(line["error"])
    try:
        return types.ContentEmbedding.model_validate((line.get("response") or {}).get("embedding"), extra="ignore")
    except pydantic_core.ValidationError as exc:
        return _unreadable(exc)


def _line_error(error: Any) -> LLMError:
    if not isinstance(error, Mapping):
        return InvalidResponseError("Gemini batch: a result line with an unreadable error", provider=PROVIDER)
    code = error.get("code")
    return rpc_error(code if isinstance(code, int) else None, str(error.get("message") or ""))


def _unreadable(exc: pydantic_core.ValidationError) -> LLMError:
    return InvalidResponseError(
        f"Gemini batch: a result line of an unexpected shape ({exc.error_count()} problems)", provider=PROVIDER
    )


# -- the SDK calls ------------------------------------------------------------------------------


def upload(client: genai.Client, lines: Sequence[str], tag: str) -> str:
    """Upload the input file (written to a temporary file first); its name (``files/…``)."""
    with _input_file(lines) as handle:
        uploaded = client.files.upload(file=handle, config={"mime_type": FILE_MIME_TYPE, "display_name": tag})
    return str(uploaded.name)


async def aupload(client: genai.Client, lines: Sequence[str], tag: str) -> str:
    with _input_file(lines) as handle:
        uploaded = await client.aio.files.upload(file=handle, config={"mime_type": FILE_MIME_TYPE, "display_name": tag})
    return str(uploaded.name)


def _input_file(lines: Sequence[str]) -> io.BufferedRandom:
    handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the caller's with block
    for line in lines:
        handle.write(line.encode() + b"\n")
    handle.seek(0)
    return handle  # binary and seekable, as the SDK's upload needs


def download(client: genai.Client, name: str) -> Iterator[dict[str, Any]]:
    """The output file's lines, streamed to a temporary file by the SDK and read back one by one."""
    handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed when the lines are read
    try:
        client.files.download(file=name, destination=handle)
    except BaseException:
        handle.close()
        raise
    return _lines(handle)


async def adownload(client: genai.Client, name: str) -> Iterator[dict[str, Any]]:
    handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed when the lines are read
    try:
        await client.aio.files.download(file=name, destination=handle)
    except BaseException:
        handle.close()
        raise
    return _lines(handle)


def _lines(handle: IO[bytes]) -> Iterator[dict[str, Any]]:
    with handle:
        handle.seek(0)
        for raw in handle:
            if raw.strip():
                yield json.loads(raw)


__all__ = ["check_size", "download", "embedding_lines", "file_results", "generate_line", "rpc_error", "upload"]
