"""Card history in the workspace files: every signed version of each card, numbered.

``<home>/history/<name>/<N>.card.json`` holds version N of the card stored as
``<home>/cards/<name>.card.json``, byte for byte as it was written (sealed, so it verifies on read
like the current card). :meth:`FileHistory.record` runs before the current file is replaced: new
bytes become version newest + 1, bytes equal to the newest version add nothing, and versions
older than the newest ``keep`` are removed. A current card written before history existed is
recorded as version 1 when the next one arrives, so no signed version is lost.
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from cartograph import clock
from cartograph.cards.codec import CARD_SUFFIX, stored_signature
from cartograph.errors import CardError, UsageError
from cartograph.files import atomic_write
from cartograph.storage.base import CardVersion

logger = logging.getLogger(__name__)


def read_bytes(path: Path) -> bytes:
    """The file's bytes (``os.read`` on the descriptor: a third cheaper than ``read_bytes``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            chunks = [os.read(fd, os.fstat(fd).st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 16))
        finally:
            os.close(fd)
    except OSError as exc:
        raise CardError(f"{path}: cannot read: {exc.strerror}") from exc
    return b"".join(chunks) if len(chunks) > 2 else chunks[0]


class FileHistory:
    """The numbered versions of each card file, one directory per card under ``root``."""

    def __init__(self, root: Path, keep: int) -> None:
        self.root = root
        self.keep = keep

    def path(self, name: str, version: int) -> Path:
        return self.root / name / f"{version}{CARD_SUFFIX}"

    def numbers(self, name: str) -> list[int]:
        """The versions kept of ``name``, oldest first."""
        try:
            entries = os.listdir(self.root / name)
        except (FileNotFoundError, NotADirectoryError):
            return []
        out = []
        for entry in entries:
            stem = entry[: -len(CARD_SUFFIX)] if entry.endswith(CARD_SUFFIX) else ""
            if stem.isdigit():
                out.append(int(stem))
        return sorted(out)

    def record(self, name: str, server: str, raw: bytes, current: Path) -> CardVersion:
        """Make ``raw`` the newest version of ``name`` (unless it is already) and prune."""
        numbers = self.numbers(name)
        if numbers:
            newest = self.path(name, numbers[-1])
            try:
                if read_bytes(newest) == raw:
                    return self._version(server, numbers[-1], newest, raw)
            except CardError:
                logger.warning("%s: unreadable; writing a new version after it", newest)
        else:
            try:
                before = read_bytes(current)
            except CardError:
                before = None
            if before is not None and before != raw:
                atomic_write(self.path(name, 1), before)  # written before history was kept
                numbers = [1]
        version = (numbers[-1] if numbers else 0) + 1
        path = atomic_write(self.path(name, version), raw)
        for old in numbers[: max(0, len(numbers) + 1 - self.keep)]:
            self.path(name, old).unlink(missing_ok=True)
        return self._version(server, version, path, raw)

    def versions(self, name: str, server: str) -> list[CardVersion]:
        out = []
        for number in self.numbers(name):
            path = self.path(name, number)
            try:
                out.append(self._version(server, number, path, read_bytes(path)))
            except CardError as exc:
                logger.warning("%s", exc)
        return out

    def read(self, name: str, server: str, version: int) -> tuple[Path, bytes]:
        """The stored bytes of one version (unverified: the caller verifies them)."""
        path = self.path(name, version)
        if not path.is_file():
            kept = self.numbers(name)
            have = f"versions kept: {kept[0]}..{kept[-1]}" if kept else "no versions are kept"
            raise UsageError(
                f"no version {version} of the card of server {server!r} in {self.root / name} "
                f"({have}; `cartograph cards history {server}` lists them)"
            )
        return path, read_bytes(path)

    def find(self, name: str, signature: str) -> int | None:
        """The newest version of ``name`` that carries ``signature`` (its value), if any."""
        for number in reversed(self.numbers(name)):
            try:
                if stored_signature(read_bytes(self.path(name, number))) == signature:
                    return number
            except CardError:
                continue
        return None

    def _version(self, server: str, number: int, path: Path, raw: bytes) -> CardVersion:
        try:
            written = clock.format_time(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        except OSError:
            written = ""
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        return CardVersion(server, number, written, digest, str(path))
