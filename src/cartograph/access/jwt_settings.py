"""Where a JWT issuer's tokens come from and whom they are for (settings only).

Kept apart from :mod:`cartograph.access.jwt_verify` so that building the proxy's access rules
does not import PyJWT and the ``cryptography`` package behind it (about 9 MB of resident
memory) unless a JWT issuer is configured.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JwtSettings:
    """Where tokens come from and whom they are for."""

    issuer: str
    audience: str
    jwks: str  # a file path or an https:// URL
    leeway: float = 30.0
