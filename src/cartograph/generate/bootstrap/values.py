"""Example values for one string or number parameter, from what the schema and the
parameter's description say and from its name: a format (``date``, ``uri``), a format the
description spells out (``HH:MM``), quoted examples in the description, a SQL statement of the
kind the tool runs where the parameter takes SQL, ``HEAD`` for a git revision, a relative path
(``.`` for a folder or repository, ``README.md`` for a file) and otherwise a stock value for the
name.

Pure functions.
"""

from __future__ import annotations

import re
from typing import Any

from cartograph.generate.text import split_identifier, wordset

_QUOTED = re.compile(r"['\"`]([^'\"`\s]{1,40})['\"`]")

# name word -> example string; the first word of the name that matches wins
_NAMED_STRINGS: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(words.split()), value)
    for words, value in (
        ("url urls link href uri endpoint website", "https://example.com"),
        ("email mail recipient", "user@example.com"),
        ("date day since checkin", "2026-01-15"),
        ("until checkout", "2026-01-20"),
        ("time datetime timestamp", "2026-01-15T09:00:00Z"),
        ("city location place address destination origin", "Paris"),
        ("country region", "France"),
        ("timezone tz", "Europe/Paris"),
        ("language lang locale", "en"),
        ("currency", "USD"),
        ("symbol ticker stock", "AAPL"),
        ("owner user username author login", "octocat"),
        ("repo repository project", "example-project"),
        ("branch", "main"),
        ("query q search keyword keywords term text prompt question topic", "example query"),
        ("title subject", "Example title"),
        ("body content message description comment note", "Example text"),
        ("name label", "example"),
        ("code script expression formula", "1 + 1"),
        ("sql", "SELECT 1"),
        ("color colour", "#336699"),
        ("id identifier key uuid slug", "example-id"),
        ("token cursor", "abc123"),
    )
)


def string_for(name: str, spec: dict[str, Any], context: frozenset[str] = frozenset()) -> str:
    """A string for parameter ``name`` that its schema accepts (see the module doc)."""
    fmt = spec.get("format")
    description = str(spec.get("description") or "")
    value = _BY_FORMAT.get(fmt, "") if isinstance(fmt, str) else ""
    if not value:
        value = _described_format(description) or _quoted_example(description, name)
    if not value:
        value = _by_role(split_identifier(name), description, context)
    if not value:
        words = split_identifier(name)
        for word in reversed(words):
            value = next((v for keys, v in _NAMED_STRINGS if word in keys), "")
            if value:
                break
        else:
            value = "example"
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                hinted = _QUOTED.findall(str(spec.get("description") or ""))
                tries = (*hinted, *_PATTERN_TRIES)
                value = next((c for c in tries if re.search(pattern, c)), value)
        except re.error:
            pass
    low, high = spec.get("minLength"), spec.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        value = _padded(value, low)
    if isinstance(high, int) and high >= 0 and len(value) > high:
        value = value[:high]
    return value


STOCK_ID_DIGITS = "0123456789abcdef"
"""How the stock identifier of fixed length opens (Rift's task queries leave it unsaid)."""
_HEX = STOCK_ID_DIGITS * 4


def _padded(value: str, length: int) -> str:
    """``value`` made ``length`` long: an identifier as that many hex digits (a 32-character
    note id reads ``0123456789abcdef0123...``, not ``example-idxxxxxx...``), else padded."""
    if value == "example-id" and length <= len(_HEX):
        return _HEX[:length]
    return value + "x" * (length - len(value))


_BY_FORMAT = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T09:00:00Z",
    "time": "09:00:00",
    "uri": "https://example.com",
    "url": "https://example.com",
    "email": "user@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}

_PATH_WORDS = wordset("path paths file files filepath filename dir directory folder")
_FOLDER_WORDS = wordset("dir directory directories folder folders tree list ls search find")
_REPO_WORDS = wordset("repo repository cwd root workdir workspace")
_REVISION_WORDS = wordset("revision rev commit sha ref treeish")
_SQL = re.compile(r"\bsql\b|\bselect\b.{0,20}\bquery\b|\bsqlite\b", re.IGNORECASE)
_VCS = re.compile(r"\b(?:commit|branch|revision|git)\b", re.IGNORECASE)


