"""Handing freed heap memory back to the operating system, where the C library allows it.

Loading an ONNX model or a card set allocates and frees far more than it keeps; glibc's
allocator keeps the freed pages mapped, so a long-running ``serve`` would hold its loading
peak as resident memory. :func:`release` asks glibc to return them (``malloc_trim``); on other C
libraries it does nothing.
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
