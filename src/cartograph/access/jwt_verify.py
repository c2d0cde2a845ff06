"""JWT access tokens from an OAuth authorization server, verified as the MCP spec asks.

Checked: the signature (against keys from a JWKS file or URL, chosen by ``kid``), the issuer,
the audience (this resource), expiry and not-before. The client is named by the ``sub`` claim
(or ``client_id`` when present). PyJWT does the cryptography; its errors become
:class:`~cartograph.errors.AuthError` here and nowhere else.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from cartograph.access.jwt_settings import JwtSettings
from cartograph.errors import AuthError, ConfigError

logger = logging.getLogger(__name__)

__all__ = ["ALGORITHMS", "JwtIdentity", "JwtSettings", "JwtVerifier"]

ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"]


@dataclass(frozen=True)
class JwtIdentity:
    name: str
    claims: dict[str, Any]


class JwtVerifier:
    """Verifies bearer JWTs against one issuer's JWKS."""

    def __init__(self, settings: JwtSettings) -> None:
        self.settings = settings
        self._url_client: jwt.PyJWKClient | None = None
        self._file_cache: tuple[int, jwt.PyJWKSet] | None = None
        if settings.jwks.startswith(("https://", "http://")):
            self._url_client = jwt.PyJWKClient(settings.jwks, cache_keys=True, timeout=10)
        else:
            self._file_keys()  # fail at start-up, not on the first request

    def _file_keys(self) -> jwt.PyJWKSet:
        """The JWKS file's keys, re-read when the file changes (key rotation)."""
        path = Path(self.settings.jwks)
        try:
            mtime = path.stat().st_mtime_ns
            if self._file_cache is None or self._file_cache[0] != mtime:
                keys = jwt.PyJWKSet.from_dict(json.loads(path.read_text("utf-8")))
                self._file_cache = (mtime, keys)
            return self._file_cache[1]
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            raise ConfigError(f"cannot read the JWKS: {exc}", file=str(path)) from exc

    def _key(self, token: str) -> Any:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            if self._url_client is not None:
                return self._url_client.get_signing_key_from_jwt(token).key
            keys = self._file_keys().keys
        except jwt.PyJWTError as exc:
            raise AuthError(f"token key not found: {exc}") from exc
        except ConfigError as exc:
            logger.error("JWKS unavailable: %s", exc)
            raise AuthError("the token's signing keys are unavailable") from exc
        for key in keys:
            if kid is None or key.key_id == kid:
                return key.key
        raise AuthError("no key in the JWKS matches the token's kid")

    def verify(self, token: str) -> JwtIdentity:
        key = self._key(token)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthError("the token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise AuthError("the token is not for this resource (audience)") from exc
        except jwt.InvalidIssuerError as exc:
            raise AuthError("the token is from an untrusted issuer") from exc
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token: {type(exc).__name__}") from exc
        name = str(claims.get("client_id") or claims["sub"])
        return JwtIdentity(name=name, claims=claims)
