"""Runtime of a generated stub package: every stub calls through ``cartograph serve``.

This file is copied verbatim into each generated package as ``_runtime.py``; it depends only on
the MCP SDK and anyio, not on cartograph. A stub opens an MCP client session over stdio to
``cartograph serve`` (the proxy, with its signed schemas, argument validation, drift guard and
audit log) and sends the proxy's ``call`` tool. Wrap many calls in ``async with connect():`` to
reuse one session; a stub called outside such a block opens and closes its own.

Which proxy: ``$CARTOGRAPH_SERVE`` (a full command line) if set, else the ``cartograph``
executable next to this interpreter or on ``PATH``, with ``--home`` from ``$CARTOGRAPH_HOME``
or the workspace the stubs were generated from.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

CALL_TIMEOUT = 120.0
_settings: dict[str, str | None] = {"home": None}
_session: ContextVar[ClientSession | None] = ContextVar("cartograph_stub_session", default=None)


class ToolCallError(Exception):
    """The proxy or the upstream answered with an error (the message says what to do)."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: its text, and its structured content when it sent one."""

    text: str
    structured: dict[str, Any] | None
    content: list[Any]

    def json(self) -> Any:
        """The structured content, else the text parsed as JSON."""
        return self.structured if self.structured is not None else json.loads(self.text)


def configure(*, home: str | None = None) -> None:
    """Set the workspace the proxy serves (the generated package sets the one it came from)."""
    _settings["home"] = home


def serve_command() -> list[str]:
    """The command line that starts the proxy on stdio."""
    override = os.environ.get("CARTOGRAPH_SERVE")
    if override:
        return shlex.split(override)
    sibling = Path(sys.executable).with_name("cartograph")
    exe = str(sibling) if sibling.is_file() else shutil.which("cartograph")
    if exe is None:
        raise ToolCallError("cartograph is not installed here: set CARTOGRAPH_SERVE")
    home = os.environ.get("CARTOGRAPH_HOME") or _settings["home"]
    return [exe, *(["--home", home] if home else []), "serve"]


@asynccontextmanager
async def connect() -> AsyncIterator[ClientSession]:
    """One MCP session to the proxy, used by every stub called inside the block."""
    command = serve_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(CALL_TIMEOUT):
            await session.initialize()
        token = _session.set(session)
        try:
            yield session
        finally:
            _session.reset(token)


async def call_tool(server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
    """Call ``tool`` of ``server`` through the proxy; None-valued arguments are left out."""
    sent = {key: value for key, value in arguments.items() if value is not None}
    session = _session.get()
    if session is None:
        async with connect() as fresh:
            return await _call(fresh, server, tool, sent)
    return await _call(session, server, tool, sent)


async def _call(
    session: ClientSession, server: str, tool: str, arguments: dict[str, Any]
) -> ToolResult:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await session.call_tool(
            "call", {"server": server, "tool": tool, "arguments": arguments}
        )
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    if result.is_error:
        raise ToolCallError(f"{server}.{tool}: {text}")
    return ToolResult(text, result.structured_content, list(result.content))
