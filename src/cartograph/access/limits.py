"""Per-client rate limits (a token bucket per client) and a concurrency cap.

:meth:`RateLimiter.slot` admits one operation or raises
:class:`~cartograph.errors.RateLimited` with the seconds after which a retry can succeed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cartograph.errors import RateLimited


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """Buckets and in-flight counts keyed by client name (single event loop, no locks)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._in_flight: dict[str, int] = {}

    def take(self, client: str, per_minute: float | None) -> None:
        """Spend one token of ``client``'s bucket (burst = one minute's worth)."""
        if per_minute is None:
            return
        now = self._clock()
        rate = per_minute / 60.0
        bucket = self._buckets.setdefault(client, _Bucket(per_minute, now))
        bucket.tokens = min(per_minute, bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        if bucket.tokens < 1.0:
            wait = round((1.0 - bucket.tokens) / rate, 1)
            raise RateLimited(
                f"client {client!r} is over its limit of {per_minute:g} calls per minute; "
                f"retry in {wait:g} s",
                retry_after=wait,
            )
        bucket.tokens -= 1.0

    @contextmanager
    def slot(
        self, client: str, per_minute: float | None, max_concurrent: int | None
    ) -> Iterator[None]:
        """One admitted operation: within the rate, and under the concurrency cap while held."""
        running = self._in_flight.get(client, 0)
        if max_concurrent is not None and running >= max_concurrent:
            raise RateLimited(
                f"client {client!r} already has {running} calls running (its cap is "
                f"{max_concurrent}); retry when one finishes, in about 1 s",
                retry_after=1.0,
            )
        self.take(client, per_minute)
        self._in_flight[client] = running + 1
        try:
            yield
        finally:
            self._in_flight[client] -= 1
