"""How upstream failures are told: the captured stderr, and the one error-mapping function.

:class:`StderrLog` keeps a stdio child's stderr in an unnamed temporary file (the child can never
block on a full pipe) and gives its tail. :func:`map_upstream_error` is the one place where OS,
transport, SDK and protocol errors become :class:`~cartograph.errors.UpstreamError` (or
:class:`~cartograph.errors.UpstreamTimeout`), with a hint from stderr and from any non-JSON-RPC
text the upstream printed on stdout.
"""

from __future__ import annotations

import os
import tempfile

import anyio
import httpx
import mcp.types as types
from mcp.shared.exceptions import McpError
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
    """The one place where transport, SDK and OS errors become :class:`UpstreamError`."""
    exc = single_leaf(exc)
    tail = stderr.tail() if stderr else ""
    hint = ""
    if noise:
        hint += f"; it wrote non-JSON-RPC text on stdout: {noise[0]}"
    if tail.strip():
        hint += f"; stderr ends with: {tail.strip().splitlines()[-1][:300]}"
    if isinstance(exc, UpstreamError):
        return exc
    if isinstance(exc, CartographError):
        return UpstreamError(cfg.name, f"{doing}: {exc}{hint}", stderr_tail=tail)
    if isinstance(exc, TimeoutError):
        within = f" within {timeout:g}s" if timeout is not None else ""
        return UpstreamTimeout(cfg.name, f"did not answer {doing}{within}{hint}", stderr_tail=tail)
    if isinstance(exc, FileNotFoundError) and doing == "start":
        command = cfg.command if isinstance(cfg, StdioUpstream) else cfg.url
        message = f"cannot start {command!r}: no such command or file"
        hint = "; check 'command' in the config (is the fleet installed?)" + hint
        return UpstreamError(cfg.name, message + hint, stderr_tail=tail)
    if isinstance(exc, PermissionError) and doing == "start":
        return UpstreamError(
            cfg.name, f"cannot start it: permission denied{hint}", stderr_tail=tail
        )
    if isinstance(exc, McpError):
        if exc.error.code == types.CONNECTION_CLOSED:
            why = "the process exited" if isinstance(cfg, StdioUpstream) else "the server hung up"
            return UpstreamError(
                cfg.name, f"connection closed during {doing} ({why}?){hint}", stderr_tail=tail
            )
        return UpstreamError(
            cfg.name,
            f"{doing} failed with error {exc.error.code}: {exc.error.message}{hint}",
            stderr_tail=tail,
        )
    if isinstance(exc, httpx.HTTPStatusError):
        return UpstreamError(
            cfg.name,
            f"HTTP {exc.response.status_code} from {cfg.public_endpoint()} during {doing}{hint}",
        )
    if isinstance(exc, httpx.HTTPError):
        return UpstreamError(
            cfg.name, f"cannot reach {cfg.public_endpoint()} during {doing}: {exc!s}{hint}"
        )
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return UpstreamError(
            cfg.name,
            f"answered {doing} against the protocol ({where}: {first['msg']}){hint}",
            stderr_tail=tail,
        )
    if isinstance(exc, OSError):
        return UpstreamError(cfg.name, f"{doing} failed: {exc}{hint}", stderr_tail=tail)
    return UpstreamError(
        cfg.name, f"{doing} failed: {type(exc).__name__}: {exc}{hint}", stderr_tail=tail
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
            if isinstance(value, str):
                return repr(value[:200])
    return repr(str(exc)[:200])
