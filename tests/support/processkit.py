"""Process hygiene helpers for tests: descendants and open file descriptors, read from /proc."""

from __future__ import annotations

import os


def open_fds() -> int:
    """How many file descriptors this process holds open."""
    return len(os.listdir("/proc/self/fd"))


def child_pids(pid: int | None = None) -> set[int]:
    """Every live or zombie descendant of ``pid`` (default: this process), read from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces; fields after it are fixed
        fields = stat.rsplit(")", 1)[1].split()
        parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = [os.getpid() if pid is None else pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                found.add(child)
                frontier.append(child)
    return found
