"""Rift end to end over arrays: group tools, score margins, diagnose, grade, summarise.

:func:`analyze` is pure apart from the ``embed`` callable it is given (for the synthetic
queries); it reads no files. Methods:

- ``rift``: layer 1 agglomerative clusters, layer 2 margins (risk by the smallest margin),
  layer 3 diagnosis. With ``use_margin=False`` it is the paper's Table 5 ablation: the same
  clusters, risk by cohesion only.
- ``cosine``: the Table 4 cosine baseline: components of the ``cos >= theta`` graph, risk by
  cohesion, no margins.
- ``jaccard``: the Table 4 lexical baseline: components of the card-token Jaccard ``> 0.25``
  graph, risk by mean pairwise Jaccard, no embeddings in the grouping.

Every method runs layer 3 so their reports read alike.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from cartograph.errors import UsageError
from cartograph.rift.baselines import DEFAULT_JACCARD, JaccardThresholds, jaccard_groups
from cartograph.rift.cluster import (
    DEFAULT_LINKAGE,
    DEFAULT_THETA,
    Linkage,
    agglomerative_clusters,
    check_theta,
    threshold_groups,
)
from cartograph.rift.diagnose import REGENERATE, diagnose, tokens
from cartograph.rift.margin import (
    CohesionThresholds,
    MarginScope,
    MarginThresholds,
    Risk,
    ToolMargin,
    margins,
)
from cartograph.rift.queries import QueryOptions, synthetic_query
from cartograph.rift.report import ClusterReport, RiftReport, Summary

logger = logging.getLogger(__name__)

Method = Literal["rift", "cosine", "jaccard"]
METHODS: tuple[Method, ...] = ("rift", "cosine", "jaccard")
Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class RiftTool:
    """What Rift needs to know of one indexed tool (row ``i`` of the vector array)."""

    server: str
    tool: str
    summary: str
    text: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)

    def card_tokens(self) -> frozenset[str]:
        """Tokens for the Jaccard baseline: the tool's name and all of its card text."""
        return tokens(" ".join([self.tool.replace("_", " "), self.summary, self.text]))


@dataclass(frozen=True)
class RiftConfig:
    method: Method = "rift"
    theta: float = DEFAULT_THETA
    linkage: Linkage = DEFAULT_LINKAGE
    use_margin: bool = True
    margin_scope: MarginScope = "cluster"
    margin_thresholds: MarginThresholds = field(default_factory=MarginThresholds)
    cohesion_thresholds: CohesionThresholds = field(default_factory=CohesionThresholds)
    jaccard_threshold: float = DEFAULT_JACCARD
    jaccard_thresholds: JaccardThresholds = field(default_factory=JaccardThresholds)
    query_options: QueryOptions = field(default_factory=QueryOptions)

    def validate(self) -> None:
        if self.method not in METHODS:
            raise UsageError(f"unknown method {self.method!r}; use {', '.join(METHODS)}")
        check_theta(self.theta)
        if not 0.0 <= self.jaccard_threshold < 1.0:
            raise UsageError(f"jaccard threshold must be in [0, 1), got {self.jaccard_threshold}")

    @property
    def margins_on(self) -> bool:
        return self.method == "rift" and self.use_margin

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method}
        if self.method == "jaccard":
            out["jaccard_threshold"] = self.jaccard_threshold
        else:
            out["theta"] = self.theta
        if self.method == "rift":
            out["linkage"] = self.linkage
            out["margin"] = self.use_margin
        if self.margins_on:
            out["margin_scope"] = self.margin_scope
            out["margin_high"] = self.margin_thresholds.high
            out["margin_medium"] = self.margin_thresholds.medium
        elif self.method == "jaccard":
            out["jaccard_high"] = self.jaccard_thresholds.high
            out["jaccard_medium"] = self.jaccard_thresholds.medium
        else:
            out["cohesion_high"] = self.cohesion_thresholds.high
            out["cohesion_medium"] = self.cohesion_thresholds.medium
        return out


def _labels(tools: Sequence[RiftTool], members: Sequence[int]) -> list[str]:
    """Tool names, or ``server/tool`` for every member when two members share a name."""
    names = [tools[i].tool for i in members]
    if len(set(names)) == len(names):
        return names
    return [f"{tools[i].server}/{tools[i].tool}" for i in members]


def _cohesion(vectors: np.ndarray, members: Sequence[int]) -> float:
    from cartograph.rift.cluster import cohesion

    return cohesion(vectors, tuple(members))


def _groups(
    tools: Sequence[RiftTool], vectors: np.ndarray, cfg: RiftConfig
) -> list[tuple[tuple[int, ...], float, float | None]]:
    """(members, cohesion, mean pairwise Jaccard or None) per group of the chosen method."""
    if cfg.method == "rift":
        return [
            (c.members, c.cohesion, None)
            for c in agglomerative_clusters(vectors, cfg.theta, method=cfg.linkage)
        ]
    if cfg.method == "cosine":
        return [(c.members, c.cohesion, None) for c in threshold_groups(vectors, cfg.theta)]
    groups = jaccard_groups([t.card_tokens() for t in tools], cfg.jaccard_threshold)
    return [(m, _cohesion(vectors, m), jac) for m, jac in groups]


