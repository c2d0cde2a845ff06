"""The proxy's stdio transport: messages bounded while they stream in, and a reader a signal
can stop.

It replaces the SDK's ``stdio_server`` for ``cartograph serve`` over stdio, for two faults:

* the SDK reads stdin lines of any length (a 20 MB line took 17 s and was held whole). Here
  lines are cut as bytes arrive; a message over ``max_message_bytes`` is dropped as it
  streams in (no more than the limit is ever held), and its request is answered with a
  JSON-RPC error that names the limit (the id is read from the message's first or last bytes);
* the SDK blocks a worker thread in ``read()``: after SIGTERM the proxy could not finish, nor
  close its upstreams, until the client sent another line. Here the reader waits for stdin on
  the event loop, so cancelling it ends it at once.

Writes go out in pieces no larger than a pipe's atomic size, each after stdout is writable, so a
slow client never blocks the event loop either. A regular file (stdin or stdout redirected to
one) cannot be polled; it is read and written directly, as it never blocks for long.
"""

from __future__ import annotations

import logging
import os
import re
import select
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from cartograph.transport.stdio_bounded import parse_line

logger = logging.getLogger(__name__)

# Under glibc's mmap threshold (128 KiB): a larger os.read buffer is mapped and unmapped on
# every read (21 us a read of a 300-byte message at 256 KiB, 2 us at 64 KiB).
READ_CHUNK = 64 * 1024
WRITE_PIECE = 4096  # PIPE_BUF on Linux: a write this small never blocks on a writable pipe
_EDGE = 512
_ID = rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)'
_HEAD_ID = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*' + _ID)
_TAIL_ID = re.compile(_ID + rb"\s*\}\s*$")

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


@asynccontextmanager
async def bounded_stdio_server(
    max_message_bytes: int, *, stdin_fd: int | None = None, stdout_fd: int | None = None
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The SDK's (read, write) streams over this process's stdin and stdout."""
    fd_in = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    fd_out = sys.stdout.fileno() if stdout_fd is None else stdout_fd
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    out = _Output(fd_out)

    async def reader() -> None:
        lines = _Lines(max_message_bytes)
        async with read_writer:
            try:
                async for chunk in _chunks(fd_in):
                    for item in lines.feed(chunk):
                        if isinstance(item, _Oversized):
                            await out.write(item.reply())
                        else:
                            await read_writer.send(parse_line(item, peer="client"))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, BrokenPipeError):
                await anyio.lowlevel.checkpoint()

    async def writer() -> None:
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await out.write((data + "\n").encode("utf-8"))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, BrokenPipeError):
                await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()


async def _chunks(fd: int) -> AsyncIterator[bytes]:
    """What arrives on ``fd`` until end of file, waiting on the event loop (cancellable)."""
    pollable = True
    while True:
        if pollable:
            try:
                await anyio.wait_readable(fd)
            except (OSError, ValueError):  # a regular file: epoll refuses it, reads never hang
                pollable = False
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            return
        if not data:
            return
        yield data


class _Output:
    """Whole lines to ``fd``, one writer at a time, never blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = anyio.Lock()
        self.pollable = True

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        async with self.lock:
            while view:
                if self.pollable and not _writable_now(self.fd):
                    try:
                        await anyio.wait_writable(self.fd)
                    except (OSError, ValueError):
                        self.pollable = False
                try:
                    sent = os.write(self.fd, view[: WRITE_PIECE if self.pollable else len(view)])
                except BlockingIOError:
                    continue
                view = view[sent:]


def _writable_now(fd: int) -> bool:
    """Whether a write of up to PIPE_BUF bytes to ``fd`` goes through at once: one poll
    syscall, where waiting on the event loop registers the descriptor, waits a loop turn and
    unregisters it again, for every message (a pipe to a reading client is nearly always
    writable)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(0))


class _Oversized:
    """A message dropped for its size: its first and last bytes, to answer its request."""

    def __init__(self, size: int, limit: int, head: bytes, tail: bytes) -> None:
        self.size, self.limit, self.head, self.tail = size, limit, head, tail

    def reply(self) -> bytes:
        text = (
            f"the request is over the {self.limit / 2**20:g} MiB message limit and was dropped "
            f"unread ({self.size / 2**20:.1f} MiB so far); send less: a reference (a path, a "
            "URL, an id) instead of the content, or several smaller calls"
        )
        found = _HEAD_ID.search(self.head) or _TAIL_ID.search(self.tail)
        if found is None:
            logger.warning("dropped an oversized message without a request id: %s", text)
            return b""
        raw = found.group(1).decode("utf-8", "replace")
        request_id: str | int = int(raw) if raw.lstrip("-").isdigit() else raw[1:-1]
        logger.warning("request %r dropped: %s", request_id, text)
        error = types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=-32600, message=text)
        )
        return (error.model_dump_json(by_alias=True, exclude_none=True) + "\n").encode("utf-8")


class _Lines:
    """Newline-delimited messages in linear time; a line over the limit is skipped as it comes
    in and reported once as :class:`_Oversized`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.skipped = -1  # >= 0 while skipping an oversized line
        self.head = b""
        self.tail = b""

    def feed(self, chunk: bytes) -> list[bytes | _Oversized]:
        out: list[bytes | _Oversized] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            part = chunk[start : len(chunk) if nl < 0 else nl]
            if self.skipped >= 0:
                self.skipped += len(part)
                self.tail = (self.tail + part[-_EDGE:])[-_EDGE:]
            else:
                self.buf += part
                if len(self.buf) > self.limit:
                    self.skipped = len(self.buf)
                    self.head, self.tail = bytes(self.buf[:_EDGE]), bytes(self.buf[-_EDGE:])
                    self.buf = bytearray()
            if nl < 0:
                return out
            if self.skipped >= 0:
                out.append(_Oversized(self.skipped, self.limit, self.head, self.tail.rstrip()))
                self.skipped = -1
            elif self.buf.strip():
                out.append(bytes(self.buf))
            self.buf = bytearray()
            start = nl + 1
