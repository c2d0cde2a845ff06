"""Public endpoints: the text that names an upstream in snapshots and cards, without secrets.

A stdio upstream is named by its command and a digest of its arguments
(:func:`command_identity`: ``node [2 args sha256:...]``): cards are shared between operators,
and no pattern can tell every secret an argument may hold (``--user-agent sk-...``) from a
path, so no argument value is ever part of it. An HTTP upstream is named by its URL without a
userinfo password and with secret-looking query values masked as ``***``. Env values and header
values are never part of either. ``${VAR}`` references are kept: they name a value, they do
not hold it.
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_NAME_RE = re.compile(
    r"(token|secret|passw(or)?d|pwd|api[-_]?key|apikey|auth|credential|private[-_]?key|"
    r"access[-_]?key|session|cookie|signature|sig)",
    re.IGNORECASE,
)
REDACTED = "***"


def command_identity(command: str, args: list[str]) -> str:
    """``command`` and a digest of its arguments, never their values: two configs that run
    the same command with the same arguments get the same identity, and nothing more leaks."""
    if not args:
        return _quote(command)
    digest = hashlib.sha256(json.dumps(args, ensure_ascii=False).encode("utf-8")).hexdigest()
    noun = "arg" if len(args) == 1 else "args"
    return f"{_quote(command)} [{len(args)} {noun} sha256:{digest[:16]}]"


def _quote(text: str) -> str:
    return text if text and not re.search(r"[\s\"']", text) else json.dumps(text)


def redact_url(url: str) -> str:
    """``url`` without a userinfo password and with secret-looking query values masked."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{user}@{host}"
        query = urlencode(
            [
                (k, REDACTED if SECRET_NAME_RE.search(k) and "${" not in v else v)
                for k, v in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="${}*:/",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return REDACTED