def analyze(
    tools: Sequence[RiftTool],
    vectors: np.ndarray,
    embed: Embed | None,
    config: RiftConfig | None = None,
) -> RiftReport:
    """Run the configured method over ``tools`` (row ``i`` of ``vectors`` is ``tools[i]``)."""
    cfg = config or RiftConfig()
    cfg.validate()
    if len(tools) != vectors.shape[0]:
        raise UsageError(f"{len(tools)} tools but {vectors.shape[0]} vectors")
    if cfg.margins_on and embed is None:
        raise UsageError("margin analysis needs an embedder; pass one or use --no-margin")
    t0 = time.perf_counter()
    groups = _groups(tools, vectors, cfg)
    t_group = time.perf_counter() - t0

    # layer 2: one batch of synthetic queries for every clustered tool
    t1 = time.perf_counter()
    query_text: dict[int, str] = {}
    tool_margins: dict[int, ToolMargin] = {}
    t_embed = 0.0
    if cfg.margins_on and groups:
        clustered = sorted({i for members, _, _ in groups for i in members})
        for i in clustered:
            query_text[i] = synthetic_query(tools[i].tool, tools[i].input_schema, cfg.query_options)
        te = time.perf_counter()
        assert embed is not None
        qv = _embed_sorted(embed, [query_text[i] for i in clustered])
        t_embed = time.perf_counter() - te
        row_of = {i: k for k, i in enumerate(clustered)}
        for members, _, _ in groups:
            q = qv[[row_of[i] for i in members]]
            for m in margins(q, vectors, members, cfg.margin_scope):
                tool_margins[m.index] = m
    t_margin = time.perf_counter() - t1 - t_embed

    t2 = time.perf_counter()
    clusters: list[ClusterReport] = []
    for members, coh, jac in groups:
        labels = _labels(tools, members)
        diag = diagnose(
            labels, [tools[i].summary for i in members], [tools[i].input_schema for i in members]
        )
        margin_min: float | None = None
        if cfg.margins_on:
            margin_min = min(tool_margins[i].margin for i in members)
            risk = cfg.margin_thresholds.grade(margin_min)
        elif cfg.method == "jaccard":
            risk = cfg.jaccard_thresholds.grade(jac if jac is not None else 0.0)
        else:
            risk = cfg.cohesion_thresholds.grade(coh)
        clusters.append(
            ClusterReport(
                members=[(tools[i].server, tools[i].tool) for i in members],
                cohesion=round(coh, 4),
                margin_min=None if margin_min is None else round(margin_min, 4),
                risk=risk.value,
                shared_tokens=list(diag.shared),
                distinct_tokens={k: list(v) for k, v in diag.distinct.items()},
                diagnosis=diag.diagnosis,
                regenerate=list(diag.regenerate),
                jaccard=None if jac is None else round(jac, 4),
                queries={lab: query_text[i] for lab, i in zip(labels, members, strict=True)}
                if cfg.margins_on
                else None,
                margins={
                    lab: round(tool_margins[i].margin, 4)
                    for lab, i in zip(labels, members, strict=True)
                }
                if cfg.margins_on
                else None,
                rivals={
                    lab: _label_of(tools, labels, members, tool_margins[i].rival)
                    for lab, i in zip(labels, members, strict=True)
                }
                if cfg.margins_on
                else None,
            )
        )
    clusters.sort(
        key=lambda c: (
            -Risk(c.risk).rank,
            c.margin_min if c.margin_min is not None else -c.cohesion,
            -len(c.members),
        )
    )
    t_diag = time.perf_counter() - t2
    summary = Summary.of(clusters)
    timing = {
        "group_s": round(t_group, 4),
        "query_embed_s": round(t_embed, 4),
        "margin_s": round(t_margin, 4),
        "diagnose_s": round(t_diag, 4),
    }
    logger.info("rift: %s clusters, timing %s", summary.clusters, timing)
    return RiftReport(
        summary=summary,
        clusters=clusters,
        config=cfg.to_json(),
        tools_total=len(tools),
        timing=timing,
    )


def _embed_sorted(embed: Embed, texts: list[str]) -> np.ndarray:
    """Embed in length order (batches pad to their longest text), rows back in input order."""
    order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
    vecs = np.asarray(embed([texts[k] for k in order]), dtype=np.float32)
    out = np.empty_like(vecs)
    out[order] = vecs
    return out


def _label_of(
    tools: Sequence[RiftTool], labels: list[str], members: Sequence[int], index: int
) -> str:
    """The rival's label: its cluster label when it is a member, else ``server/tool``."""
    for lab, i in zip(labels, members, strict=True):
        if i == index:
            return lab
    return f"{tools[index].server}/{tools[index].tool}"


def regenerate_targets(report: RiftReport) -> dict[str, set[str]]:
    """Tools diagnosed REGENERATE, by server."""
    out: dict[str, set[str]] = {}
    for cluster in report.clusters:
        if cluster.diagnosis != REGENERATE:
            continue
        labels = _report_labels(cluster)
        for (server, tool), label in zip(cluster.members, labels, strict=True):
            if label in cluster.regenerate:
                out.setdefault(server, set()).add(tool)
    return out


def _report_labels(cluster: ClusterReport) -> list[str]:
    names = [t for _, t in cluster.members]
    if len(set(names)) == len(names):
        return names
    return [f"{s}/{t}" for s, t in cluster.members]
