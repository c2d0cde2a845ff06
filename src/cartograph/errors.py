"""The one exception tree of Cartograph.

Every error the package raises on purpose derives from :class:`CartographError`; third-party
errors are mapped to these in one place per layer with ``raise ... from exc``.

    CartographError
    ├── UsageError                 bad command-line input (exit 2)
    ├── ConfigError                mcp.json / workspace config problems (exit 2)
    ├── SnapshotError              a catalog snapshot that cannot be read
    ├── UpstreamError              an upstream server failed (start, protocol, timeout)
    │   └── UpstreamTimeout        it did not answer in time ("retry")
    ├── CardError                  a capability card is malformed
    │   ├── VerificationError      a card's signature fails (tampered, unsigned, untrusted key)
    │   │   └── TrustError         the signing key is not trusted for it: unknown, revoked, outside
    │   │                          its validity window, or the revocation list itself is invalid
    │   └── GeneratorError         a card generator failed for a server/tool (e.g. the LLM kept
    │                              answering badly or could not be reached)
    ├── KeyError_                  operator key missing or unreadable
    ├── IndexError_                the retrieval index is missing, stale or tampered
    ├── StoreError                 the shared store (PostgreSQL) is unreachable or not usable
    ├── EmbedderError              an embedding backend failed to load or answer
    ├── GatewayError               a call could not be routed
    │   ├── ToolNotFound           no signed card holds that tool
    │   ├── ToolQuarantined        the drift guard holds the tool back
    │   └── ArgumentsInvalid       arguments do not match the input schema
    └── AccessError                access control refused a request
        ├── AuthError              missing, wrong, expired or revoked credentials (HTTP 401)
        ├── AccessDenied           the client's policy does not allow that server or tool
        └── RateLimited            the client is over its rate or concurrency limit ("retry")
"""

from __future__ import annotations

from typing import Literal

TrustKind = Literal["unknown", "revoked", "expired", "not-yet-valid", "future", "revocation-list"]
"""Why a key is not trusted for a signature (see :class:`TrustError`)."""


class CartographError(Exception):
    """Root of every error Cartograph raises on purpose."""

    exit_code: int = 1


class UsageError(CartographError):
    """The command line was used wrongly."""

    exit_code = 2


class ConfigError(CartographError):
    """A configuration file is wrong; the message names the file, the server and the field."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        server: str | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.server = server
        self.field = field
        where = []
        if file:
            where.append(str(file))
        if server:
            where.append(f"server {server!r}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{': '.join(where)}: {message}" if where else message)


class SnapshotError(CartographError):
    """A catalog snapshot file cannot be read."""

    exit_code = 2


class UpstreamError(CartographError):
    """An upstream MCP server failed to start, answer or follow the protocol."""

    def __init__(self, server: str, message: str, *, stderr_tail: str = "") -> None:
        self.server = server
        self.stderr_tail = stderr_tail
        super().__init__(f"upstream {server!r}: {message}")


class UpstreamTimeout(UpstreamError):
    """An upstream did not answer in time; the caller may retry."""


class CardError(CartographError):
    """A capability card is malformed."""


class VerificationError(CardError):
    """A card's signature does not verify: tampered, signed by an unknown key, or unsigned."""


class TrustError(VerificationError):
    """The signing key is not trusted for this card (``kind`` says why; ``key_id`` names it).

    Kinds: ``unknown`` (not in the trust store), ``revoked``, ``expired`` (signed after the key's
    ``not_after``), ``not-yet-valid`` (signed before its ``not_before``), ``future`` (signed in
    the future), ``revocation-list`` (the revocation list is missing, tampered or rolled back, so
    no key can be trusted until it is fixed).
    """

    def __init__(self, message: str, *, kind: TrustKind, key_id: str | None = None) -> None:
        self.kind: TrustKind = kind
        self.key_id = key_id
        super().__init__(message)


class GeneratorError(CardError):
    """A card generator could not write a server's (or one tool's) card text."""

    def __init__(self, server: str, message: str, *, tool: str | None = None) -> None:
        self.server = server
        self.tool = tool
        self.reason = message
        where = f"server {server!r}" + (f", tool {tool!r}" if tool else "")
        super().__init__(f"{where}: {message}")


class KeyError_(CartographError):  # the builtin name is taken
    """The operator key is missing or unreadable."""

    exit_code = 2


class IndexError_(CartographError):  # the builtin name is taken
    """The retrieval index is missing, stale or tampered."""


class StoreError(CartographError):
    """The shared store named by ``--store`` / ``$CARTOGRAPH_STORE`` cannot be used; the message
    names the store (password masked) and what to do."""

    exit_code = 2


class EmbedderError(CartographError):
    """An embedding backend failed to load or answer."""


class GatewayError(CartographError):
    """A tool call could not be routed to its upstream."""


class ToolNotFound(GatewayError):
    """No signed card holds the requested tool."""


class ToolQuarantined(GatewayError):
    """The drift guard holds the tool back until the operator re-attests it."""


class ArgumentsInvalid(GatewayError):
    """Arguments do not match the tool's input schema."""

    def __init__(self, message: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(message)


class AccessError(CartographError):
    """Access control refused a request."""


class AuthError(AccessError):
    """Credentials are missing, wrong, expired or revoked (``code`` is the RFC 6750 error)."""

    def __init__(self, message: str, *, code: str = "invalid_token") -> None:
        self.code = code
        super().__init__(message)


class AccessDenied(AccessError):
    """The client's policy does not allow this server or tool."""


class RateLimited(AccessError):
    """The client is over its rate or concurrency limit; ``retry_after`` is in seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)
