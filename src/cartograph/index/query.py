"""Query analysis: split a multi-step task into the steps it names (pure, no I/O).

Agents often hand discover a whole task ("find X, chart it, and save it as a PDF"). Each step
needs a different tool; retrieving for each step as well as for the whole task lets one tool
per step reach the top k. Splitting is deliberately simple: sentence ends, semicolons, commas
and "and/then" joints, keeping steps that still carry at least two content words.
"""

from __future__ import annotations

import re

from cartograph.index.lexical import tokenize

MAX_STEPS = 4
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|;\s*|,\s*(?:and\s+|then\s+)?|\s+(?:and\s+then|then|and\s+also|and)\s+"
    r"|[。；！？，]",
    re.IGNORECASE,
)


_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\\S+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def embedding_text(query: str) -> str:
    """``query`` as the embedder should read it: file paths become words.

    A path such as ``/root/markdown/report.md`` is noise to a sentence embedder (a dozen word
    pieces of folder names) while it says plainly that the task touches files. It is read as
    ``file report.md`` (last part has an extension) or ``folder music`` (no extension).
    """

    def words(match: re.Match[str]) -> str:
        path = match.group(0).rstrip("/\\")
        last = re.split(r"[/\\]", path)[-1]
        return f"file {last}" if _EXTENSION.search(last) else f"folder {last}"

    return _PATH.sub(words, query)


def step_spans(query: str, steps: list[str]) -> list[tuple[int, int]] | None:
    """Where each step lies in ``query`` (character ranges), or None if one cannot be found."""
    spans: list[tuple[int, int]] = []
    at = 0
    for step in steps:
        first, last = step.split()[0], step.split()[-1]
        lo = query.find(first, at)
        hi = query.find(last, max(lo, 0) + len(step) - len(last)) if lo >= 0 else -1
        if lo < 0 or hi < 0:
            return None
        spans.append((lo, hi + len(last)))
        at = hi + len(last)
    return spans


def split_steps(query: str, max_steps: int = MAX_STEPS) -> list[str]:
    """The steps of ``query``; empty when it names only one (then the whole query suffices)."""
    parts = [p.strip(" .;:!?") for p in _SPLIT.split(query) if p and p.strip(" .;:!?")]
    steps: list[str] = []
    pending = ""
    for part in parts:
        text = f"{pending} {part}".strip() if pending else part
        if len(tokenize(text)) >= 2:
            steps.append(text)
            pending = ""
        else:
            pending = text
    if pending and steps:
        steps[-1] = f"{steps[-1]} {pending}"
    if len(steps) < 2:
        return []
    return steps[:max_steps]
