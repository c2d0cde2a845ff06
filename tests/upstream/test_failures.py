"""The one error mapping: session steps and gateway calls worded from the same module."""

from __future__ import annotations

import httpx
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from cartograph.config import HttpUpstream, StdioUpstream
from cartograph.errors import UpstreamError, UpstreamTimeout
from cartograph.upstream.failures import (
    StderrLog,
    map_upstream_error,
    mcp_error,
    protocol_error,
    timeout_error,
)

STDIO = StdioUpstream(name="files", command="mcp-files")
HTTP = HttpUpstream(name="remote", url="https://mcp.example.com/mcp")


def mcp(code: int, message: str = "boom") -> MCPError:
    return MCPError(code, message)


class _Answer(BaseModel):
    tools: list[str]


def protocol_violation() -> ValidationError:
    try:
        _Answer.model_validate({"tools": "not a list"})
    except ValidationError as exc:
        return exc
    raise AssertionError("the answer validated")


def test_a_session_step_names_the_step_and_hints_from_stderr_and_stdout() -> None:
    log = StderrLog()
    log.file.write("starting\nfatal: no token\n")
    log.file.flush()
    try:
        error = map_upstream_error(
            STDIO, mcp(types.CONNECTION_CLOSED), "initialize", stderr=log, noise=["'hello'"]
        )
    finally:
        log.close()
    assert str(error) == (
        "upstream 'files': connection closed during initialize (the process exited?); it "
        "wrote non-JSON-RPC text on stdout: 'hello'; stderr ends with: fatal: no token"
    )
    assert "fatal: no token" in error.stderr_tail


def test_session_steps_say_what_failed_for_each_kind_of_error() -> None:
    missing = map_upstream_error(STDIO, FileNotFoundError(2, "x"), "start")
    assert "cannot start 'mcp-files': no such command" in str(missing)
    timed_out = map_upstream_error(STDIO, TimeoutError(), "tools/list", timeout=2.5)
    assert isinstance(timed_out, UpstreamTimeout)
    assert str(timed_out).endswith("did not answer tools/list within 2.5s")
    request = httpx.Request("POST", HTTP.url)
    refused = httpx.HTTPStatusError("no", request=request, response=httpx.Response(401))
    assert "HTTP 401 from https://mcp.example.com/mcp during connect" in str(
        map_upstream_error(HTTP, refused, "connect")
    )
    hung_up = map_upstream_error(HTTP, mcp(types.CONNECTION_CLOSED), "initialize")
    assert "(the server hung up?)" in str(hung_up)
    odd = map_upstream_error(STDIO, protocol_violation(), "tools/list")
    assert "answered tools/list against the protocol (tools:" in str(odd)


@pytest.mark.anyio
async def test_an_upstream_error_inside_the_sdks_task_groups_comes_out_as_it_was() -> None:
    already = UpstreamError("files", "as it was")
    assert map_upstream_error(STDIO, ExceptionGroup("g", [already]), "start") is already


def test_a_call_is_worded_for_the_agent_that_made_it() -> None:
    closed = mcp_error("files", mcp(types.CONNECTION_CLOSED), "tail")
    assert "may or may not have run" in str(closed) and "retry if safe" in str(closed)
    assert closed.stderr_tail == "tail"
    rejected = mcp_error("files", mcp(types.INVALID_PARAMS, "path is required"))
    assert str(rejected) == "upstream 'files': rejected the arguments: path is required"
    assert str(mcp_error("files", mcp(-32099, "disk full"))).endswith("error -32099: disk full")
    slow = timeout_error("files", "tools/call 'read'", 2)
    assert isinstance(slow, UpstreamTimeout)
    assert str(slow) == "upstream 'files': tools/call 'read' did not finish within 2 s; retry"
    shape = protocol_error("files", protocol_violation(), "tools/call")
    assert "answered tools/call against the protocol (tools:" in str(shape)
