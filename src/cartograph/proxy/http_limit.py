"""The HTTP side of the message limit: a request body over it is refused while it streams in.

The SDK reads a whole POST body before it looks at its size (then answers 413 above an
undocumented 4 MB), so a client could make the proxy hold any amount. :class:`BodyLimit`, an
ASGI wrapper in front of the MCP endpoint, answers 413 with a JSON-RPC error as soon as the
``Content-Length`` or the bytes received pass ``max_bytes``; nothing larger is ever held (a
refused body of moderate size is read on and dropped, so the client can read the answer).
Bodies within the limit are passed on unchanged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

# A refused body up to this many times the limit is read to its end (and dropped) so that the
# client, which is still sending, sees the 413; a larger one gets it at once and the connection
# is closed under it.
DRAIN_FACTOR = 4

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyLimit:
    """Wraps an ASGI app; POST bodies over ``max_bytes`` get 413 before they are buffered."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            if declared <= self.max_bytes * DRAIN_FACTOR:
                await _drain(receive)
            await self._refuse(send, declared, declared=True)
            return
        chunks: list[bytes] = []
        size = 0
        first: Message | None = None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                first = message  # a disconnect: let the app see it
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive, self.max_bytes * DRAIN_FACTOR - size)
                await self._refuse(send, size, declared=False)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = first or {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        chunks = []
        done = False

        async def replay() -> Message:
            nonlocal done
            if not done:
                done = True
                return replayed
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any, size: int, *, declared: bool) -> None:
        limit = self.max_bytes / 2**20
        text = (
            f"the request body is over the {limit:g} MiB message limit "
            f"({'declared ' if declared else 'already '}{size / 2**20:.1f} MiB) and was not read; "
            "send less: a reference (a path, a URL, an id) instead of the content, or several "
            "smaller calls"
        )
        logger.warning("HTTP request refused: %s", text)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": text}}
        ).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _drain(receive: Any, most: float = float("inf")) -> None:
    """Read and drop the rest of a refused body (keeping none of it), so that the client,
    still sending, can read the 413; past ``most`` bytes the connection is closed instead."""
    dropped = 0
    while dropped <= most:
        message = await receive()
        if message["type"] != "http.request":
            return
        dropped += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
