"""Logging in to the console with a JWT, as the MCP endpoint accepts one: a real `serve
--transport http` with an issuer's JWKS (accesskit's ``served``). The token's ``sub`` names the
client; the ``cartograph:admin`` scope lets it act; an expired token is refused like a wrong key."""

from __future__ import annotations

import re
import time

import httpx
from accesskit import Served
from consolekit import login_form


def console_login(served: Served, token: str) -> tuple[httpx.Client, httpx.Response]:
    client = httpx.Client(base_url=served.base, timeout=60)
    done = client.post("/console/login", data={"token": token, "csrf": login_form(client)})
    return client, done


def test_a_jwt_logs_in_and_its_admin_scope_decides_what_it_may_do(served: Served) -> None:
    issuer = served.issuer
    plain, done = console_login(served, issuer.token(aud=served.url, sub="jwt-viewer"))
    assert done.status_code == 303, done.text
    page = plain.get("/console")
    assert "signed in as <b>jwt-viewer</b>" in page.text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf
    refused = plain.post("/console/actions/regenerate", data={"csrf": csrf[1]})
    assert refused.status_code == 403 and "needs an admin client" in refused.text

    admin_token = issuer.token(aud=served.url, sub="jwt-boss", scope="cartograph:admin")
    boss, done = console_login(served, admin_token)
    assert done.status_code == 303, done.text
    page = boss.get("/console/rift")
    assert "queue regeneration" in page.text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf
    queued = boss.post("/console/actions/regenerate", data={"csrf": csrf[1]})
    assert queued.status_code == 303 and queued.headers["location"].startswith("/console/jobs?")


def test_an_expired_jwt_shows_the_login_page_with_the_reason(served: Served) -> None:
    now = int(time.time())
    stale = served.issuer.token(aud=served.url, iat=now - 7200, exp=now - 3600)
    _, done = console_login(served, stale)
    assert done.status_code == 401 and "That key or token was not accepted" in done.text
    assert "expired" in done.text.lower()
    assert 'name="token"' in done.text
