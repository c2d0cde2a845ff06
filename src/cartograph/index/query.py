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
