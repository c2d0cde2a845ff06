"""Console login sessions, kept on the server: a random id in a cookie, never a credential.

A successful login (an API key or a JWT, checked by the same :class:`~cartograph.access.Access`
as the MCP endpoint) creates a :class:`ConsoleSession`: the authenticated caller, a CSRF token
for the forms of that session, and an expiry. The browser holds only the session id, in a cookie
that is ``HttpOnly``, ``SameSite=Strict``, scoped to ``/console`` and ``Secure`` when the public
URL is https. Logout and expiry delete the session; at most :data:`MAX_SESSIONS` are kept (the
oldest goes first).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from cartograph.access.guard import Caller

COOKIE = "cartograph_console"
LOGIN_COOKIE = "cartograph_console_login"  # the login form's CSRF token (double submit)
TTL_S = 8 * 3600.0
MAX_SESSIONS = 10_000


@dataclass(frozen=True)
class ConsoleSession:
    id: str
    caller: Caller
    csrf: str
    expires: float

    def csrf_ok(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token, self.csrf)


class SessionBook:
    """The console's sessions by id (thread-safe)."""

    def __init__(self, ttl_s: float = TTL_S) -> None:
        self.ttl_s = ttl_s
        self._sessions: OrderedDict[str, ConsoleSession] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, caller: Caller) -> ConsoleSession:
        session = ConsoleSession(
            id=secrets.token_urlsafe(32),
            caller=caller,
            csrf=secrets.token_urlsafe(24),
            expires=time.time() + self.ttl_s,
        )
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return session

    def get(self, session_id: str | None) -> ConsoleSession | None:
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.expires <= time.time():
                del self._sessions[session_id]
                return None
            return session

    def end(self, session_id: str | None) -> None:
        with self._lock:
            self._sessions.pop(session_id or "", None)


def cookie_header(
    name: str, value: str, *, secure: bool, max_age: int, path: str = "/console"
) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, scoped to ``path``."""
    parts = [f"{name}={value}", f"Path={path}", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)
