"""The console's ASGI app: login, logout and the read-only pages, under ``/console``.

Mounted by ``serve --transport http`` beside ``/mcp`` (:func:`build_console`). It does its own
authentication: the login form takes the same API key or JWT the MCP endpoint accepts (checked
by the same :class:`~cartograph.access.Access`), rate-limited per remote address, and opens a
server-side session (:mod:`cartograph.console.sessions`). Every form that changes something
(login, logout, an admin's actions in :mod:`cartograph.console.actions`) carries a CSRF token;
logins, logouts and actions are audited. Pages render Jinja2
templates shipped in the package with autoescaping on, so nothing from a card or a publisher is
ever HTML; every response forbids scripts, frames and outside resources (no CDN, no build step).
"""

from __future__ import annotations

import hmac
import logging
import math
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route, Router

from cartograph.console import actions, pages
from cartograph.console.sessions import (
    COOKIE,
    LOGIN_COOKIE,
    TTL_S,
    ConsoleSession,
    SessionBook,
    cookie_header,
)
from cartograph.errors import AuthError, CartographError, RateLimited
from cartograph.proxy.resolver import MAX_K

if TYPE_CHECKING:
    from cartograph.access.guard import Access
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)
LOGIN_PER_MINUTE = 10.0
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
NAV = [
    ("servers", "/console"),
    ("discover", "/console/discover"),
    ("audit", "/console/audit"),
    ("quarantine", "/console/quarantine"),
    ("rift", "/console/rift"),
    ("jobs", "/console/jobs"),
]


@dataclass
class Console:
    proxy: Proxy
    access: Access
    secure: bool = False
    sessions: SessionBook = field(default_factory=SessionBook)
    rift: pages.RiftCache = field(default_factory=pages.RiftCache)
    templates: Environment = field(default_factory=lambda: _templates())

    # -- rendering ----------------------------------------------------------------------------

    def page(
        self,
        template: str,
        session: ConsoleSession | None,
        code: int = 200,
        **values: Any,
    ) -> HTMLResponse:
        body = self.templates.get_template(template).render(session=session, nav=NAV, **values)
        return HTMLResponse(body, status_code=code, headers=SECURITY_HEADERS)

    def not_found(self, session: ConsoleSession | None, what: str, known: list[str]) -> Response:
        return self.page("not_found.html", session, 404, what=what, known=known)

    # -- sessions -----------------------------------------------------------------------------

    def session_of(self, request: Request) -> ConsoleSession | None:
        return self.sessions.get(request.cookies.get(COOKIE))

    async def login_form(self, request: Request) -> Response:
        token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
        response = self.page("login.html", None, csrf=token, message=None)
        response.headers.append("set-cookie", self._cookie(LOGIN_COOKIE, token, 600))
        return response

    async def login(self, request: Request) -> Response:
        """POST /console/login: rate-limited per address first, then the form's CSRF token,
        then the key or token; every attempt is audited (``console-login``)."""
        form = await request.form()
        expected = request.cookies.get(LOGIN_COOKIE) or ""
        where = request.client.host if request.client else "unknown"
        try:
            self.access.limiter.take(f"console-login#{where}", LOGIN_PER_MINUTE)
        except RateLimited as exc:
            self.proxy.audit.write("console-login", address=where, outcome="rate-limited")
            message = (
                f"Too many login attempts from {where}: at most {LOGIN_PER_MINUTE:g} a minute. "
                f"Wait {exc.retry_after:g} s, then try again."
            )
            response = self.page("login.html", None, 429, csrf=expected, message=message)
            response.headers["retry-after"] = str(max(1, math.ceil(exc.retry_after)))
            return response
        sent = str(form.get("csrf") or "")
        if not expected or not hmac.compare_digest(sent, expected):
            self.proxy.audit.write("console-login", address=where, outcome="stale-form")
            return self.page("login.html", None, 403, csrf=expected, message=pages.STALE_FORM)
        try:
            caller = self.access.authenticate(str(form.get("token") or "").strip() or None)
        except AuthError as exc:
            self.proxy.audit.write("console-login", address=where, outcome="refused")
            message = f"That key or token was not accepted ({exc}). Check it and try again."
            return self.page("login.html", None, 401, csrf=expected, message=message)
        session = self.sessions.create(caller)
        self.proxy.audit.write("console-login", client=caller.name, address=where, outcome="ok")
        response = RedirectResponse("/console", status_code=303)
        response.headers.append("set-cookie", self._cookie(COOKIE, session.id, int(TTL_S)))
        return response

    async def logout(self, request: Request) -> Response:
        session = self.session_of(request)
        form = await request.form()
        if session is None or not session.csrf_ok(str(form.get("csrf") or "")):
            if session is not None:  # a forged or stale form of a live session
                self.proxy.audit.write(
                    "console-logout", client=session.caller.name, outcome="stale-form"
                )
            return self.page("login.html", None, 403, csrf="", message=pages.STALE_FORM)
        self.sessions.end(session.id)
        self.proxy.audit.write("console-logout", client=session.caller.name)
        response = RedirectResponse("/console/login", status_code=303)
        response.headers.append("set-cookie", self._cookie(COOKIE, "", 0))
        return response

    def _cookie(self, name: str, value: str, max_age: int) -> str:
        return cookie_header(name, value, secure=self.secure, max_age=max_age)

    # -- pages --------------------------------------------------------------------------------

    async def servers(self, request: Request, session: ConsoleSession) -> Response:
        status = self.proxy.status(session.caller)
        visible = {s.server for s in status.servers}
        try:
            board = await anyio.to_thread.run_sync(self.proxy.store.health_board().read)
        except (CartographError, OSError) as exc:
            logger.warning("console: cannot read the health board: %s", exc)
            board = []
        replicas = pages.replica_rows(board, visible)
        versions = await anyio.to_thread.run_sync(  # read from the history once per card
            lambda: {s: self.proxy.catalog.card_version(s) for s in sorted(visible)}
        )
        return self.page(
            "servers.html", session, status=status, replicas=replicas, versions=versions
        )

    async def server(self, request: Request, session: ConsoleSession) -> Response:
        """A server's card (``/console/servers/S``), one tool of it (``.../tools/T``) or a
        version the card history keeps (``.../versions/N``, where the audit trail links)."""
        params = request.path_params
        name, tool, version = params["server"], params.get("tool"), params.get("version")
        if version is not None and not version.isdigit():
            return self.not_found(session, f"card version {version!r}", [pages.server_path(name)])
        try:  # status: on the loop
            page = pages.server_page(
                self.proxy,
                session.caller,
                name,
                version=None if version is None else int(version),
                tool=tool,
            )
        except pages.NotFound as exc:
            return self.not_found(session, exc.what, exc.known)
        except CartographError as exc:  # a kept version that no longer verifies
            text = f"Version {version} of the card of {name!r} does not verify: {exc}"
            return self.page("message.html", session, 422, title=name, text=text)
        return self.page("server.html", session, page=page)

    async def discover(self, request: Request, session: ConsoleSession) -> Response:
        task = request.query_params.get("task", "").strip()
        k = _int(request.query_params.get("k"), 5, 1, MAX_K)
        rows, error = [], None
        if task:
            try:
                await self.proxy.discover(task, k, caller=session.caller, client="console")
                rows = await anyio.to_thread.run_sync(
                    pages.discover_page, self.proxy, session.caller, task, k
                )
            except CartographError as exc:
                error = str(exc)
        return self.page("discover.html", session, task=task, k=k, rows=rows, error=error)

    async def audit(self, request: Request, session: ConsoleSession) -> Response:
        q = request.query_params
        filters = {key: q.get(key, "").strip() for key in ("client", "tool", "since", "entry")}
        rows = await anyio.to_thread.run_sync(
            lambda: pages.audit_rows(self.proxy, session.caller, **filters)
        )
        return self.page("audit.html", session, rows=rows, filters=filters)

    async def quarantine(self, request: Request, session: ConsoleSession) -> Response:
        rows = pages.quarantine_rows(self.proxy, session.caller)
        return self.page("quarantine.html", session, rows=rows)

    async def rift_page(self, request: Request, session: ConsoleSession) -> Response:
        from markupsafe import Markup

        from cartograph.rift.html import figures

        report = await anyio.to_thread.run_sync(self.rift.report, self.proxy)
        clusters = pages.visible_clusters(report, session.caller)
        pictures = Markup(figures(report)) if pages.unrestricted(session.caller) else None
        return self.page("rift.html", session, report=report, clusters=clusters, pictures=pictures)

    async def missing(self, request: Request, session: ConsoleSession) -> Response:
        return self.not_found(session, f"page {request.url.path!r}", [path for _, path in NAV])


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("cartograph.console", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        server_path=pages.server_path,
        tool_path=pages.tool_path,
        version_path=pages.version_path,
        zip=zip,
    )
    return env


