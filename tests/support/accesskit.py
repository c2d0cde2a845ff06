"""Kit for access-control tests: a signed workspace (proxykit), an RSA key with its JWKS file
for an authorization server, and a real `cartograph serve --transport http` that demands
credentials (the ``served`` fixture, registered for every test by tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from proxykit import chaos_entry, copy_workspace, crashy_entry, write_config

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))
ISSUER = "https://auth.example.test"


@dataclass
class Issuer:
    """A test authorization server: its signing key and a JWKS file with the public half."""

    key: rsa.RSAPrivateKey
    kid: str
    jwks: Path

    def token(self, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "sub": "jwt-agent", "iat": now, "exp": now + 600, **claims}
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": self.kid})


def make_issuer(directory: Path, kid: str = "test-key-1") -> Issuer:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid=kid, use="sig", alg="RS256")
    path = directory / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}), encoding="utf-8")
    return Issuer(key, kid, path)


@asynccontextmanager
async def session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """A real SDK client over streamable HTTP, presenting ``token`` as its bearer credential."""
    http = httpx.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=60)
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        with anyio.fail_after(60):
            await client.initialize()
        yield client


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CARTOGRAPH, "--home", str(home), *args], capture_output=True, text=True, timeout=60
    )


@dataclass
class Served:
    """A running `serve --transport http` with its clients' keys."""

    url: str
    home: Path
    keys: dict[str, str]
    issuer: Issuer
    proc: subprocess.Popen[str]

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0]


def start_serve(
    home: Path, args: list[str], *, verbose: bool = False
) -> tuple[subprocess.Popen[str], str]:
    loud = ["-vv"] if verbose else []
    proc = subprocess.Popen(
        [
            CARTOGRAPH,
            "--home",
            str(home),
            *loud,
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # ends at EOF if the server dies
        if "serving MCP at " in line:
            return proc, line.rsplit(" ", 1)[1].strip()
    proc.wait()
    raise AssertionError("serve --transport http did not report its URL")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    proc.wait(timeout=30)
    assert proc.stderr is not None
    rest = proc.stderr.read()
    proc.stderr.close()
    return rest


CLIENTS: dict[str, list[str]] = {
    "full": [],
    "limited": ["--allow", "chaos.*", "--deny", "*.crash*", "--deny", "chaos.hang"],
    "slow": ["--calls-per-minute", "2"],
    "chatty": ["--requests-per-minute", "3"],
    "gone": [],
}


@pytest.fixture(scope="module")
def served(golden_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    ws = copy_workspace(golden_home, base / "home")
    config = write_config(
        base / "cfg", {"chaos": chaos_entry(), "calm": chaos_entry(), "crashy": crashy_entry()}
    )
    keys = {}
    for name, options in CLIENTS.items():
        done = cli(ws.root, "clients", "add", name, *options, "--json")
        assert done.returncode == 0, done.stderr
        keys[name] = json.loads(done.stdout)["key"]
    issuer = make_issuer(base)
    proc, url = start_serve(
        ws.root,
        ["--config", str(config), "--auth-issuer", ISSUER, "--auth-jwks", str(issuer.jwks)],
    )
    try:
        yield Served(url, ws.root, keys, issuer, proc)
    finally:
        stop(proc)
