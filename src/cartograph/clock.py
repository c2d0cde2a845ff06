"""The one clock: UTC instants, written to the second as ``YYYY-MM-DDTHH:MM:SSZ``.

Cards, snapshots, trust windows and client records all carry this form; :func:`now` gives the
instant as an aware datetime, :func:`stamp` as that text, :func:`stamp_ms` with milliseconds for
log lines, and :func:`parse` reads any ISO 8601 instant back (``Z`` or an offset; a bare date is
midnight UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

__all__ = ["TIME_FORMAT", "format_time", "now", "parse", "stamp", "stamp_ms"]


def now() -> datetime:
    """Now in UTC, to the second (signing times are written to the second)."""
    return datetime.now(UTC).replace(microsecond=0)


def format_time(when: datetime) -> str:
    """``when`` as ``YYYY-MM-DDTHH:MM:SSZ`` (converted to UTC first)."""
    return when.astimezone(UTC).strftime(TIME_FORMAT)


def stamp() -> str:
    """Now as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return format_time(now())


def stamp_ms() -> str:
    """Now with milliseconds (``...T12:00:00.123Z``), for log entries that must sort."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse(text: str) -> datetime:
    """An aware UTC datetime from ISO 8601. Raises ``ValueError`` for anything else."""
    when = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)
