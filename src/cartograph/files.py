"""Atomic file writes: the one way Cartograph replaces a file on disk; and a file's sha256.

:func:`atomic_write` writes to a hidden temp file beside the target (``.NAME.PID.THREAD.tmp``,
so concurrent writers never share one), flushes it to disk, sets the mode, and renames it over
the target: a reader sees the old file or the new one, never half of either. On any error the
temp file is removed and the target is untouched.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

__all__ = ["atomic_write", "file_sha256", "temp_name"]


def temp_name(path: Path) -> Path:
    """The temp file beside ``path`` that this process and thread writes before renaming."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def atomic_write(path: Path, data: bytes | str, *, mode: int = 0o644, fsync: bool = True) -> Path:
    """Replace ``path`` with ``data`` (str is written as UTF-8) atomically; returns ``path``.

    The parent directory is created when missing. ``mode`` applies from the first byte (a
    private key is never readable by others, even for a moment).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            os.fchmod(fd, mode)  # umask may have narrowed it; an existing temp kept its mode
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def file_sha256(path: Path) -> str:
    """The hex sha256 of the file at ``path``, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
