"""An SDK 1.x client (run by .sdk1-venv's python): connects to the MCP server whose command line
is argv[1:] over stdio, lists its tools, discovers and calls once, and prints what it saw as one
JSON object on stdout (the era tests read it)."""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def _text(result: object) -> str:
    return "".join(getattr(b, "text", "") for b in getattr(result, "content", []))


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        found = await session.call_tool("discover", {"task": "add two numbers", "k": 2})
        added = await session.call_tool(
            "call", {"server": "chaos", "tool": "add", "arguments": {"a": 2, "b": 3}}
        )
    seen = {
        "protocol": init.protocolVersion,
        "tools": sorted(t.name for t in listed.tools),
        "listed": listed.model_dump(by_alias=True, exclude_none=True, mode="json"),
        "discover": json.loads(_text(found)),
        "added": _text(added),
    }
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
