"""A stdio MCP server whose one tool reports the names of its environment variables."""

import os

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("envdump")


@mcp.tool()
def env_names() -> str:
    """The names of this process's environment variables, comma separated."""
    return ",".join(sorted(os.environ))


if __name__ == "__main__":
    mcp.run()
