"""Substitutes: tools on different servers that do the same job, reported apart from confusions.

Picking ``excel-go/excel_format_range`` when the task named ``excel/format_range`` is not a
mistake an operator must fix: either tool does the job. Rift reports such pairs in their own
section and leaves them out of the margins that grade a cluster (a tool's rivals are its cluster
mates that are *not* its substitutes).

The rule (pure, no I/O), for two tools ``a`` and ``b`` of one cluster:

1. they are on different servers;
2. their *name words* overlap: the words of the tool name with the words of its own server's
   name removed (``excel-go/excel_format_range`` -> ``format range``), overlap coefficient
   ``|A & B| / min(|A|, |B|) >= name_overlap`` (0.5);
3. their *argument words* overlap the same way (``>= schema_overlap``, 0.5; two tools without
   arguments agree, one without and one with do not);
4. their card vectors' cosine is at least ``min_cosine`` (0.60);

or, whatever their arguments and cards say: the two tools have the same name and their servers'
names share a word (``git/git_add`` and ``git-cyanheads/git_add``, ``gitlab/push_files`` and
``gitlab-zereight/push_files``): two servers for one product (or one vendor's family) exposing
the same tool name do the same job, though their publishers name its arguments differently, or
one recorded none (``same_name_family``).

The constants come from a grid on the fleet dev set's cross-server ``acceptable`` labels (39
pairs; ``benchmarks/rift_tune.py`` prints the check, docs/rift.md the grid). Precision first: a
pair wrongly called substitutes hides a real confusion from the gate, a missed substitute only
leaves a cluster graded as before. The argument and cosine rule alone: precision 0.75 (6 of 8
judged pairs), recall 0.15 (round 3); with the same-name clause, on round 10's cards: 1.0 (9 of
9) and 0.23;
without the name condition recall rises to 0.28 but precision falls to 0.44 (aws-pricing
``get_pricing`` ~ aws-billing ``list-pricing-rules``). Most labelled substitutes have card
cosines below 0.6 (the same job described by different publishers): they share no cluster and
need no rule. The same-name clause flags 20 pairs of the fleet catalog (git / git-cyanheads 9,
gitlab / gitlab-zereight 9, brave-search / brave-search-legacy 2); the two the dev set judges
are both labelled acceptable (docs/rift.md, round 10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cartograph.rift.queries import words


@dataclass(frozen=True)
class SubstituteRule:
    name_overlap: float = 0.5
    schema_overlap: float = 0.5
    min_cosine: float = 0.60
    same_name_family: bool = True
    """Also call two tools of the same name substitutes when their servers' names share a word."""


def name_words(server: str, tool: str) -> frozenset[str]:
    """The tool name's words without its server's own name words."""
    own = set(words(server))
    all_words = [w for w in words(tool) if not w.isdigit()]
    kept = frozenset(w for w in all_words if w not in own)
    return kept or frozenset(all_words)


def argument_words(schema: Mapping[str, Any] | None) -> frozenset[str]:
    props = (schema or {}).get("properties")
    if not isinstance(props, Mapping):
        return frozenset()
    return frozenset(w for p in props for w in words(str(p)))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap coefficient; two empty sets agree (1.0), one empty set does not (0.0)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def is_substitute(
    a: tuple[str, str, Mapping[str, Any] | None],
    b: tuple[str, str, Mapping[str, Any] | None],
    cosine: float,
    rule: SubstituteRule | None = None,
) -> bool:
    """Whether ``(server, tool, input_schema)`` ``a`` and ``b`` do the same job (module rule)."""
    rule = rule or SubstituteRule()
    if a[0] == b[0]:
        return False
    if rule.same_name_family and same_name_in_family(a[:2], b[:2]):
        return True
    if cosine < rule.min_cosine:
        return False
    if overlap(name_words(a[0], a[1]), name_words(b[0], b[1])) < rule.name_overlap:
        return False
    return overlap(argument_words(a[2]), argument_words(b[2])) >= rule.schema_overlap


def same_name_in_family(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether ``(server, tool)`` ``a`` and ``b`` are one tool name on two servers whose names
    share a word (``git`` and ``git-cyanheads``)."""
    if a[1].lower() != b[1].lower():
        return False
    return bool(set(words(a[0])) & set(words(b[0])))


def substitute_pairs(
    members: Sequence[int],
    ids: Sequence[tuple[str, str, Mapping[str, Any] | None]],
    vectors: np.ndarray,
    rule: SubstituteRule | None = None,
) -> set[tuple[int, int]]:
    """Pairs ``(i, j)`` (row indices, both orders) of one cluster that are substitutes."""
    servers = {ids[i][0] for i in members}
    if len(servers) < 2:
        return set()
    idx = np.asarray(members, dtype=np.int64)
    sims = np.asarray(vectors[idx], dtype=np.float64) @ np.asarray(vectors[idx], np.float64).T
    out: set[tuple[int, int]] = set()
    for x, i in enumerate(members):
        for y in range(x + 1, len(members)):
            j = members[y]
            if is_substitute(ids[i], ids[j], float(sims[x, y]), rule):
                out.add((i, j))
                out.add((j, i))
    return out
