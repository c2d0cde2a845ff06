"""JWT from a JWKS URL names a registered client with its policy."""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from accesskit import ISSUER, make_issuer

from cartograph.access import (
    ClientStore,
    JwtSettings,
    Policy,
    http_access,
)
from cartograph.errors import AuthError


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


@pytest.mark.parametrize(
    ("claims", "admin"),
    [
        ({"scope": "openid cartograph:admin"}, True),
        ({"scp": ["read", "cartograph:admin"]}, True),
        ({"scope": "cartograph:read"}, False),
        ({}, False),
    ],
)
def test_a_jwt_is_admin_only_with_the_cartograph_admin_scope(
    tmp_path: Path, claims: dict[str, object], admin: bool
) -> None:
    issuer = make_issuer(tmp_path)
    access = http_access(
        host="127.0.0.1",
        store=ClientStore(tmp_path / "clients.json"),
        insecure_open=False,
        jwt=JwtSettings(issuer=ISSUER, audience="urn:c", jwks=str(tmp_path / "jwks.json")),
    )
    caller = access.authenticate(issuer.token(aud="urn:c", **claims))
    assert caller.via == "jwt" and caller.admin is admin
