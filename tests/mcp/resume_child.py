"""Another process resumes a saved conversation whose MCP tool call waits for approval:
``python -m tests.mcp.resume_child SAVED LEDGER OUT approve|crash``.

``approve``: approve the waiting call, ``send()``, print the answer, save the conversation to
OUT. ``crash``: the same, but the process dies right after the conversation recorded (through
its checkpoint, written to OUT) that the call started, before the tool had run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from llm_core.conversation import Conversation
from llm_core.testing import FakeProvider, FakeReply
from tests.mcp.servers import stdio_server


def main() -> None:
    saved, ledger, out, mode = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]

    def checkpoint(document: str) -> None:
        out.write_text(document)
        if mode == "crash" and any(r["started"] for r in json.loads(document)["tool_calls"].values()):
            os._exit(9)  # the machine went down between "started" and the call

    provider = FakeProvider(replies=[FakeReply(content="Paid.")])
    server = stdio_server(ledger, requires_approval=True)
    with Conversation.from_json(saved.read_text(), provider=provider, tools=[server], checkpoint=checkpoint) as chat:
        (waiting,) = chat.pending_approvals
        chat.approve(waiting.id)
        print(chat.send().content)
        out.write_text(chat.to_json())


if __name__ == "__main__":
    main()
