"""Policies, the rate limiter and the clients store, without a server."""

from __future__ import annotations

import json
import stat
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from accesskit import ISSUER, make_issuer

from cartograph.access import (
    Access,
    ClientStore,
    JwtSettings,
    Policy,
    RateLimiter,
    http_access,
    load_policy,
)
from cartograph.errors import AuthError, ConfigError, RateLimited, UsageError


def test_deny_wins_over_allow_and_a_bare_name_is_a_whole_server() -> None:
    policy = Policy(allow=("github", "fs.read_*"), deny=("*.delete_*",))
    assert policy.permits("github", "create_issue")
    assert not policy.permits("github", "delete_repo")
    assert policy.permits("fs", "read_file") and not policy.permits("fs", "write_file")
    assert not policy.permits("slack", "post")
    assert policy.may_see_server("github") and not policy.may_see_server("slack")
    assert not Policy(deny=("slack",)).may_see_server("slack")


def test_policy_file_with_unknown_keys_or_bad_limits_is_a_config_error(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"allow": ["a.*"], "max_concurrent": 2}), encoding="utf-8")
    assert load_policy(good) == Policy(allow=("a.*",), max_concurrent=2)
    for body in ({"alow": ["a"]}, {"allow": "a.*"}, {"calls_per_minute": 0}, []):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(body), encoding="utf-8")
        with pytest.raises(ConfigError):
            load_policy(bad)


def test_rate_limiter_refills_and_says_when_to_retry() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    limiter.take("a", 2)
    limiter.take("a", 2)
    with pytest.raises(RateLimited) as caught:
        limiter.take("a", 2)
    assert caught.value.retry_after == 30.0 and "retry in 30 s" in str(caught.value)
    limiter.take("b", 2)  # per client
    now[0] = 30.0
    limiter.take("a", 2)


def test_concurrency_cap_holds_while_a_slot_is_in_use() -> None:
    limiter = RateLimiter()
    with limiter.slot("a", None, 1):
        with pytest.raises(RateLimited, match="cap is 1"), limiter.slot("a", None, 1):
            pass
        with limiter.slot("b", None, 1):
            pass
    with limiter.slot("a", None, 1):
        pass


def test_keys_are_stored_hashed_checked_and_revocable(tmp_path: Path) -> None:
    store = ClientStore(tmp_path / "clients.json")
    key = store.add("ci", Policy(allow=("x.*",)))
    raw = (tmp_path / "clients.json").read_text("utf-8")
    assert key not in raw and key.split("_", 2)[2] not in raw
    assert stat.S_IMODE((tmp_path / "clients.json").stat().st_mode) == 0o600
    assert store.authenticate(key).policy == Policy(allow=("x.*",))
    with pytest.raises(AuthError):
        store.authenticate(key[:-1] + ("A" if key[-1] != "A" else "B"))
    with pytest.raises(UsageError):
        store.add("ci", Policy())
    store.revoke("ci")
    with pytest.raises(AuthError, match="revoked"):
        store.authenticate(key)
    assert store.add("ci", Policy()) != key  # a revoked name can get a new key


def test_open_access_is_refused_off_loopback(tmp_path: Path) -> None:
    store = ClientStore(tmp_path / "clients.json")
    with pytest.raises(UsageError, match="loopback"):
        http_access(host="0.0.0.0", store=store, insecure_open=True)
    assert http_access(host="127.0.0.1", store=store, insecure_open=True).authenticate(None)
    with pytest.raises(AuthError):
        Access(store=store).authenticate(None)


def _jwks_server(directory: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = partial(SimpleHTTPRequestHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/jwks.json"


def test_jwt_from_a_jwks_url_names_a_registered_client_with_its_policy(tmp_path: Path) -> None:
    issuer = make_issuer(tmp_path)
    web, url = _jwks_server(tmp_path)
    try:
        store = ClientStore(tmp_path / "clients.json")
        store.add("robot", Policy(allow=("a.*",)))
        access = http_access(
            host="0.0.0.0",
            store=store,
            insecure_open=False,
            jwt=JwtSettings(issuer=ISSUER, audience="urn:cartograph", jwks=url),
            jwt_policy=Policy(allow=("b.*",)),
        )
        known = access.authenticate(issuer.token(aud="urn:cartograph", sub="robot"))
        other = access.authenticate(issuer.token(aud="urn:cartograph", sub="someone"))
        with pytest.raises(AuthError, match="audience"):
            access.authenticate(issuer.token(aud="urn:other", sub="robot"))
    finally:
        web.shutdown()
        web.server_close()
    assert (known.name, known.via, known.policy.allow) == ("robot", "jwt", ("a.*",))
    assert (other.name, other.policy.allow) == ("someone", ("b.*",))
