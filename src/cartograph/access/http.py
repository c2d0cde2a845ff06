"""The HTTP front door: bearer authentication, protected-resource metadata, 401 and 429.

:class:`AuthMiddleware` wraps the MCP ASGI app. It serves
``/.well-known/oauth-protected-resource`` (RFC 9728, as the MCP authorization spec asks),
answers a request without valid credentials with 401 and a ``WWW-Authenticate: Bearer``
header naming that metadata, a client over its request rate with 429 and ``Retry-After``,
and otherwise passes the request on with the :class:`~cartograph.access.guard.Caller` in
``scope["state"]``. An MCP session belongs to the client that opened it.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from cartograph.access.guard import Access, Caller
from cartograph.errors import AuthError, RateLimited
from cartograph.metrics import Counter

logger = logging.getLogger(__name__)

METADATA_PATH = "/.well-known/oauth-protected-resource"
CALLER_KEY = "cartograph_caller"
MAX_SESSIONS = 100_000


def caller_of(request: Any) -> Caller | None:
    """The caller the middleware attached to a Starlette request (``None`` if there is none)."""
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    found = scope.get("state", {}).get(CALLER_KEY)
    return found if isinstance(found, Caller) else None


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', "'")


class AuthMiddleware:
    """ASGI middleware in front of ``/mcp`` (and ``/metrics``); ``unauthorized`` and
    ``limited`` count its 401 and 429 answers (``limited`` with ``kind="http"``)."""

    def __init__(
        self,
        app: Any,
        access: Access,
        resource: str,
        *,
        unauthorized: Counter | None = None,
        limited: Counter | None = None,
    ) -> None:
        self.app = app
        self.unauthorized = unauthorized
        self.limited = limited
        self.access = access
        self.resource = resource
        base = resource.split("/", 3)
        self.metadata_url = "/".join(base[:3]) + METADATA_PATH
        self._sessions: dict[str, str] = {}

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "resource": self.resource,
            "bearer_methods_supported": ["header"],
            "resource_name": "Cartograph MCP proxy",
        }
        if self.access.issuer:
            doc["authorization_servers"] = [self.access.issuer]
        return doc

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"].rstrip("/")
        if path == METADATA_PATH or path.startswith(METADATA_PATH + "/"):
            await _respond(send, 200, json.dumps(self.metadata()).encode(), [])
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = None
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            token = auth[7:].strip()
        try:
            caller = self.access.authenticate(token)
        except AuthError as exc:
            logger.info("401 for %s %s: %s", scope.get("method"), path, exc)
            if self.unauthorized is not None:
                self.unauthorized.inc()
            await self._unauthorized(send, exc)
            return
        try:
            self.access.limiter.take(f"{caller.name}#http", caller.policy.requests_per_minute)
        except RateLimited as exc:
            if self.limited is not None:
                self.limited.inc(kind="http")
            retry = str(max(1, math.ceil(exc.retry_after)))
            body = json.dumps({"error": "rate_limited", "error_description": str(exc)}).encode()
            await _respond(send, 429, body, [(b"retry-after", retry.encode())])
            return
        session = headers.get("mcp-session-id")
        if session and self._sessions.get(session, caller.name) != caller.name:
            await _respond(send, 404, b'{"error":"session not found"}', [])
            return
        scope.setdefault("state", {})[CALLER_KEY] = caller

        async def send_and_bind(message: Any) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == b"mcp-session-id" and len(self._sessions) < MAX_SESSIONS:
                        self._sessions.setdefault(value.decode("latin-1"), caller.name)
            await send(message)

        await self.app(scope, receive, send_and_bind)

    async def _unauthorized(self, send: Any, exc: AuthError) -> None:
        parts = []
        if exc.code:
            parts.append(f'error="{exc.code}"')
            parts.append(f'error_description="{_quote(str(exc))}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        challenge = "Bearer " + ", ".join(parts)
        body = json.dumps({"error": exc.code or "unauthorized"}).encode()
        await _respond(send, 401, body, [(b"www-authenticate", challenge.encode("latin-1"))])


async def _respond(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": body})
