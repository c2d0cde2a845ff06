"""RFC 8785 canonical JSON and the content hashes built on it.

:func:`canonical` takes a fast path through the C JSON encoder when the value holds nothing on
which the standard library and RFC 8785 differ (screened by two regular expressions over its
output), a Python walk that rewrites integral floats next, and the reference ``rfc8785`` package
for the rest. The stdlib and RFC 8785 agree when:

- every number is an int within the I-JSON safe range (|n| <= 2**53), a float that is an
  integral value in that range (written as an int by RFC 8785, converted here first), or a
  float with 1e-4 <= |x| < 1e16 (Python's repr and ES6 both write the shortest round-trip
  digits in fixed notation there); other floats go to the reference path;
- object keys sort the same by code point as by UTF-16 code units, which holds unless a key has
  a character outside the Basic Multilingual Plane (those go to the reference path);
- strings: with ``ensure_ascii=False`` the stdlib escapes exactly what RFC 8785 escapes (quote,
  backslash, the five short escapes and other controls as lowercase ``\\u00xx``).

A property test checks the two paths byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import rfc8785

from cartograph.errors import CardError

_SAFE_INT = 2**53
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class _NeedsReference(Exception):
    """The value holds something only the reference encoder formats correctly."""


def _prepare(value: Any) -> Any:
    """A copy the stdlib encoder renders exactly as RFC 8785 would, or raise _NeedsReference."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_SAFE_INT <= value <= _SAFE_INT:
            return value
        raise _NeedsReference
    if isinstance(value, float):
        if value.is_integer():
            if -_SAFE_INT <= value <= _SAFE_INT:
                return int(value)  # RFC 8785 writes 1.0 as 1 (and -0.0 as 0)
            raise _NeedsReference
        if 1e-4 <= abs(value) < 1e16:
            return value  # repr's shortest digits in fixed notation: what ES6 writes too
        raise _NeedsReference
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or _ASTRAL.search(key):
                raise _NeedsReference
            out[key] = _prepare(item)
        return out
    if isinstance(value, list | tuple):
        return [_prepare(item) for item in value]
    raise _NeedsReference


# Conservative screens over the stdlib output: a match may be inside a string (then the slower
# exact path runs for nothing), but no float, long integer or astral character escapes them.
_FLOAT_OR_LONG_INT = re.compile(r"(?:^|\":|[\[,])-?(?:\d+[.eE]|\d{16,})")


def _dumps(value: Any) -> str:
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )


def canonical(obj: Any) -> bytes:
    """RFC 8785 (JCS) canonical bytes of a JSON value."""
    try:
        text = _dumps(obj)
    except (TypeError, ValueError):
        return canonical_reference(obj)  # raises CardError with the reason
    if not _FLOAT_OR_LONG_INT.search(text) and not _ASTRAL.search(text):
        return text.encode("utf-8")
    try:
        prepared = _prepare(obj)
    except _NeedsReference:
        return canonical_reference(obj)
    return _dumps(prepared).encode("utf-8")


def canonical_reference(obj: Any) -> bytes:
    """RFC 8785 bytes from the reference implementation (slow, exact for every value)."""
    try:
        return rfc8785.dumps(obj)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CardError(f"value cannot be canonicalised as JSON: {exc}") from exc


def sha256_json(obj: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``obj``."""
    return "sha256:" + hashlib.sha256(canonical(obj)).hexdigest()


def sha256_text(text: str | None) -> str:
    """``sha256:<hex>`` of a UTF-8 string (the empty string for ``None``)."""
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()
