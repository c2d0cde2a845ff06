"""Verify many stored cards on two cores: a forked helper and the parent share the work.

Ed25519 verification is CPU-bound and holds the GIL, so threads do not help. On a large store
(:data:`PARALLEL_MIN` cards or more, more than one usable CPU, ``fork`` available, and
``CARTOGRAPH_VERIFY_WORKERS`` not ``0``) the parent forks one helper after reading the files; the
helper inherits the bytes (copy-on-write, nothing is sent to it) and verifies from the front,
while the parent runs its own work (model validation) and then verifies from the back. Each side
claims small chunks under a shared lock, so they meet wherever the load of the machine puts
them. The helper sends back only its verdicts.

Nothing is ever skipped: if the helper dies, hangs or answers badly, the parent verifies the
helper's share itself. The helper points its stdout and stderr at /dev/null first, so no output
buffer it inherited (an MCP stdio stream, say) can be flushed twice.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cartograph.cards.trust import TrustStore

logger = logging.getLogger(__name__)

PARALLEL_MIN = 1000
CHUNK = 32
HELPER_TIMEOUT_S = 60.0
WORKERS_ENV = "CARTOGRAPH_VERIFY_WORKERS"

V = TypeVar("V")
Check = Callable[[bytes, TrustStore, str], V]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parallel_enabled(n: int) -> bool:
    if os.environ.get(WORKERS_ENV, "").strip() == "0":
        return False
    if n < PARALLEL_MIN or _usable_cpus() < 2:
        return False
    return "fork" in multiprocessing.get_all_start_methods()


def _claim_front(bounds: Any) -> tuple[int, int] | None:
    with bounds.get_lock():
        lo, hi = bounds[0], bounds[1]
        if lo >= hi:
            return None
        end = min(hi, lo + CHUNK)
        bounds[0] = end
        return lo, end


def _claim_back(bounds: Any, timeout: float) -> tuple[int, int] | None:
    lock = bounds.get_lock()
    if not lock.acquire(timeout=timeout):
        raise TimeoutError("the verification helper holds the lock")
    try:
        lo, hi = bounds[0], bounds[1]
        if lo >= hi:
            return None
        start = max(lo, hi - CHUNK)
        bounds[1] = start
        return start, hi
    finally:
        lock.release()


def _helper(
    texts: Sequence[bytes],
    sources: Sequence[str],
    trust: TrustStore,
    check: Check[Any],
    bounds: Any,
    conn: Any,
) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    out: list[tuple[int, Any]] = []
    try:
        while (span := _claim_front(bounds)) is not None:
            for i in range(*span):
                out.append((i, check(texts[i], trust, sources[i])))
        conn.send(("ok", out))
    except BaseException as exc:  # report anything to the parent, which then redoes it
        conn.send(("error", repr(exc)))
    finally:
        conn.close()


def verify_in_parallel(
    texts: Sequence[bytes],
    sources: Sequence[str],
    trust: TrustStore,
    check: Check[V],
    meanwhile: Callable[[], None] | None = None,
) -> list[V]:
    """``check(texts[i], trust, sources[i])`` for every i, in order, on up to two processes."""
    n = len(texts)
    if not parallel_enabled(n):
        if meanwhile:
            meanwhile()
        return [check(texts[i], trust, sources[i]) for i in range(n)]
    ctx = multiprocessing.get_context("fork")
    bounds = ctx.Array("q", [0, n])
    recv, send = ctx.Pipe(duplex=False)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    proc = ctx.Process(
        target=_helper, args=(texts, sources, trust, check, bounds, send), daemon=True
    )
    proc.start()
    send.close()
    results: list[Any] = [None] * n
    done = [False] * n
    try:
        if meanwhile:
            meanwhile()
        try:
            while (span := _claim_back(bounds, HELPER_TIMEOUT_S)) is not None:
                for i in range(*span):
                    results[i] = check(texts[i], trust, sources[i])
                    done[i] = True
        except TimeoutError:
            logger.warning("card verification helper is stuck; verifying its share here")
        helper = _collect(recv)
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
    for i, verdict in helper:
        if 0 <= i < n and not done[i]:
            results[i] = verdict
            done[i] = True
    missing = [i for i in range(n) if not done[i]]
    if missing:
        logger.info("verifying %d card(s) the helper did not", len(missing))
        for i in missing:
            results[i] = check(texts[i], trust, sources[i])
    return results


def _collect(recv: Any) -> list[tuple[int, Any]]:
    """The helper's verdicts, or [] when it failed (the parent then redoes its share)."""
    try:
        if not recv.poll(HELPER_TIMEOUT_S):
            logger.warning("card verification helper did not answer in %ss", HELPER_TIMEOUT_S)
            return []
        status, payload = recv.recv()
    except (EOFError, OSError) as exc:
        logger.warning("card verification helper exited without an answer (%s)", exc)
        return []
    if status != "ok":
        logger.warning("card verification helper failed: %s", payload)
        return []
    return list(payload)