def _by_role(words: list[str], description: str, context: frozenset[str]) -> str:
    """A value for what the parameter is (a path, SQL, a git revision), or ``""``."""
    named = set(words)
    if named & {"cron", "crontab"}:
        return "0 9 * * 1"  # a schedule, not the "1 + 1" of an expression
    vcs = _VCS.search(description) or context & {"git", "diff", "commit", "branch"}
    if named & _REVISION_WORDS or ("target" in named and vcs):
        return "HEAD"
    if "sql" in named or (named & {"query", "statement", "sql"} and _SQL.search(description)):
        return _sql_for(description, context)
    if named & _REPO_WORDS and (named & {"path", "dir"} or ("repo" in named and vcs)):
        return "."  # a local checkout; a bare "repo" next to an owner is a repository name
    if named & _PATH_WORDS:
        folder = named & {"dir", "directory", "folder"} or context & _FOLDER_WORDS
        return "." if folder else "README.md"
    return ""


_CREATE_SQL = "CREATE TABLE example (id INTEGER PRIMARY KEY, name TEXT)"
_INSERT_SQL = "INSERT INTO example (name) VALUES ('example')"
_WRITE_WORDS = wordset("write insert update modify change delete")


def _sql_for(description: str, context: frozenset[str]) -> str:
    """A statement of the kind the parameter or the tool names: a table to create for
    ``create_table`` or "CREATE TABLE SQL statement", a row to insert for ``write_query``, else
    a query that reads (a tool that only accepts writes rejects ``SELECT 1``)."""
    upper = description.upper()
    if "CREATE TABLE" in upper or {"create", "table"} <= context or "migration" in context:
        return _CREATE_SQL
    if re.search(r"\bINSERT\b", upper) or context & _WRITE_WORDS:
        return _INSERT_SQL
    return "SELECT 1"


def _quoted_example(description: str, name: str) -> str:
    """The first quoted value of a description that gives examples or choices (not the
    parameter's own name)."""
    found = [f for f in _QUOTED.findall(description) if f.lower() not in name.lower()]
    if len(found) >= 2 or (found and re.search(r"\be\.?g\b|for example|such as", description)):
        return found[0]
    return ""


# a format the publisher spells out in a parameter description -> a value in that format
_DESCRIBED_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), value)
    for pattern, value in (
        (r"\bHH:MM:SS\b", "14:30:00"),
        (r"\bHH:MM\b", "14:30"),
        (r"\bYYYY-MM-DD[T ]HH", "2026-01-15T09:00:00Z"),
        (r"\bYYYY-MM-DD\b", "2026-01-15"),
        (r"\bYYYYMMDD\b", "20260115"),
        (r"\bYYYY-MM\b", "2026-01"),
        (r"\bISO[ -]?8601\b", "2026-01-15T09:00:00Z"),
        (r"\bIANA\b.{0,30}\btime ?zone|\btime ?zone\b.{0,30}\bIANA\b", "Europe/Paris"),
    )
)


def _described_format(description: str) -> str:
    """A value in the format a parameter's description names (``HH:MM`` -> ``14:30``)."""
    for pattern, value in _DESCRIBED_FORMATS:
        if pattern.search(description):
            return value
    return ""


_PATTERN_TRIES = tuple(
    [
        "example",
        "abc123",
        "123",
        "2026-01-15",
        "ABC",
        "a",
        "example-id",
        "example_id",
        "https://example.com",
        "user@example.com",
        "1.0.0",
        "#336699",
        "AAPL",
        "PROJ-123",
        "AS123",
        "1:2",
        "1-2",
        "v1",
        "A1",
        "example.png",
        "example.txt",
        "example.json",
    ]
)


def number_for(name: str, spec: dict[str, Any], typ: str) -> int | float:
    words = set(split_identifier(name))
    value: float = 1
    if words & {"limit", "count", "size", "max", "top", "num", "results", "n", "per"}:
        value = 10
    elif words & {"latitude", "lat"}:
        value = 48.8566
    elif words & {"longitude", "lon", "lng"}:
        value = 2.3522
    elif words & {"year"}:
        value = 2026
    elif words & {"offset", "skip", "start", "index"}:
        value = 0
    for bound in ("minimum", "exclusiveMinimum"):
        low = spec.get(bound)
        if isinstance(low, int | float) and not isinstance(low, bool) and value <= low:
            value = low if bound == "minimum" else low + 1
    for bound in ("maximum", "exclusiveMaximum"):
        high = spec.get(bound)
        if isinstance(high, int | float) and not isinstance(high, bool) and value >= high:
            value = high if bound == "maximum" else high - 1
    multiple = spec.get("multipleOf")
    if isinstance(multiple, int | float) and not isinstance(multiple, bool) and multiple > 0:
        value = multiple * max(1, round(value / multiple))
    if typ == "integer":
        return int(value)
    return float(value) if not float(value).is_integer() else int(value)
