"""Verify many stored cards on two cores: a forked helper and the parent share the work.

Ed25519 verification is CPU-bound and holds the GIL, so threads do not help. On a large store
(:data:`PARALLEL_MIN` cards or more, more than one usable CPU, Linux, and
``CARTOGRAPH_VERIFY_WORKERS`` not ``0``) the parent forks one helper after reading the files; the
helper inherits the bytes (copy-on-write, nothing is sent to it) and verifies from the front,
while the parent runs its own work (model validation) and then verifies from the back. Each side
claims small chunks under a shared lock, so they meet wherever the load of the machine puts
them. The helper writes back only its verdicts, pickled, through a pipe.

The helper is a bare ``os.fork`` child: it touches no inherited stream or lock other than the
shared counter (its stdout and stderr point at /dev/null first, so no output buffer it inherited,
an MCP stdio stream say, can be flushed twice) and leaves with ``os._exit``. Nothing is ever
skipped: if the helper dies, stalls (:data:`STALL_S` with no answer once the parent is done) or
answers badly, the parent verifies the helper's share itself.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cartograph.trust.store import TrustStore

logger = logging.getLogger(__name__)

PARALLEL_MIN = 1000
CHUNK = 32
STALL_S = 10.0
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
    # Linux only: elsewhere (macOS) a forked child of a process using system frameworks may crash.
    linux = sys.platform.startswith("linux")
    return linux and n >= PARALLEL_MIN and _usable_cpus() >= 2 and hasattr(os, "fork")


def _claim(bounds: Any, *, front: bool, timeout: float) -> tuple[int, int] | None:
    lock = bounds.get_lock()
    if not lock.acquire(timeout=timeout):
        raise TimeoutError("the shared counter stayed locked")
    try:
        lo, hi = bounds[0], bounds[1]
        if lo >= hi:
            return None
        if front:
            bounds[0] = end = min(hi, lo + CHUNK)
            return lo, end
        bounds[1] = start = max(lo, hi - CHUNK)
        return start, hi
    finally:
        lock.release()


def _helper_main(
    texts: Sequence[bytes],
    sources: Sequence[str],
    trust: TrustStore,
    check: Check[Any],
    bounds: Any,
    write_fd: int,
) -> int:
    """The forked helper's whole life; returns its exit status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    out: list[tuple[int, Any]] = []
    try:
        while (span := _claim(bounds, front=True, timeout=STALL_S)) is not None:
            for i in range(*span):
                out.append((i, check(texts[i], trust, sources[i])))
        data = pickle.dumps(("ok", out), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # report anything to the parent, which then redoes it
        data = pickle.dumps(("error", repr(exc)))
    view = memoryview(data)
    while view:
        view = view[os.write(write_fd, view) :]
    return 0


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
    bounds = multiprocessing.get_context("fork").Array("q", [0, n])
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper
        status = 1
        try:
            os.close(read_fd)
            status = _helper_main(texts, sources, trust, check, bounds, write_fd)
        finally:
            os._exit(status)
    os.close(write_fd)
    results: list[Any] = [None] * n
    done = [False] * n
    helper: list[tuple[int, Any]] = []
    answered = False
    try:
        if meanwhile:
            meanwhile()
        try:
            while (span := _claim(bounds, front=False, timeout=STALL_S)) is not None:
                for i in range(*span):
                    results[i] = check(texts[i], trust, sources[i])
                    done[i] = True
        except TimeoutError:
            logger.warning("card verification helper is stuck; verifying its share here")
        helper, answered = _collect(read_fd)
    finally:
        os.close(read_fd)
        _reap(pid, kill=not answered)
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


def _collect(read_fd: int) -> tuple[list[tuple[int, Any]], bool]:
    """The helper's verdicts ([] when it failed or stalled: the parent redoes its share), and
    whether its end of the pipe closed (then it is exiting and needs no kill)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + STALL_S
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read_fd], [], [], max(0.0, left))
        if not ready:
            logger.warning("card verification helper did not answer in %ss", STALL_S)
            return [], False
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    try:
        status, payload = pickle.loads(b"".join(chunks))
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
        logger.warning("card verification helper exited without an answer (%r)", exc)
        return [], True
    if status != "ok":
        logger.warning("card verification helper failed: %s", payload)
        return [], True
    return list(payload), True


def _reap(pid: int, *, kill: bool) -> None:
    """Wait for the helper, killing it first when it stalled."""
    with contextlib.suppress(ChildProcessError):
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
