"""Handing freed heap memory back to the operating system, where the C library allows it.

Loading an ONNX model or a card set allocates and frees far more than it keeps; glibc's
allocator keeps the freed pages mapped, so a long-running ``serve`` would hold its loading
peak as resident memory. :func:`release` asks glibc to return them (``malloc_trim``); on other C
libraries it does nothing.

Large inputs are the other half: glibc raises its mmap threshold each time a large block is
freed (up to 32 MiB), so after a few multi-megabyte requests (a 3.9 MB task, 2 MB of call
arguments, a 4 MB body) later blocks of that size come from the heap and stay resident when
freed: +18 % RSS in a 60 s soak with oversized inputs mixed in (benchmarks/soak.py).
:func:`return_large_blocks` fixes the threshold, so each such block is mapped and unmapped on
its own (+2.6 to 7.4 % on the same soak).
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library; glibc only
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release() -> bool:
    """Return freed heap pages to the OS; True when the C library could do it."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value


def return_large_blocks(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix malloc's mmap threshold (glibc; elsewhere nothing); True when it took."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
