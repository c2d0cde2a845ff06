"""The Rift report: pydantic models of the JSON that ``cartograph rift --json`` prints.

Shape (extra fields after the required ones)::

    {"summary": {"clusters", "high", "medium", "low", "tools_in_clusters", "within_server",
                 "cross_server", "negative_margins"},
     "clusters": [{"members": [[server, tool], ...], "cohesion", "margin_min", "risk",
                   "shared_tokens", "distinct_tokens": {label: [...]}, "diagnosis",
                   "regenerate", "jaccard", "queries", "margins", "rivals"}],
     "config": {...}, "tools_total": n, "timing": {...}}

With an accepted file (:mod:`cartograph.rift.accepted`) each cluster carries ``open_risk``,
the summary ``open_high`` / ``open_medium``, and the report an ``accepted`` block.

``negative_margins`` counts clustered tools whose own synthetic query ranks a cluster mate
first (null without margins). A member's *label* (the key of ``distinct_tokens``, ``queries``,
``margins``, ``rivals``) is its tool name, or ``server/tool`` for every member when two members
of the cluster share a tool name.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from cartograph.errors import UsageError
from cartograph.rift.margin import RiskLevel

FailOn = Literal["high", "medium", "never"]
FAIL_ON: tuple[FailOn, ...] = get_args(FailOn)
_RANK: dict[RiskLevel, int] = {"HIGH": 2, "MEDIUM": 1, "LOW": 0}


def member_labels(members: list[tuple[str, str]]) -> list[str]:
    """Each member's label: its tool name, or ``server/tool`` for every member when two members
    share a tool name."""
    names = [t for _, t in members]
    if len(set(names)) == len(names):
        return names
    return [f"{s}/{t}" for s, t in members]


class ClusterReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    members: list[tuple[str, str]]
    cohesion: float
    margin_min: float | None
    risk: RiskLevel
    shared_tokens: list[str]
    distinct_tokens: dict[str, list[str]]
    diagnosis: str
    regenerate: list[str] = []
    jaccard: float | None = None
    queries: dict[str, str] | None = None
    margins: dict[str, float | None] | None = None
    rivals: dict[str, str | None] | None = None
    substitutes: list[list[str]] = []
    open_risk: RiskLevel | None = None
    """With an accepted file: the highest risk among the pairs it does not cover (the gate
    reads this instead of ``risk``); ``None`` without one."""

    @property
    def gate_risk(self) -> RiskLevel:
        return self.risk if self.open_risk is None else self.open_risk

    @property
    def servers(self) -> set[str]:
        return {s for s, _ in self.members}


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    clusters: int
    high: int
    medium: int
    low: int
    tools_in_clusters: int
    within_server: int
    cross_server: int
    negative_margins: int | None = None
    substitute_pairs: int = 0
    open_high: int | None = None
    open_medium: int | None = None

    @classmethod
    def of(cls, clusters: list[ClusterReport]) -> Summary:
        risks = [c.risk for c in clusters]
        within = sum(1 for c in clusters if len(c.servers) == 1)
        with_margins = [c for c in clusters if c.margins is not None]
        negative = sum(
            1 for c in with_margins for m in (c.margins or {}).values() if m is not None and m < 0
        )
        return cls(
            clusters=len(clusters),
            high=risks.count("HIGH"),
            medium=risks.count("MEDIUM"),
            low=risks.count("LOW"),
            tools_in_clusters=sum(len(c.members) for c in clusters),
            within_server=within,
            cross_server=len(clusters) - within,
            negative_margins=negative if with_margins else None,
            substitute_pairs=sum(len(c.substitutes) for c in clusters),
            **_open_counts(clusters),
        )


def _open_counts(clusters: list[ClusterReport]) -> dict[str, int]:
    """HIGH and MEDIUM clusters still open after an accepted file (nothing without one)."""
    if not any(c.open_risk is not None for c in clusters):
        return {}
    gates = [c.gate_risk for c in clusters]
    return {"open_high": gates.count("HIGH"), "open_medium": gates.count("MEDIUM")}


class RiftReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    summary: Summary
    clusters: list[ClusterReport]
    config: dict[str, Any] = {}
    tools_total: int = 0
    timing: dict[str, float] = {}
    accepted: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def fails(self, fail_on: FailOn) -> bool:
        """True when a cluster at or above ``fail_on`` (high | medium | never) exists; with an
        accepted file applied, only what it does not cover counts (``open_risk``)."""
        if fail_on not in FAIL_ON:
            raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
        if fail_on == "never":
            return False
        floor = {"high": 2, "medium": 1}[fail_on]
        return any(_RANK[c.gate_risk] >= floor for c in self.clusters)
