"""Reviewed confusions: pairs an operator accepted, so that the gate fails on new ones only.

A catalog of a hundred servers has hundreds of sibling families (list vs get, names vs values)
that Rift rightly grades HIGH; a gate that is red until every one is rewritten gets switched off.
An *accepted file* records the confusable pairs an operator reviewed, each with its risk at the
time and a reason; with it, ``cartograph rift --accepted FILE`` fails only on what is new or
worse. A pair is the unordered ``server/tool`` pair of a member and its rival (the tool its own
synthetic query ranks closest), graded by that member's margin, or, for methods without
margins, every pair of a cluster graded by the cluster's risk. A pair is *covered* when the file
holds it at the same risk or higher: a MEDIUM pair that turns HIGH is open again. File shape::

    {"cartograph_rift_accepted": 1,
     "pairs": [{"tools": ["git/git_diff", "git/git_diff_staged"], "risk": "HIGH",
                "reason": "different jobs, both cards say which"}]}

Pure functions over reports and JSON values, and :func:`load_accepted` / :func:`write_accepted`
for the file itself (written atomically).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from cartograph.errors import ConfigError
from cartograph.files import atomic_write
from cartograph.rift.margin import MarginThresholds, Risk, RiskLevel
from cartograph.rift.report import ClusterReport, RiftReport, Summary

FORMAT_KEY = "cartograph_rift_accepted"
FORMAT_VERSION = 1
_RANK: dict[str, int] = {"HIGH": 2, "MEDIUM": 1, "LOW": 0}

Pair = tuple[str, str]
"""Two ``server/tool`` ids, sorted."""


@dataclass(frozen=True)
class AcceptedPair:
    tools: Pair
    risk: RiskLevel
    reason: str = ""


@dataclass(frozen=True)
class AcceptedSet:
    """The accepted file's pairs by key (``source`` names the file in messages)."""

    pairs: Mapping[Pair, AcceptedPair]
    source: str = "accepted file"

    def covers(self, pair: Pair, risk: RiskLevel) -> bool:
        held = self.pairs.get(pair)
        return held is not None and _RANK[held.risk] >= _RANK[risk]


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def _ids_by_label(cluster: ClusterReport) -> dict[str, str]:
    """Member label (tool name, or ``server/tool`` when two share a name) -> ``server/tool``."""
    names = [tool for _, tool in cluster.members]
    unique = len(set(names)) == len(names)
    return {(tool if unique else f"{srv}/{tool}"): f"{srv}/{tool}" for srv, tool in cluster.members}


def risk_pairs(cluster: ClusterReport, thresholds: MarginThresholds) -> Iterator[tuple[Pair, Risk]]:
    """The cluster's confusable pairs at MEDIUM or HIGH, each with its risk (a pair met from both
    sides comes once per side; callers keep the higher)."""
    if cluster.margins is None:
        risk = Risk(cluster.risk)
        if risk is not Risk.LOW:
            ids = [f"{s}/{t}" for s, t in cluster.members]
            for a, b in combinations(ids, 2):
                yield _pair(a, b), risk
        return
    ids = _ids_by_label(cluster)
    rivals = cluster.rivals or {}
    for label, margin in cluster.margins.items():
        rival = rivals.get(label)
        if margin is None or rival is None:
            continue
        risk = thresholds.grade(margin)
        if risk is not Risk.LOW:
            yield _pair(ids[label], ids[rival]), risk


def _thresholds(report: RiftReport) -> MarginThresholds:
    cfg = report.config
    return MarginThresholds(
        high=float(cfg.get("margin_high", 0.10)), medium=float(cfg.get("margin_medium", 0.20))
    )


def report_pairs(report: RiftReport) -> dict[Pair, Risk]:
    """Every MEDIUM or HIGH pair of the report with its highest risk."""
    out: dict[Pair, Risk] = {}
    thresholds = _thresholds(report)
    for cluster in report.clusters:
        for pair, risk in risk_pairs(cluster, thresholds):
            if pair not in out or risk.rank > out[pair].rank:
                out[pair] = risk
    return out


