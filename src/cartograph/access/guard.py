"""Who is calling: :class:`Caller`, and :class:`Access`, which turns a bearer token into one.

An HTTP request is authenticated by a Cartograph API key (``cg_...``, see
:mod:`cartograph.access.clients`) or, when an authorization server is configured, by a JWT
it issued. A stdio client gets the policy named on the command line. Every caller carries the
policy that decides what it may discover and call, and the limits it runs under.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cartograph.access.clients import KEY_PREFIX, ClientStore
from cartograph.access.jwt_settings import JwtSettings
from cartograph.access.limits import RateLimiter
from cartograph.access.policy import ALLOW_ALL, Policy
from cartograph.errors import AuthError, UsageError

if TYPE_CHECKING:
    from cartograph.access.jwt_verify import JwtVerifier

logger = logging.getLogger(__name__)

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ADMIN_SCOPE = "cartograph:admin"


def _scopes(identity: Any) -> set[str]:
    """A JWT's scopes: RFC 8693 ``scope`` (space-separated) or ``scp`` (a list or a string)."""
    found: set[str] = set()
    for claim in ("scope", "scp"):
        value = identity.claims.get(claim)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(str(v) for v in value)
    return found


@dataclass(frozen=True)
class Caller:
    """An authenticated client: its name (audit, limits), policy and how it proved it;
    ``admin``: it may act from the console (an API key added with ``--admin``, or a JWT whose
    ``scope`` holds :data:`ADMIN_SCOPE`)."""

    name: str
    policy: Policy = ALLOW_ALL
    via: str = "stdio"
    admin: bool = False


@dataclass
class Access:
    """Authentication and limits for one running proxy.

    ``open_policy`` set means HTTP requests need no credentials (loopback only); otherwise
    a request needs a live API key from ``store`` or a JWT that ``jwt`` verifies. JWT clients
    that are also registered by name get their registered policy, others ``jwt_policy``.
    """

    store: ClientStore | None = None
    jwt: JwtVerifier | None = None
    jwt_policy: Policy = ALLOW_ALL
    open_policy: Policy | None = None
    limiter: RateLimiter = field(default_factory=RateLimiter)

    @property
    def issuer(self) -> str | None:
        return self.jwt.settings.issuer if self.jwt else None

    def authenticate(self, token: str | None) -> Caller:
        """The caller for a bearer token (``None``: none sent); raises :class:`AuthError`."""
        if self.open_policy is not None:
            return Caller("anonymous", self.open_policy, "open")
        if not token:
            raise AuthError("this server needs a bearer token", code="")
        if token.startswith(KEY_PREFIX) and self.store is not None:
            record = self.store.authenticate(token)
            return Caller(record.name, record.policy, "api-key", admin=record.admin)
        if self.jwt is not None and token.count(".") == 2:
            identity = self.jwt.verify(token)
            known = self.store.records().get(identity.name) if self.store else None
            policy = known.policy if known is not None and not known.revoked else self.jwt_policy
            return Caller(identity.name, policy, "jwt", admin=ADMIN_SCOPE in _scopes(identity))
        raise AuthError("unknown or wrong bearer token")


def http_access(
    *,
    host: str,
    store: ClientStore,
    insecure_open: bool,
    open_policy: Policy = ALLOW_ALL,
    jwt: JwtSettings | None = None,
    jwt_policy: Policy = ALLOW_ALL,
) -> Access:
    """The access settings for ``serve --transport http``; refuses an open non-loopback bind."""
    if insecure_open:
        if host not in LOOPBACK:
            raise UsageError(
                f"--insecure-open serves without authentication and is allowed on loopback "
                f"only, not on {host!r}; use API keys (`cartograph clients add`) or a JWT issuer"
            )
        logger.warning("serving WITHOUT authentication on %s (--insecure-open)", host)
        return Access(store=store, open_policy=open_policy)
    verifier = None
    if jwt is not None:
        from cartograph.access.jwt_verify import JwtVerifier  # PyJWT + cryptography: only here

        verifier = JwtVerifier(jwt)
    if verifier is None and not any(r.revoked is None for r in store.records().values()):
        logger.warning(
            "no client is registered (%s) and no JWT issuer is set: every request will get "
            "401. Add one with `cartograph clients add NAME`, or serve with --insecure-open "
            "on a loopback host for local development",
            store.path,
        )
    return Access(store=store, jwt=verifier, jwt_policy=jwt_policy)
