"""How upstream failures are told: the captured stderr, and the one error mapping.

:class:`StderrLog` keeps a stdio child's stderr in an unnamed temporary file (the child can never
block on a full pipe) and gives its tail. This module is the one place where OS, transport, SDK
and protocol errors become :class:`~cartograph.errors.UpstreamError` (or
:class:`~cartograph.errors.UpstreamTimeout`), for the session steps and for the gateway's calls:

- :func:`map_upstream_error`: start, connect, initialize, tools/list of one upstream, with a hint
  from stderr and from any non-JSON-RPC text the upstream printed on stdout;
- :func:`mcp_error`, :func:`protocol_error`, :func:`timeout_error`: what a tool call through the
  gateway got back (a JSON-RPC error, an answer against the protocol, no answer in time), worded
  for the agent that made the call ("retry", "rejected the arguments").
"""

from __future__ import annotations

import os
import tempfile

import anyio
import httpx
import httpx2
import mcp.types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from cartograph.config import StdioUpstream, UpstreamConfig
from cartograph.errors import CartographError, UpstreamError, UpstreamTimeout

STDERR_TAIL_CHARS = 4000


class StderrLog:
    """A stdio child's stderr, captured in an unnamed temporary file (never blocks the child)."""

    def __init__(self) -> None:
        # closed by close(), which open_session calls in its finally
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._final: str | None = None

    def tail(self, max_chars: int = STDERR_TAIL_CHARS) -> str:
        if self._final is not None:
            return self._final[-max_chars:]
        fd = self.file.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - max_chars * 4)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        if start > 0 and "\n" in text:
            text = text.split("\n", 1)[1]  # drop the partial first line
        return text[-max_chars:]

    def close(self) -> None:
        if self._final is None:
            self._final = self.tail()
            self.file.close()


def map_upstream_error(
    cfg: UpstreamConfig,
    exc: BaseException,
    doing: str,
    *,
    stderr: StderrLog | None = None,
    noise: list[str] | None = None,
    timeout: float | None = None,
) -> UpstreamError:
    """An error raised while starting, connecting, initializing or listing ``cfg``'s upstream
    (``doing`` names the step), as :class:`UpstreamError` with the stderr and stdout hints."""
    exc = single_leaf(exc)
    if isinstance(exc, UpstreamError):
        return exc
    tail = stderr.tail() if stderr else ""
    hint = _hint(tail, noise)
    if isinstance(exc, TimeoutError):
        within = f" within {timeout:g}s" if timeout is not None else ""
        return UpstreamTimeout(cfg.name, f"did not answer {doing}{within}{hint}", stderr_tail=tail)
    return UpstreamError(cfg.name, _describe(cfg, exc, doing) + hint, stderr_tail=tail)


def _hint(tail: str, noise: list[str] | None) -> str:
    hint = ""
    if noise:
        hint += f"; it wrote non-JSON-RPC text on stdout: {noise[0]}"
    if tail.strip():
        hint += f"; stderr ends with: {tail.strip().splitlines()[-1][:300]}"
    return hint


def _describe(cfg: UpstreamConfig, exc: BaseException, doing: str) -> str:
    """What went wrong, in words, for every kind of error but timeouts."""
    if isinstance(exc, CartographError):
        return f"{doing}: {exc}"
    if doing == "start" and isinstance(exc, FileNotFoundError):
        command = cfg.command if isinstance(cfg, StdioUpstream) else cfg.url
        return (
            f"cannot start {command!r}: no such command or file; "
            "check 'command' in the config (is the fleet installed?)"
        )
    if doing == "start" and isinstance(exc, PermissionError):
        return "cannot start it: permission denied"
    if isinstance(exc, MCPError):
        why = "the process exited" if isinstance(cfg, StdioUpstream) else "the server hung up"
        return _mcp_message(exc.error, doing, closed_why=why)
    if isinstance(exc, httpx.HTTPStatusError | httpx2.HTTPStatusError):
        status = exc.response.status_code
        return f"HTTP {status} from {cfg.public_endpoint()} during {doing}"
    if isinstance(exc, httpx.HTTPError | httpx2.HTTPError):
        return f"cannot reach {cfg.public_endpoint()} during {doing}: {exc!s}"
    if isinstance(exc, ValidationError):
        return _protocol_message(exc, doing)
    if isinstance(exc, OSError):
        return f"{doing} failed: {exc}"
    return f"{doing} failed: {type(exc).__name__}: {exc}"


def _mcp_message(err: types.ErrorData, doing: str, *, closed_why: str | None = None) -> str:
    """A JSON-RPC error from the upstream; ``closed_why`` marks a session step (start, list),
    else it came back from a tool call and says whether to retry."""
    if closed_why is not None:
        if err.code == types.CONNECTION_CLOSED:
            return f"connection closed during {doing} ({closed_why}?)"
        return f"{doing} failed with error {err.code}: {err.message}"
    if err.code == types.CONNECTION_CLOSED:
        return (
            "the connection closed during the call (the server crashed or exited); it may or may "
            "not have run; the proxy restarts the server on the next call, retry if safe"
        )
    if err.code == types.INVALID_PARAMS:
        return f"rejected the arguments: {err.message}"
    return f"error {err.code}: {err.message}"


def _protocol_message(exc: ValidationError, doing: str) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "result"
    return f"answered {doing} against the protocol ({where}: {first['msg']})"


def mcp_error(server: str, exc: MCPError, tail: str = "") -> UpstreamError:
    """An MCPError a tool call got from the upstream, as a message an agent can act on."""
    return UpstreamError(server, _mcp_message(exc.error, "tools/call"), stderr_tail=tail)


def protocol_error(server: str, exc: ValidationError, doing: str) -> UpstreamError:
    """An answer to ``doing`` that is not what the protocol says it must be."""
    return UpstreamError(server, _protocol_message(exc, doing))


def timeout_error(server: str, what: str, seconds: float, tail: str = "") -> UpstreamTimeout:
    """A step of a tool call (waiting for a slot, the start, the call) that ran out of time."""
    return UpstreamTimeout(
        server, f"{what} did not finish within {seconds:g} s; retry", stderr_tail=tail
    )


def single_leaf(exc: BaseException) -> BaseException:
    """The one meaningful exception inside (nested) exception groups, else ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup):
        cancelled = anyio.get_cancelled_exc_class()
        leaves = [e for e in exc.exceptions if not isinstance(e, cancelled)]
        if len(leaves) != 1:
            return exc
        exc = leaves[0]
    return exc


def describe_noise(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        for err in exc.errors():
            value = err.get("input")
            if isinstance(value, bytes):  # SDK 2 validates the raw line
                value = value.decode("utf-8", "replace")
            if isinstance(value, str):
                return repr(value.rstrip("\n")[:200])
    return repr(str(exc)[:200])
