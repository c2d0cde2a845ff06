"""The rate limiter and the concurrency cap, without a server."""

from __future__ import annotations

import pytest

from cartograph.access import (
    RateLimiter,
)
from cartograph.errors import RateLimited


def test_rate_limiter_refills_and_says_when_to_retry() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    limiter.take("a", 2)
    limiter.take("a", 2)
    with pytest.raises(RateLimited) as caught:
        limiter.take("a", 2)
    assert caught.value.retry_after == 30.0 and "retry in 30 s" in str(caught.value)
    limiter.take("b", 2)  # per client
    now[0] = 30.0
    limiter.take("a", 2)


def test_concurrency_cap_holds_while_a_slot_is_in_use() -> None:
    limiter = RateLimiter()
    with limiter.slot("a", None, 1):
        with pytest.raises(RateLimited, match="cap is 1"), limiter.slot("a", None, 1):
            pass
        with limiter.slot("b", None, 1):
            pass
    with limiter.slot("a", None, 1):
        pass
