"""What an agent sees: connect to `cartograph serve` over stdio as any MCP client does.

    .venv/bin/python examples/agent_session.py [--home DIR] ["task in plain words" ...]

Lists the proxy's three tools, asks `discover` for each task, calls the top tool of the first
task with its card's example arguments through `call`, and prints `status`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DEFAULT_TASKS = [
    "what time is it in Tokyo right now",
    "remember that Alice works at Acme as an engineer",
    "show the last commits of the git repository",
]


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def main(home: str, tasks: list[str]) -> int:
    cli = Path(sys.executable).with_name("cartograph")
    params = StdioServerParameters(command=str(cli), args=["--home", home, "serve"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        print(f"proxy tools: {', '.join(t.name for t in tools.tools)}")
        first = None
        for task in tasks:
            found = await session.call_tool("discover", {"task": task, "k": 3})
            hits = json.loads(text_of(found))["tools"]
            print(f"\ndiscover({task!r}):")
            for rank, hit in enumerate(hits, 1):
                print(f"  {rank}. {hit['server']}.{hit['tool']}  {hit['summary']}")
            if first is None and hits:
                first = hits[0]
        if first is not None:
            args = (first.get("examples") or [{}])[0]
            print(f"\ncall({first['server']}, {first['tool']}, {json.dumps(args)}):")
            result = await session.call_tool(
                "call", {"server": first["server"], "tool": first["tool"], "arguments": args}
            )
            print(("  ERROR " if result.is_error else "  ") + text_of(result)[:500])
        status = await session.call_tool("status", {})
        print("\nstatus:\n  " + text_of(status)[:1500].replace("\n", "\n  "))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default=".cartograph")
    parser.add_argument("tasks", nargs="*")
    ns = parser.parse_args()
    sys.exit(anyio.run(main, ns.home, ns.tasks or DEFAULT_TASKS))