def _open_risk(cluster: ClusterReport, accepted: AcceptedSet, th: MarginThresholds) -> RiskLevel:
    """The highest risk among the cluster's pairs that ``accepted`` does not cover."""
    open_ranks = [r.rank for p, r in risk_pairs(cluster, th) if not accepted.covers(p, r.value)]
    return ("LOW", "MEDIUM", "HIGH")[max(open_ranks, default=0)]  # type: ignore[return-value]


def apply_accepted(report: RiftReport, accepted: AcceptedSet) -> RiftReport:
    """The report with each cluster's ``open_risk`` (what the gate reads) and the summary's
    open counts; ``accepted`` in the report says how many pairs the file covered and which of
    its pairs are no longer risky (stale: fixed since, or the catalog changed)."""
    th = _thresholds(report)
    clusters = [
        c.model_copy(update={"open_risk": _open_risk(c, accepted, th)}) for c in report.clusters
    ]
    current = report_pairs(report)
    covered = sum(1 for p, r in current.items() if accepted.covers(p, r.value))
    stale = sorted(p for p in accepted.pairs if p not in current)
    info = {
        "file": accepted.source,
        "pairs": len(accepted.pairs),
        "covered": covered,
        "open": len(current) - covered,
        "stale": [list(p) for p in stale],
    }
    return report.model_copy(
        update={"clusters": clusters, "summary": Summary.of(clusters), "accepted": info}
    )


def accepted_json(report: RiftReport, previous: AcceptedSet | None = None) -> dict[str, Any]:
    """An accepted file holding every current MEDIUM or HIGH pair; reasons already written in
    ``previous`` are kept, pairs no longer risky are dropped."""
    old = previous.pairs if previous else {}
    rows = [
        {"tools": list(p), "risk": r.value, "reason": old[p].reason if p in old else ""}
        for p, r in sorted(report_pairs(report).items())
    ]
    return {FORMAT_KEY: FORMAT_VERSION, "pairs": rows}


def parse_accepted(data: Any, source: str) -> AcceptedSet:
    """Validate an accepted file's JSON; every problem names the file and the entry."""
    if not isinstance(data, dict) or data.get(FORMAT_KEY) != FORMAT_VERSION:
        raise ConfigError(
            f"{source}: not a Rift accepted file (expected {{{FORMAT_KEY!r}: {FORMAT_VERSION}, "
            f"'pairs': [...]}}); write one with `cartograph rift --write-accepted {source}`"
        )
    rows = data.get("pairs")
    if not isinstance(rows, list):
        raise ConfigError(f"{source}: 'pairs' must be a list of accepted pairs")
    pairs: dict[Pair, AcceptedPair] = {}
    for k, row in enumerate(rows):
        entry = _parse_row(row, f"{source}: pairs[{k}]")
        pairs[entry.tools] = entry
    return AcceptedSet(pairs, source)


def _parse_row(row: Any, where: str) -> AcceptedPair:
    if not isinstance(row, dict):
        raise ConfigError(f"{where} must be an object with 'tools', 'risk' and 'reason'")
    tools = row.get("tools")
    if (
        not isinstance(tools, list)
        or len(tools) != 2
        or not all(isinstance(t, str) and "/" in t for t in tools)
        or tools[0] == tools[1]
    ):
        raise ConfigError(f"{where}.tools must be two different 'server/tool' names, got {tools!r}")
    risk = row.get("risk")
    if risk not in ("HIGH", "MEDIUM"):
        raise ConfigError(f"{where}.risk must be 'HIGH' or 'MEDIUM', got {risk!r}")
    reason = row.get("reason", "")
    if not isinstance(reason, str):
        raise ConfigError(f"{where}.reason must be a string")
    return AcceptedPair(_pair(tools[0], tools[1]), risk, reason)


def load_accepted(path: Path) -> AcceptedSet:
    """Read and validate an accepted file (a missing or unreadable one is a ConfigError)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such accepted file; create it with `cartograph rift --write-accepted "
            f"{path}`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the accepted file: {exc}") from exc
    return parse_accepted(data, str(path))


def write_accepted(path: Path, report: RiftReport, previous: AcceptedSet | None) -> AcceptedSet:
    """Write every current MEDIUM or HIGH pair to ``path`` (reasons of ``previous`` kept) and
    return what was written."""
    data = accepted_json(report, previous)
    atomic_write(path, json.dumps(data, indent=2) + "\n")
    return parse_accepted(data, str(path))
