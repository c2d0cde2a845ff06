"""Access control: who may discover and call what, and how often.

API keys (:mod:`.clients`), JWTs from an authorization server (:mod:`.jwt_verify`), per-client
policies (:mod:`.policy`), rate limits (:mod:`.limits`), and the HTTP front door
(:mod:`.http`). The proxy asks a :class:`Caller` what it may see; it never parses tokens.
"""

from cartograph.access.clients import ClientStore
from cartograph.access.guard import Access, Caller, http_access
from cartograph.access.jwt_settings import JwtSettings
from cartograph.access.limits import RateLimiter
from cartograph.access.policy import ALLOW_ALL, Policy, load_policy

__all__ = [
    "ALLOW_ALL",
    "Access",
    "Caller",
    "ClientStore",
    "JwtSettings",
    "Policy",
    "RateLimiter",
    "http_access",
    "load_policy",
]
