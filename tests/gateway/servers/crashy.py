"""A minimal hand-written stdio MCP server (no SDK import, so it starts in milliseconds).

Tools: ``hello`` answers with its pid; ``boom`` exits the process mid-call; ``bad_shape``,
``no_result`` and ``wrong_id`` answer with malformed JSON-RPC. Used where many processes must be
started (one-shot hygiene runs, crash loops) and for protocol faults.
"""

import json
import os
import sys

TOOLS = [
    {
        "name": "hello",
        "description": "Say hello with the process id.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {
        "name": "bad_shape",
        "description": "Answer with a result whose content is not a list.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "no_result",
        "description": "Answer with neither result nor error.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "wrong_id",
        "description": "Answer to a request id that was never sent.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "boom",
        "description": "Exit the process in the middle of the call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    method, rid = request.get("method"), request["id"]
    if method == "initialize":
        version = request["params"].get("protocolVersion", "2025-06-18")
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "crashy", "version": "1"},
                },
            }
        )
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call" and request["params"]["name"] == "boom":
        os._exit(3)
    elif method == "tools/call" and request["params"]["name"] == "bad_shape":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": "not-a-list"}})
    elif method == "tools/call" and request["params"]["name"] == "no_result":
        send({"jsonrpc": "2.0", "id": rid})
    elif method == "tools/call" and request["params"]["name"] == "wrong_id":
        send({"jsonrpc": "2.0", "id": rid + 100000, "result": {"content": []}})
    elif method == "tools/call":
        who = request["params"].get("arguments", {}).get("name", "you")
        text = f"hello {who} from {os.getpid()}"
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
