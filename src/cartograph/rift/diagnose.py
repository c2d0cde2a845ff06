"""Rift layer 3: why a cluster's cards blur together, and what to make explicit.

Tokens of a card summary: lowercased ``[a-z0-9]+`` words of two or more characters, English stop
words and MCP filler words ("tool", "mcp", ...) removed. ``shared`` is the intersection of the
members' tokens (sorted); ``distinct(t)`` is ``t``'s tokens minus every other member's, in the
order they appear in its summary. When a member has
no distinct token its card cannot be told apart by wording: the diagnosis is ``REGENERATE``.
Otherwise a one-line suggestion names, per member, what to make explicit: an argument only it
takes (from the signed input schema) or else its distinct words. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REGENERATE = "REGENERATE"

_STOP_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc few for from further had has have having here how if in into is it its itself just may
    might more most much must no nor not of off on once one only or other our out over own per
    same shall should so some such than that the their them then there these they this those
    through to too under until up upon use used uses using very via was we were what when where
    which while who whom why will with within without would you your yours
    tool tools mcp server servers given specified specific provided based e.g i.e
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9]+")


def ordered_tokens(text: str) -> list[str]:
    """Content words of ``text`` (see module docstring), first occurrence order, no repeats."""
    seen: dict[str, None] = {}
    for t in _TOKEN.findall(text.lower()):
        if len(t) >= 2 and t not in STOP_WORDS:
            seen.setdefault(t, None)
    return list(seen)


def tokens(text: str) -> frozenset[str]:
    """Content words of ``text`` as a set."""
    return frozenset(ordered_tokens(text))


@dataclass(frozen=True)
class Diagnosis:
    shared: tuple[str, ...]
    distinct: dict[str, tuple[str, ...]]
    regenerate: tuple[str, ...]
    diagnosis: str


def _arg_names(schema: Mapping[str, Any] | None) -> set[str]:
    props = (schema or {}).get("properties")
    return {str(p) for p in props} if isinstance(props, Mapping) else set()


def diagnose(
    labels: Sequence[str],
    summaries: Sequence[str],
    schemas: Sequence[Mapping[str, Any] | None],
    *,
    max_words: int = 3,
) -> Diagnosis:
    """Shared and distinct summary tokens of one cluster, and the diagnosis line.

    ``labels`` name the members in the report (tool names, or ``server/tool`` when two members
    share a tool name); all three sequences are in member order.
    """
    ordered = [ordered_tokens(s) for s in summaries]
    # how many members use each token: shared = used by all, distinct = used by this one only
    # (linear in the cluster's text, so a 2,000-tool baseline group costs no more than a pair)
    users = Counter(t for o in ordered for t in o)
    shared = frozenset(t for t, n in users.items() if n == len(ordered)) if ordered else frozenset()
    distinct: dict[str, tuple[str, ...]] = {}
    for k, label in enumerate(labels):
        distinct[label] = tuple(t for t in ordered[k] if users[t] == 1)
    regenerate = tuple(label for label in labels if not distinct[label])
    if regenerate:
        return Diagnosis(tuple(sorted(shared)), distinct, regenerate, REGENERATE)
    args = [_arg_names(s) for s in schemas]
    arg_users = Counter(a for names in args for a in names)
    parts = []
    for k, label in enumerate(labels):
        own_args = sorted(a for a in args[k] if arg_users[a] == 1)
        if own_args:
            parts.append(f"{label}: say it takes {', '.join(own_args[:max_words])}")
        else:
            parts.append(f"{label}: lead with '{' '.join(distinct[label][:max_words])}'")
    line = "Make explicit what tells them apart -- " + "; ".join(parts)
    return Diagnosis(tuple(sorted(shared)), distinct, (), line)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)
