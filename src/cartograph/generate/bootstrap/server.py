"""Server-level text for the bootstrap generator: whether a tool reads or writes, and the
server's capability text (the product it fronts, what its tools work with, how many read and
how many change data, example tasks, and what its own instructions say it is for), written as
sentences. The product and vendor come from :mod:`cartograph.generate.bootstrap.identity`.

Pure functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.identity import Product
from cartograph.generate.bootstrap.lexicon import domains_for
from cartograph.generate.text import STOPWORDS, wordset

READ_VERBS = wordset(
    """get list search find query read fetch lookup describe check validate analyze analyse
    calculate compute count compare diff summarize translate recommend extract parse render
    screenshot navigate geocode predict track monitor export download load transcribe"""
)
WRITE_VERBS = wordset(
    """create add insert update edit set delete remove send post write save generate convert
    run execute start stop upload move copy merge close publish schedule cancel invite assign
    archive comment subscribe resolve deploy install import click play"""
)


def tool_mode(tool: dict[str, Any], verb: str | None) -> str:
    """``read``, ``destructive``, ``write`` or ``unknown``: annotations first, then the verb."""
    ann = tool.get("annotations")
    if isinstance(ann, dict):
        if ann.get("readOnlyHint") is True:
            return "read"
        if ann.get("destructiveHint") is True:
            return "destructive"
        if ann.get("readOnlyHint") is False:
            return "write"
    if verb in READ_VERBS:
        return "read"
    if verb in {"delete", "remove"}:
        return "destructive"
    if verb in WRITE_VERBS:
        return "write"
    return "unknown"


@dataclass(frozen=True)
class ToolFacts:
    """What the capability text needs from each tool (computed by the tool composer)."""

    verb: str | None
    objects: tuple[str, ...]
    mode: str
    words: tuple[str, ...]


def capability_text(
    product: Product,
    facts: Sequence[ToolFacts],
    sample_tasks: Sequence[str],
    about: str = "",
    only_tool: str = "",
) -> tuple[str, str, list[str]]:
    """(summary, usage, domains) for the whole server. ``about``: a sentence on what the
    server's own instructions say it is for (already restated); ``only_tool``: the summary of
    a server's one tool."""
    domains = domains_for([list(f.words) for f in facts], product.words)
    n = len(facts)
    if n == 1 and only_tool:
        summary = f"{product.named} offers one tool: {only_tool}"
    elif n <= 4:
        phrases = [_phrase(f) for f in facts]
        summary = f"{product.named} offers {_count(n, 'tool')}: {_and(phrases)}."
    else:
        summary = f"{product.named} offers {_count(n, 'tool')}{_works_with(facts)}."
    usage = f"Use it for tasks in {product.display}. {_modes(facts)}"
    if about:
        usage += f" {about}"
    if sample_tasks:
        usage += " For example: " + "; ".join(t.rstrip(".") for t in sample_tasks[:3]) + "."
    return summary, usage, domains


def _phrase(f: ToolFacts) -> str:
    words = [f.verb or "use", *f.objects]
    return " ".join(words)


def _modes(facts: Sequence[ToolFacts]) -> str:
    """How many tools only read and how many change data, as a sentence."""
    modes = Counter(f.mode for f in facts)
    n = len(facts)
    reads = modes.get("read", 0)
    writes = modes.get("write", 0) + modes.get("destructive", 0)
    deletes = modes.get("destructive", 0)
    if not reads and not writes:
        return ""
    if n == 1:
        return "Its tool only reads data." if reads else "Its tool changes data."
    every = "Both" if n == 2 else f"All {n}"
    if reads == n:
        return f"{every} tools only read data."
    if writes == n:
        text = f"{every} tools change data"
    else:
        text = f"Of its {n} tools, {reads} only read data and {writes} change it"
    if deletes:
        text += f" ({deletes} can delete data)"
    return text + "."


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int, noun: str) -> str:
    return f"{'one' if n == 1 else n} {noun}{'' if n == 1 else 's'}"


def _works_with(facts: Sequence[ToolFacts]) -> str:
    """`` that work with records, tables and bases``: the objects most tools act on."""
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for f in facts:
        words = [w for w in f.objects if w not in STOPWORDS]
        if not words:
            continue
        phrase = " ".join(words[-2:])
        key = phrase.rstrip("s")
        counts[key] += 1
        forms.setdefault(key, Counter())[phrase] += 1
    if not counts:
        return ""
    top = sorted(counts, key=lambda k: (-counts[k], k))[:3]
    shown = [max(forms[k], key=lambda f: (forms[k][f], f.endswith("s"), f)) for k in top]
    return " that work with " + _and(shown)
