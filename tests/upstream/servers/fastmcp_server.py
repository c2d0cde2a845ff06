"""A FastMCP server over HTTP for transport tests. Usage: fastmcp_server.py PORT http|sse."""

import sys

from mcp.server.fastmcp import FastMCP

port, transport = int(sys.argv[1]), sys.argv[2]
mcp = FastMCP("http-demo", host="127.0.0.1", port=port, log_level="INFO")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


mcp.run(transport="streamable-http" if transport == "http" else "sse")
