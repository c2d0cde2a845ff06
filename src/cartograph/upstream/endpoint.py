"""Public endpoints: the text that names an upstream in snapshots and cards, without secrets.

A stdio upstream is shown as its command line, an HTTP one as its URL. Env values and header
values are never part of it; argument values after secret-looking flags (``--api-key X``,
``--token=X``), ``SECRET=value`` arguments, URL passwords and secret-looking query values are
masked as ``***``. ``${VAR}`` references are kept: they name a value, they do not hold it.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_NAME_RE = re.compile(
    r"(token|secret|passw(or)?d|pwd|api[-_]?key|apikey|auth|credential|private[-_]?key|"
    r"access[-_]?key|session|cookie|signature|sig)",
    re.IGNORECASE,
)
REDACTED = "***"


def command_line(command: str, args: list[str]) -> str:
    """``command args...`` with secret-looking argument values masked."""
    shown = [command]
    mask_next = False
    for arg in args:
        if mask_next and "${" not in arg:
            shown.append(REDACTED)
            mask_next = False
            continue
        mask_next = False
        flag, eq, value = arg.partition("=")
        if arg.startswith("-") and SECRET_NAME_RE.search(flag):
            if eq:
                shown.append(f"{flag}={value if '${' in value else REDACTED}")
            else:
                shown.append(arg)
                mask_next = True
        elif eq and not arg.startswith("-") and SECRET_NAME_RE.search(flag) and "${" not in value:
            shown.append(f"{flag}={REDACTED}")
        elif "://" in arg:
            shown.append(redact_url(arg))
        else:
            shown.append(arg)
    return " ".join(_quote(s) for s in shown)


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
