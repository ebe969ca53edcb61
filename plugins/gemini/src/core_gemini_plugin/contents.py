"""Pure mapping of a conversation to google-genai ``contents`` (``ContentDict`` list).

Turns become contents and their parts (text, inline and file data, function calls and
responses); a model turn is replayed from its saved Gemini parts and thought signatures when it
carries them. Nothing here imports the SDK; inputs are never mutated.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from llm_core.errors import InvalidInputError
from llm_core.media import sniff_mime
from llm_core.messages import ChatMessage, DocumentPart, ImagePart, Role, TextPart

PROVIDER = "gemini"
#: Parts of a model turn that built-in tools make, kept as dumped by ``parts.PartLog``
#: and sent back as they came: ``executable_code`` / ``code_execution_result`` (code execution),
#: ``tool_call`` / ``tool_response`` (server-side tool invocations).
SERVER_PARTS = ("executable_code", "code_execution_result", "tool_call", "tool_response")
#: Gemini limits a whole request to 20 MB; inline bytes travel base64-encoded (4/3 larger).
MAX_INLINE_BYTES = 15 * 1024 * 1024


# -- tool results ---------------------------------------------------------------------------


def tool_result_object(output: str) -> dict[str, Any]:
    """The ``functionResponse.response`` object for a tool's output string.

    A JSON object is sent as it is, a JSON list as ``{"0": …, "1": …}``, anything else
    (scalars, JSON strings, text that is not JSON) as ``{"result": <the original string>}``.
    """
    try:
        value = json.loads(output, parse_constant=_not_json, parse_float=_finite)
    except ValueError:
        return {"result": output}
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    return {"result": output}


def _not_json(constant: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity``: Python's json reads them, JSON has no such values."""
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    """A JSON number; one beyond a double's range (``1e999``) would reach the wire as Infinity."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is beyond a double's range")
    return value


def _object(value: object, what: str = "tool call arguments") -> dict[str, Any]:
    """A deep copy as a JSON object, so the caller's data stay untouched: empty → ``{}``,
    a list → ``{"0": …, "1": …}``; anything else, or a value JSON cannot carry, is refused."""
    if isinstance(value, list):
        value = {str(index): item for index, item in enumerate(value)}
    elif value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{what} must be a JSON object, not {type(value).__name__}", provider=PROVIDER)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} are not JSON: {exc}", provider=PROVIDER) from None
    return copy.deepcopy(dict(value))


# -- contents -------------------------------------------------------------------------------


def map_contents(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Conversation turns → ``contents``. Consecutive tool results share one user turn. Calls of
    custom (freeform) tools, which only OpenAI has, are left out with their results: a
    conversation that moved here from OpenAI goes on without them."""
    calls = {call.id: call.name for m in messages for call in m.tool_calls or () if not call.is_custom}
    custom = {call.id for m in messages for call in m.tool_calls or () if call.is_custom}
    contents: list[dict[str, Any]] = []
    inline_total = 0
    for index, message in enumerate(messages):
        if message.role is Role.TOOL and message.tool_call_id in custom:
            continue
        if message.role is Role.TOOL:
            part = {"function_response": _function_response(message, calls, index)}
            if contents and contents[-1].get("_tool_results"):
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part], "_tool_results": True})
            continue
        if message.role is Role.ASSISTANT:
            parts = _assistant_parts(message)
            if parts:
                contents.append({"role": "model", "parts": parts})
            continue
        given = message.content
        if isinstance(given, str):
            parts = [{"text": given}] if given else []
        else:
            parts = [_content_part(p) for p in given]
            inline_total += sum(p.size for p in given if not isinstance(p, TextPart))
        if not parts:
            raise InvalidInputError(f"message {index} ({message.role.value}) has no content", provider=PROVIDER)
        contents.append({"role": "user", "parts": parts})
    if inline_total > MAX_INLINE_BYTES:
        raise InvalidInputError(
            f"inline images and documents total {inline_total:,} bytes; Gemini accepts at most "
            f"{MAX_INLINE_BYTES:,} bytes of inline data per request",
            provider=PROVIDER,
        )
    for content in contents:
        content.pop("_tool_results", None)
    return contents


