"""A model turn's parts as the plugin keeps them (``metadata["gemini_parts"]``): the record the
next request replays (Gemini rejects a tool-call turn without its thought signatures), built
part by part from an answer or a stream, with the function calls it holds as tool calls."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any

from core_gemini_plugin.contents import SERVER_PARTS
from llm_core.errors import InvalidResponseError
from llm_core.tools import ToolCall

if TYPE_CHECKING:
    from google.genai import types

PROVIDER = "gemini"


def tool_call_id(response_id: str | None, index: int, name: str, args: Any) -> str:
    """A stable id for a function call Gemini sent without one (same response → same id)."""
    seed = json.dumps([response_id, index, name, args], sort_keys=True, default=str)
    return "call_" + hashlib.sha256(seed.encode()).hexdigest()[:24]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class PartLog:
    """Collects a model turn's parts as replay data (``gemini_parts``), thought signatures and
    tool calls. Consecutive streamed text pieces of the same kind merge into one part (their
    pieces are joined once, when the part is complete, not re-copied per delta)."""

    def __init__(self, response_id: str | None = None) -> None:
        self.response_id = response_id
        self._parts: list[dict[str, Any]] = []
        self._pieces: list[str] = []  # the text of the last part while more may merge into it
        self.tool_calls: list[ToolCall] = []

    @property
    def parts(self) -> list[dict[str, Any]]:
        self._seal()
        return self._parts

    def add(self, part: types.Part, *, merge_text: bool = False) -> ToolCall | None:
        signature = b64(part.thought_signature) if part.thought_signature else None
        call = part.function_call
        if call is not None:
            if not isinstance(call.name, str) or not call.name:
                # the model's call is unusable without it: nothing to run, nothing to send back
                raise InvalidResponseError("Gemini sent a function call without a name", provider=PROVIDER)
            name = call.name
            args = dict(call.args or {})
            ident = call.id or tool_call_id(self.response_id, len(self.tool_calls), name, args)
            tool_call = ToolCall(id=ident, name=name, arguments=args)
            self.tool_calls.append(tool_call)
            self._append({"function_call": {"id": ident, "name": name, "args": args}}, signature)
            return tool_call
        if isinstance(part.text, str):
            thought = part.thought is True
            if merge_text and self._pieces and self._parts[-1].get("thought", False) == thought:
                self._pieces.append(part.text)
                if signature:  # a signed part is complete: nothing merges into it any more
                    self._seal()
                    self._parts[-1]["thought_signature"] = signature
                return None
            self._append({"text": part.text, **({"thought": True} if thought else {})}, signature)
            if merge_text and not signature:
                self._pieces = [part.text]
            return None
        if part.inline_data is not None and part.inline_data.data is not None:
            blob = {"data": b64(part.inline_data.data), "mime_type": part.inline_data.mime_type}
            self._append({"inline_data": blob}, signature)
            return None
        for key in SERVER_PARTS:  # code the model ran and its result, server-side tool calls
            value = getattr(part, key, None)
            if value is not None:
                self._append({key: value.model_dump(mode="json", exclude_none=True)}, signature)
        return None

    def _seal(self) -> None:
        if self._pieces:
            self._parts[-1]["text"] = "".join(self._pieces)
            self._pieces = []

    def _append(self, saved: dict[str, Any], signature: str | None) -> None:
        self._seal()
        if signature:
            saved["thought_signature"] = signature
        self._parts.append(saved)

    def signatures(self) -> list[dict[str, Any]]:
        """``[{"part", "kind", "signature", "tool_call_id"?}]`` for every signed part."""
        found: list[dict[str, Any]] = []
        for index, part in enumerate(self.parts):
            if "thought_signature" not in part:
                continue
            entry: dict[str, Any] = {"part": index, "signature": part["thought_signature"]}
            if "function_call" in part:
                entry.update(kind="function_call", tool_call_id=part["function_call"]["id"])
            elif "text" in part:
                entry["kind"] = "thought" if part.get("thought") else "text"
            else:
                entry["kind"] = "other"
            found.append(entry)
        return found

    def replay_metadata(self) -> dict[str, Any]:
        return {"gemini_parts": self.parts, "thought_signatures": self.signatures()}
