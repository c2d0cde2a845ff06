"""The no-verbatim guard of the bootstrap generator: no agent-facing field may hold
:data:`MAX_SHARED_RUN` consecutive words of the server's publisher texts.

Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cartograph.generate.bootstrap.rewrite import break_runs
from cartograph.generate.text import tokenise

MAX_SHARED_RUN = 8
"""No field may hold this many consecutive words of the publisher's texts (so at most 7)."""


def guarded(grams: frozenset[tuple[str, ...]], *candidates: Callable[[], str]) -> str:
    """The first non-empty candidate that shares no run with the publisher's texts, else the
    last one's text with its runs broken (or ``""``)."""
    text = ""
    for build in candidates:
        text = build()
        if text and not shares_run(grams, text):
            return text
    return break_runs(text, grams, MAX_SHARED_RUN) or "" if text else ""


def publisher_grams(texts: Sequence[str]) -> frozenset[tuple[str, ...]]:
    """Every run of :data:`MAX_SHARED_RUN` words in the publisher's texts."""
    n = MAX_SHARED_RUN
    sources = [tokenise(t) for t in texts]
    return frozenset(tuple(s[i : i + n]) for s in sources for i in range(len(s) - n + 1))


def shares_run(grams: frozenset[tuple[str, ...]], text: str) -> bool:
    """Whether ``text`` contains one of the publisher's word runs."""
    n = MAX_SHARED_RUN
    words = tokenise(text)
    return any(tuple(words[i : i + n]) in grams for i in range(len(words) - n + 1))