def _int(raw: str | None, default: int, low: int, high: int) -> int:
    try:
        value = int(raw) if raw else default
    except ValueError:
        return default
    return max(low, min(high, value))


def _guarded(console: Console, handler: Any) -> Any:
    """A page handler that needs a session: without one, the login page."""

    async def endpoint(request: Request) -> Response:
        session = console.session_of(request)
        if session is None:
            return RedirectResponse("/console/login", status_code=303)
        return await handler(request, session)

    return endpoint


def _bound(action: Any, console: Console) -> Any:
    async def handler(request: Request, session: ConsoleSession) -> Response:
        return await action(console, request, session)

    return handler


def build_console(proxy: Proxy, access: Access, *, secure: bool = False) -> Router:
    """The console's ASGI app for ``proxy``, authenticating with ``access``; ``secure``: the
    public URL is https (cookies get ``Secure``)."""
    c = Console(proxy, access, secure)
    routes = [
        Route("/console/login", c.login_form, methods=["GET"]),
        Route("/console/login", c.login, methods=["POST"]),
        Route("/console/logout", c.logout, methods=["POST"]),
        Route("/console", _guarded(c, c.servers), methods=["GET"]),
        Route("/console/servers/{server}", _guarded(c, c.server), methods=["GET"]),
        Route("/console/servers/{server}/tools/{tool}", _guarded(c, c.server), methods=["GET"]),
        Route(
            "/console/servers/{server}/versions/{version}", _guarded(c, c.server), methods=["GET"]
        ),
        Route("/console/discover", _guarded(c, c.discover), methods=["GET"]),
        Route("/console/audit", _guarded(c, c.audit), methods=["GET"]),
        Route("/console/quarantine", _guarded(c, c.quarantine), methods=["GET"]),
        Route("/console/rift", _guarded(c, c.rift_page), methods=["GET"]),
        Route("/console/jobs", _guarded(c, _bound(actions.jobs_page, c)), methods=["GET"]),
        Route("/console/actions/lift", _guarded(c, _bound(actions.lift, c)), methods=["POST"]),
        Route(
            "/console/actions/regenerate",
            _guarded(c, _bound(actions.regenerate, c)),
            methods=["POST"],
        ),
        Route("/console/{rest:path}", _guarded(c, c.missing)),
    ]
    return Router(routes=routes)
