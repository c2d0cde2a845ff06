"""`serve --transport http` with credentials: real SDK clients, real API keys, real JWTs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from accesskit import ISSUER, Served, cli, make_issuer, session
from proxykit import call, data, text

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def post(served: Served, token: str | None) -> httpx.Response:
    headers = dict(ACCEPT)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(served.url, json=INIT, headers=headers, timeout=30)


def assert_challenge(response: httpx.Response, served: Served, error: str | None) -> None:
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{served.base}/.well-known/oauth-protected-resource"' in challenge
    if error:
        assert f'error="{error}"' in challenge
    else:
        assert "error=" not in challenge
    assert "mcp-session-id" not in response.headers
    assert set(response.json()) == {"error"}  # nothing else: no MCP answer, no detail


def test_missing_credentials_get_401_with_the_metadata_challenge(served: Served) -> None:
    assert_challenge(post(served, None), served, None)


@pytest.mark.parametrize(
    "token",
    ["cg_000000000000_wrong", "not-a-token", "a.b.c"],
    ids=["wrong-api-key", "garbage", "garbage-jwt"],
)
def test_wrong_credentials_get_401_invalid_token(served: Served, token: str) -> None:
    assert_challenge(post(served, token), served, "invalid_token")


def test_jwt_expired_wrong_audience_issuer_or_key_get_401(served: Served, tmp_path: Path) -> None:
    issuer = served.issuer
    now = int(time.time())
    stranger = make_issuer(tmp_path, kid=issuer.kid)  # same kid, different key
    bad = {
        "expired": issuer.token(aud=served.url, iat=now - 7200, exp=now - 3600),
        "audience": issuer.token(aud="http://elsewhere.test/mcp"),
        "issuer": issuer.token(aud=served.url, iss="https://evil.test"),
        "signature": stranger.token(aud=served.url),
        "no-expiry": issuer.token(aud=served.url, exp=None),
    }
    for why, token in bad.items():
        response = post(served, token)
        assert response.status_code == 401, why
        assert 'error="invalid_token"' in response.headers["www-authenticate"], why


def test_protected_resource_metadata_names_the_issuer(served: Served) -> None:
    doc = httpx.get(served.base + "/.well-known/oauth-protected-resource", timeout=30).json()
    assert doc["resource"] == served.url
    assert doc["authorization_servers"] == [ISSUER]
    assert doc["bearer_methods_supported"] == ["header"]


async def test_api_key_client_discovers_and_calls(served: Served) -> None:
    async with session(served.url, served.keys["full"]) as client:
        found = data(await client.call_tool("discover", {"task": "add two numbers", "k": 3}))
        assert len(found["tools"]) == 3
        assert text(await call(client, "chaos", "add", {"a": 2, "b": 3})) == "5"


async def test_valid_jwt_client_is_served_and_audited_by_name(served: Served) -> None:
    token = served.issuer.token(aud=served.url, sub="robot-7")
    async with session(served.url, token) as client:
        await client.call_tool("discover", {"task": "echo some text"})
        assert text(await call(client, "calm", "echo", {"text": "hi"})) == "hi"
    records = [
        json.loads(line)
        for line in (served.home / "logs" / "audit.jsonl").read_text("utf-8").splitlines()
    ]
    mine = [r for r in records if r.get("client") == "robot-7"]
    assert {r["event"] for r in mine} == {"discover", "call"}
    assert all(r.get("client") for r in records if r["event"] in ("discover", "call"))


async def test_policy_hides_tools_in_discover_call_and_status(served: Served) -> None:
    async with session(served.url, served.keys["limited"]) as client:
        for task in ("crash the server", "add two numbers", "say hello", "wait forever"):
            found = data(await client.call_tool("discover", {"task": task, "k": 5}))
            names = [(t["server"], t["tool"]) for t in found["tools"]]
            assert len(names) == 5, task  # top-k is still k
            assert all(s == "chaos" and "crash" not in t and t != "hang" for s, t in names)
        denied = await call(client, "chaos", "crash")
        missing = await call(client, "chaos", "no_such_tool")
        other = await call(client, "calm", "add", {"a": 1, "b": 2})
        status = data(await client.call_tool("status", {}))
    assert denied.is_error and other.is_error and missing.is_error
    assert text(denied) == text(missing).replace("no_such_tool", "crash")  # hidden == absent
    assert "calm" not in text(other).replace("'calm'", "")  # no list of servers
    assert [s["server"] for s in status["servers"]] == ["chaos"]
    assert "crashy" not in json.dumps(status) and "calm" not in json.dumps(status)


async def test_rate_limit_is_a_tool_error_saying_when_to_retry(served: Served) -> None:
    async with session(served.url, served.keys["slow"]) as client:
        first = await call(client, "chaos", "add", {"a": 1, "b": 1})
        second = await call(client, "chaos", "add", {"a": 1, "b": 2})
        third = await call(client, "chaos", "add", {"a": 1, "b": 3})
    assert not first.is_error and not second.is_error
    assert third.is_error and "2 calls per minute" in text(third) and "retry in" in text(third)
    audit = (served.home / "logs" / "audit.jsonl").read_text("utf-8").splitlines()
    limited = [json.loads(line) for line in audit if '"rate-limited"' in line]
    assert [(r["client"], r["tool"]) for r in limited] == [("slow", "call")]


def test_request_rate_is_429_with_retry_after(served: Served) -> None:
    codes = [post(served, served.keys["chatty"]).status_code for _ in range(5)]
    assert codes[:3] == [200, 200, 200]
    response = post(served, served.keys["chatty"])
    assert response.status_code == 429 and int(response.headers["retry-after"]) >= 1


def test_revoked_key_is_refused_on_its_next_request(served: Served) -> None:
    assert post(served, served.keys["gone"]).status_code == 200
    done = cli(served.home, "clients", "revoke", "gone")
    assert done.returncode == 0, done.stderr
    assert_challenge(post(served, served.keys["gone"]), served, "invalid_token")
    listed = cli(served.home, "clients", "list", "--json")
    rows = {r["client"]: r for r in json.loads(listed.stdout)}
    assert rows["gone"]["revoked"] and not rows["full"].get("revoked")
    for key in served.keys.values():  # only hashes are stored
        assert key.split("_", 2)[2] not in (served.home / "clients.json").read_text("utf-8")
        assert key not in listed.stdout


async def test_a_session_belongs_to_the_client_that_opened_it(served: Served) -> None:
    opened = post(served, served.keys["full"])
    sid = opened.headers["mcp-session-id"]
    headers = {**ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    theirs = httpx.post(
        served.url,
        json=ping,
        headers={**headers, "authorization": f"Bearer {served.keys['limited']}"},
        timeout=30,
    )
    own = httpx.post(
        served.url,
        json=ping,
        headers={**headers, "authorization": f"Bearer {served.keys['full']}"},
        timeout=30,
    )
    assert theirs.status_code == 404
    assert own.status_code == 200