def _function_response(message: ChatMessage, calls: Mapping[str, str], index: int) -> dict[str, Any]:
    name = calls.get(message.tool_call_id or "") or message.name
    if not name:
        raise InvalidInputError(
            f"tool result {index} matches no earlier tool call: give the tool's name", provider=PROVIDER
        )
    response: dict[str, Any] = {"name": name, "response": tool_result_object(message.text)}
    if message.tool_call_id:
        response = {"id": message.tool_call_id, **response}
    return response


def _content_part(part: TextPart | ImagePart | DocumentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    mime = part.mime_type or (sniff_mime(part.data) if part.data is not None else None)
    if part.data is not None:
        return {"inline_data": {"data": part.data, "mime_type": mime}}
    return {"file_data": {"file_uri": part.url, "mime_type": mime}}


def _assistant_parts(message: ChatMessage) -> list[dict[str, Any]]:
    """The model turn: replayed exactly from saved Gemini parts when the message carries them
    (``metadata["gemini_parts"]``), else rebuilt from its text and tool calls."""
    replay = message.metadata.get("gemini_parts")
    saved_signatures = message.metadata.get("thought_signatures") or []
    if (replay and not isinstance(replay, list)) or not isinstance(saved_signatures, list):
        # a saved conversation someone edited: say so instead of failing inside the loops below
        raise InvalidInputError("saved gemini_parts and thought_signatures must be lists", provider=PROVIDER)
    if replay:
        return [replay_part(p) for p in replay]
    signatures = {
        s["tool_call_id"]: s.get("signature")
        for s in saved_signatures
        if isinstance(s, Mapping) and s.get("tool_call_id")
    }
    text_signature = next(
        (s.get("signature") for s in saved_signatures if isinstance(s, Mapping) and s.get("kind") == "text"),
        None,
    )
    parts = [_content_part(p) for p in message.parts]
    if text_signature and parts and "text" in parts[0]:
        parts[0]["thought_signature"] = decode_signature(text_signature)
    for call in message.tool_calls or ():
        if call.is_custom:
            continue
        part: dict[str, Any] = {"function_call": {"id": call.id, "name": call.name, "args": _object(call.arguments)}}
        if call.id in signatures:
            part["thought_signature"] = decode_signature(signatures[call.id])
        parts.append(part)
    return parts


def replay_part(saved: Mapping[str, Any]) -> dict[str, Any]:
    """A saved part (one of ``metadata["gemini_parts"]``, see :class:`~core_gemini_plugin.parts.PartLog`)
    as a part to send back."""
    if not isinstance(saved, Mapping) or not isinstance(saved.get("function_call", {}), Mapping):
        raise InvalidInputError(f"a saved Gemini part must be an object, not {saved!r:.80}", provider=PROVIDER)
    part: dict[str, Any] = {}
    if "text" in saved:
        part["text"] = saved["text"]
    if saved.get("thought") is True:
        part["thought"] = True
    if "function_call" in saved:
        call = saved["function_call"]
        args = _object(call.get("args"), "the args of a saved Gemini function_call part")
        part["function_call"] = {**{k: call[k] for k in ("id", "name") if k in call}, "args": args}
    if "inline_data" in saved:
        blob = saved["inline_data"]
        part["inline_data"] = {"data": base64.b64decode(blob["data"]), "mime_type": blob.get("mime_type")}
    for key in SERVER_PARTS:  # code execution and server-side tool parts go back as they came
        if isinstance(saved.get(key), Mapping):
            part[key] = copy.deepcopy(dict(saved[key]))
    if saved.get("thought_signature"):
        part["thought_signature"] = decode_signature(saved["thought_signature"])
    if not part:
        raise InvalidInputError(f"saved Gemini part {dict(saved)!r} has nothing to send", provider=PROVIDER)
    return part


def decode_signature(value: object) -> bytes:
    """A thought signature kept as base64 text (standard or URL-safe) back to bytes."""
    if not isinstance(value, str):
        raise InvalidInputError("a saved thought signature is not base64 text", provider=PROVIDER)
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise InvalidInputError("a saved thought signature is not base64 text", provider=PROVIDER) from exc
