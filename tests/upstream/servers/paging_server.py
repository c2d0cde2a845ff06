"""A lowlevel MCP server over stdio that pages tools/list: TOTAL tools, PAGE per page.

Usage: paging_server.py [TOTAL] [PAGE]. The cursor is an opaque token that encodes the offset.
"""

import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOTAL = int(sys.argv[1]) if len(sys.argv) > 1 else 25
PAGE = int(sys.argv[2]) if len(sys.argv) > 2 else 10

server = Server("paging-server", version="1.0.0", instructions="Pages its tools.")


def tool(i: int) -> types.Tool:
    return types.Tool(
        name=f"tool_{i:03d}",
        title=f"Tool number {i}",
        description=f"Returns the number {i}.",
        inputSchema={"type": "object", "properties": {"x": {"type": "integer"}}},
        annotations=types.ToolAnnotations(readOnlyHint=True),
    )


@server.list_tools()
async def list_tools(request: types.ListToolsRequest) -> types.ListToolsResult:
    cursor = request.params.cursor if request.params else None
    start = int(cursor.removeprefix("offset-")) if cursor else 0
    end = min(start + PAGE, TOTAL)
    return types.ListToolsResult(
        tools=[tool(i) for i in range(start, end)],
        nextCursor=f"offset-{end}" if end < TOTAL else None,
    )


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
