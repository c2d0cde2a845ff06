"""A tiny hand-written stdio 'server' for fault injection; the mode is the first argument.

hang     reads requests and never answers; ignores stdin EOF (must be terminated)
garbage  answers every line with text that is not JSON-RPC, until stdin closes
exit     writes a line to stderr and exits with status 3 before reading anything
raw      a working server whose tools/list is the JSON file given as the second argument, sent
         byte for byte (tools the SDK's models would refuse are fine)
listings a working server advertising prompts and resources: its prompts/list answers without a
         list, resources/list is refused, resources/templates/list holds one template
"""

import json
import sys
import time
from pathlib import Path

MODE = sys.argv[1]
RAW_TOOLS = Path(sys.argv[2]).read_text(encoding="utf-8") if MODE == "raw" else "[]"
if MODE == "listings":
    RAW_TOOLS = '[{"name": "ping", "inputSchema": {"type": "object"}}]'


def send(message: dict, raw_result: str | None = None) -> None:
    text = json.dumps(message)
    if raw_result is not None:  # splice the file's JSON in unchanged
        text = text[:-1] + ', "result": ' + raw_result + "}"
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if MODE == "exit":
    print("fatal: cannot open the database (this is a test)", file=sys.stderr, flush=True)
    sys.exit(3)

print(f"raw_server starting in mode {MODE}", file=sys.stderr, flush=True)
for line in sys.stdin:
    if MODE == "hang":
        continue
    if MODE == "garbage":
        sys.stdout.write("Welcome to a program that does not speak MCP!\n")
        sys.stdout.flush()
        continue
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}}
            if MODE != "listings"
            else {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "raw-server", "version": "0.0.1"},
            "instructions": "Hand-written for tests.",
        }
    elif MODE == "listings" and request["method"] == "prompts/list":
        result = {"prompt": "not a list"}
    elif MODE == "listings" and request["method"] == "resources/templates/list":
        result = {"resourceTemplates": [{"uriTemplate": "raw://doc/{id}", "name": "doc"}]}
    elif request["method"] == "tools/list":
        send({"jsonrpc": "2.0", "id": request["id"]}, '{"tools": ' + RAW_TOOLS.strip() + "}")
        continue
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})

if MODE == "hang":
    while True:
        time.sleep(3600)
