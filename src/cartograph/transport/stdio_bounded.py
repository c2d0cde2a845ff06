"""A stdio client transport whose reader is linear in time and bounded in size.

The SDK's ``stdio_client`` re-joins and re-splits its whole pending buffer on every 64 KiB
chunk, so one big reply costs quadratic time (measured here: 1 MB 0.15 s, 10 MB 5.9 s, 20 MB
22.5 s) with the event loop busy all along, and no reply is too big for it. This transport reads
bytes, cuts lines in linear time, and drops any message over ``max_message_bytes``: the pending
request gets a JSON-RPC error naming the size and the limit (its id is read from the first or
last bytes of the message), so the caller learns at once instead of timing out.

Everything else follows the SDK: the child starts in its own session (process group) with the
SDK's safe default environment, stderr goes to ``errlog``, and on exit stdin is closed, the
child is given two seconds, then its process group is terminated and killed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
READ_CHUNK = 1024 * 1024
EXIT_GRACE = 2.0
_EDGE = 512
_HEAD_ID = re.compile(
    rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)'
)
_TAIL_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$')

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


class OversizedMessage(Exception):
    """An upstream message over the size limit whose request id could not be found."""


@asynccontextmanager
async def bounded_stdio_client(
    params: StdioServerParameters,
    errlog: TextIO,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Start ``params``' command and yield the SDK's (read, write) streams over its stdio."""
    env = get_default_environment()
    if params.env is not None:
        env.update(params.env)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        process = await anyio.open_process(
            [params.command, *params.args],
            env=env,
            cwd=params.cwd,
            stderr=errlog,
            start_new_session=True,
        )
    except OSError:
        for stream in (read_writer, read_stream, write_stream, write_reader):
            await stream.aclose()
        raise

    async def read_stdout() -> None:
        assert process.stdout is not None
        splitter = _LineSplitter(max_message_bytes)
        async with read_writer:
            try:
                while True:
                    try:
                        chunk = await process.stdout.receive(READ_CHUNK)
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        break
                    for item in splitter.feed(chunk):
                        await read_writer.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                await anyio.lowlevel.checkpoint()

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await process.stdin.send((data + "\n").encode("utf-8"))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg, process:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            await _shut_down(process)
            for stream in (read_stream, write_stream, read_writer, write_reader):
                await stream.aclose()
            tg.cancel_scope.cancel()


async def _shut_down(process: Process) -> None:
    """Close stdin, give the child a moment, then terminate and kill its process group."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            with suppress(Exception):
                await process.stdin.aclose()
        with anyio.move_on_after(EXIT_GRACE):
            await process.wait()
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            with anyio.move_on_after(EXIT_GRACE):
                await process.wait()
                return


class _LineSplitter:
    """Newline-delimited JSON-RPC in linear time; over-long lines become errors."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.skipping = False
        self.skipped = 0
        self.head = b""
        self.tail = bytearray()

    def feed(self, chunk: bytes) -> list[SessionMessage | Exception]:
        out: list[SessionMessage | Exception] = []
        start = 0
        view = memoryview(chunk)
        while True:
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl < 0 else nl
            part = view[start:end]
            if self.skipping:
                self.skipped += len(part)
                self.tail = (self.tail + part[-_EDGE:])[-_EDGE:]
            else:
                self.buf += part
                if len(self.buf) > self.limit:
                    self.skipping = True
                    self.skipped = len(self.buf)
                    self.head = bytes(self.buf[:_EDGE])
                    self.tail = self.buf[-_EDGE:]
                    self.buf = bytearray()
            if nl < 0:
                return out
            if self.skipping:
                out.append(self._oversized())
                self.skipping = False
            elif self.buf.strip():
                out.append(parse_line(bytes(self.buf)))
            self.buf = bytearray()
            start = nl + 1

    def _oversized(self) -> SessionMessage | Exception:
        size, limit = self.skipped / 1e6, self.limit / 1e6
        logger.warning("dropped a %.1f MB message from an upstream (limit %.1f MB)", size, limit)
        text = (
            f"the reply was {size:.1f} MB, over the {limit:.1f} MB message limit, and was "
            "dropped; ask for less (narrower query, paging, a smaller range)"
        )
        found = _HEAD_ID.search(self.head) or _TAIL_ID.search(bytes(self.tail))
        if found is None:
            return OversizedMessage(text)
        raw = found.group(1).decode("utf-8", "replace")
        request_id: str | int = int(raw) if raw.lstrip("-").isdigit() else raw[1:-1]
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(code=types.INTERNAL_ERROR, message=text),
        )
        return SessionMessage(error)


def parse_line(line: bytes, peer: str = "upstream") -> SessionMessage | Exception:
    """One newline-delimited JSON-RPC message from ``peer`` (either side of a stdio pipe): the
    message, or the error to report in its place (a broken reply to a request of ours is
    answered with an error now, see :func:`_malformed_reply`)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line))
    except Exception as exc:  # boundary: a bad line is reported, never fatal
        return _malformed_reply(line, exc, peer) or exc


def _malformed_reply(line: bytes, exc: Exception, peer: str) -> SessionMessage | None:
    """A JSON object with an id and no method that is not valid JSON-RPC: a broken reply.
    Answer its request with an error now rather than let the caller wait for a timeout."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or "method" in data:
        return None
    request_id = data.get("id")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    detail = str(exc).splitlines()
    why = detail[1].strip() if len(detail) > 1 else (detail[0] if detail else "")
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=types.INTERNAL_ERROR,
            message=f"the {peer} sent a malformed JSON-RPC reply ({why[:200]})",
        ),
    )
    return SessionMessage(error)
