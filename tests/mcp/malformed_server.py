"""An MCP server over stdio that answers in the wrong shape, written by hand (no real server
sends malformed answers on purpose): ``python -m tests.mcp.malformed_server result`` lists a
tool whose ``tools/call`` result has ``content`` that is not a list; ``... schema`` lists a
tool whose input schema requires a property it does not define. It speaks the handshake-era protocol
(``initialize``, protocol version 2025-11-25, shapes from the MCP specification's schema) and
refuses ``server/discover`` as an unknown method, as such servers do."""

from __future__ import annotations

import json
import sys

VERSION = "2025-11-25"
MODE = sys.argv[1] if len(sys.argv) > 1 else "result"
# "schema": valid JSON Schema, but no tool schema a model can be given ("required" names a
# property that does not exist)
SCHEMA = {"type": "object", "properties": {}, **({"required": ["ghost"]} if MODE == "schema" else {})}


def answer(request: dict, result: dict | None = None, error: dict | None = None) -> None:
    reply = {"jsonrpc": "2.0", "id": request["id"]}
    reply.update({"error": error} if error is not None else {"result": result})
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method = request.get("method")
    if "id" not in request:  # a notification
        continue
    if method == "initialize":
        answer(
            request,
            {"protocolVersion": VERSION, "capabilities": {"tools": {}}, "serverInfo": {"name": "odd", "version": "1"}},
        )
    elif method == "tools/list":
        answer(request, {"tools": [{"name": "broken", "description": "Answers oddly.", "inputSchema": SCHEMA}]})
    elif method == "tools/call":
        answer(request, {"content": "not a list of content blocks"})
    else:
        answer(request, error={"code": -32601, "message": f"Method not found: {method}"})
