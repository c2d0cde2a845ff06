"""Rift end to end over arrays: group tools, score margins, diagnose, grade, summarise.

:func:`analyze` is pure apart from the ``embed`` callable it is given (for the synthetic
queries); it reads no files. Methods:

- ``rift``: layer 1 groups (``grouping="confusion"``, the default: what discover's ranking
  mixes up over the whole catalog, :mod:`.confusion`; ``"cosine"``: the paper's agglomerative
  clusters of card vectors, :mod:`.cluster`), layer 2 margins (risk by the smallest margin),
  layer 3 diagnosis. With ``use_margin=False`` it is the paper's Table 5 ablation: the same
  groups, no HIGH or MEDIUM label.
- ``cosine``: the Table 4 cosine baseline: components of the ``cos >= theta`` graph, risk by
  cohesion, no margins.
- ``jaccard``: the Table 4 lexical baseline: components of the card-token Jaccard ``> 0.25``
  graph, risk by mean pairwise Jaccard, no embeddings in the grouping.

Every method runs layer 3 so their reports read alike.
"""

from __future__ import annotations

import logging
import math
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
    cohesion,
    threshold_groups,
)
from cartograph.rift.confusion import DEFAULT_CAP, ConfusionGraph, confusion_groups
from cartograph.rift.diagnose import diagnose, tokens
from cartograph.rift.margin import (
    CohesionThresholds,
    MarginScope,
    MarginThresholds,
    RankScores,
    Risk,
    ToolMargin,
    row_margin,
    score_rows,
)
from cartograph.rift.queries import QueryEmbedder, QueryOptions, QueryStyle, synthetic_query
from cartograph.rift.report import ClusterReport, RiftReport, Summary, member_labels
from cartograph.rift.substitutes import SubstituteRule, substitute_pairs

logger = logging.getLogger(__name__)

Method = Literal["rift", "cosine", "jaccard"]
METHODS: tuple[Method, ...] = ("rift", "cosine", "jaccard")
MarginScore = Literal["discover", "cosine"]
MARGIN_SCORES: tuple[MarginScore, ...] = ("discover", "cosine")
Grouping = Literal["confusion", "cosine"]
GROUPINGS: tuple[Grouping, ...] = ("confusion", "cosine")
Embed = Callable[[list[str]], np.ndarray]
# the paper's cut-offs for cosine clusters; for confusion groups HIGH is below 0.0 (the tool's
# own query ranks a rival first), chosen on tune data (docs/rift.md "Results, round 3")
DEFAULT_THRESHOLDS: dict[Grouping, MarginThresholds] = {
    "cosine": MarginThresholds(0.10, 0.20),
    "confusion": MarginThresholds(0.0, 0.20),
}


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
    grouping: Grouping = "confusion"
    theta: float = DEFAULT_THETA
    linkage: Linkage = DEFAULT_LINKAGE
    use_margin: bool = True
    margin_scope: MarginScope = "cluster"
    margin_score: MarginScore = "discover"
    substitutes: bool = True
    substitute_rule: SubstituteRule = field(default_factory=SubstituteRule)
    margin_thresholds: MarginThresholds | None = None
    """None: the grouping's default (:data:`DEFAULT_THRESHOLDS`)."""
    confusion_cap: float | None = DEFAULT_CAP
    graph_styles: tuple[QueryStyle, ...] | None = None
    """Query styles the confusion graph asks with; None: ``query_options.style`` alone."""
    cohesion_thresholds: CohesionThresholds = field(default_factory=CohesionThresholds)
    jaccard_threshold: float = DEFAULT_JACCARD
    jaccard_thresholds: JaccardThresholds = field(default_factory=JaccardThresholds)
    query_options: QueryOptions = field(default_factory=QueryOptions)

    def validate(self) -> None:
        if self.method not in METHODS:
            raise UsageError(f"unknown method {self.method!r}; use {', '.join(METHODS)}")
        check_theta(self.theta)
        if self.grouping not in GROUPINGS:
            raise UsageError(f"unknown grouping {self.grouping!r}; use confusion or cosine")
        if self.confusion_cap is not None:
            check_theta(self.confusion_cap)
        if self.margin_score not in MARGIN_SCORES:
            raise UsageError(f"unknown margin score {self.margin_score!r}; use discover or cosine")
        if not 0.0 <= self.jaccard_threshold < 1.0:
            raise UsageError(f"jaccard threshold must be in [0, 1), got {self.jaccard_threshold}")

    @property
    def margins_on(self) -> bool:
        return self.method == "rift" and self.use_margin

    @property
    def by_confusion(self) -> bool:
        return self.method == "rift" and self.grouping == "confusion"

    @property
    def thresholds(self) -> MarginThresholds:
        return self.margin_thresholds or DEFAULT_THRESHOLDS[self.grouping]

    def graph(self) -> ConfusionGraph:
        th = self.thresholds
        return ConfusionGraph(
            cutoff=th.medium,
            cap=self.confusion_cap,
            styles=self.graph_styles or (self.query_options.style,),
            query_options=self.query_options,
            score=self.margin_score,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method}
        if self.method == "jaccard":
            out["jaccard_threshold"] = self.jaccard_threshold
        else:
            out["theta"] = self.theta
        if self.method == "rift":
            out["grouping"] = self.grouping
            out["linkage"] = self.linkage
            out["margin"] = self.use_margin
        if self.by_confusion:
            out["confusion_cap"] = self.confusion_cap
            out["graph_styles"] = list(self.graph().styles)
            out["edge_margin"] = self.thresholds.medium
        if self.margins_on:
            out["margin_scope"] = self.margin_scope
            out["margin_score"] = self.margin_score
            out["query_style"] = self.query_options.style
            out["substitutes"] = self.substitutes
            out["margin_high"] = self.thresholds.high
            out["margin_medium"] = self.thresholds.medium
        elif self.method == "jaccard":
            out["jaccard_high"] = self.jaccard_thresholds.high
            out["jaccard_medium"] = self.jaccard_thresholds.medium
        else:
            out["cohesion_high"] = self.cohesion_thresholds.high
            out["cohesion_medium"] = self.cohesion_thresholds.medium
        return out


def _groups(
    tools: Sequence[RiftTool],
    vectors: np.ndarray,
    cfg: RiftConfig,
    embed: Embed | None,
    rank: RankScores | None,
) -> list[tuple[tuple[int, ...], float, float | None]]:
    """(members, cohesion, mean pairwise Jaccard or None) per group of the chosen method."""
    if cfg.by_confusion:
        assert embed is not None  # checked by analyze
        ids = [(t.server, t.tool, t.input_schema) for t in tools]
        groups = confusion_groups(ids, vectors, embed, rank, cfg.graph())
        return [(c.members, c.cohesion, None) for c in groups]
    if cfg.method == "rift":
        return [
            (c.members, c.cohesion, None)
            for c in agglomerative_clusters(vectors, cfg.theta, method=cfg.linkage)
        ]
    if cfg.method == "cosine":
        return [(c.members, c.cohesion, None) for c in threshold_groups(vectors, cfg.theta)]
    groups = jaccard_groups([t.card_tokens() for t in tools], cfg.jaccard_threshold)
    return [(m, cohesion(vectors, m), jac) for m, jac in groups]


@dataclass
class _LayerTwo:
    """Layer 2's results for every clustered tool (row index -> value)."""

    queries: dict[int, str] = field(default_factory=dict)
    margins: dict[int, ToolMargin] = field(default_factory=dict)
    substitutes: dict[int, set[int]] = field(default_factory=dict)


def _query_vectors(
    tools: Sequence[RiftTool], clustered: list[int], embed: Embed, cfg: RiftConfig, out: _LayerTwo
) -> np.ndarray:
    for i in clustered:
        out.queries[i] = synthetic_query(tools[i].tool, tools[i].input_schema, cfg.query_options)
    return np.asarray(embed([out.queries[i] for i in clustered]), dtype=np.float32)


_BLOCK = 512  # queries scored at a time: a (512, n) float64 slab


def _layer_two(
    tools: Sequence[RiftTool],
    vectors: np.ndarray,
    groups: list[tuple[tuple[int, ...], float, float | None]],
    embed: Embed,
    rank: RankScores | None,
    cfg: RiftConfig,
) -> _LayerTwo:
    """Synthetic queries, substitutes and margins of every clustered tool.

    Scores come a block of queries at a time (one matrix product per block, not one per
    cluster); each tool's margin reads its own row against its cluster (every method that
    computes margins has disjoint clusters).
    """
    out = _LayerTwo()
    clustered = sorted({i for members, _, _ in groups for i in members})
    if not clustered:
        return out
    qv = _query_vectors(tools, clustered, embed, cfg, out)
    ids = [(t.server, t.tool, t.input_schema) for t in tools]
    v = np.asarray(vectors, dtype=np.float32)
    group_of: dict[int, tuple[int, ...]] = {}
    for members, _, _ in groups:
        pairs = substitute_pairs(members, ids, v, cfg.substitute_rule) if cfg.substitutes else set()
        for i, j in pairs:
            out.substitutes.setdefault(i, set()).add(j)
        group_of.update((i, members) for i in members)
    for start in range(0, len(clustered), _BLOCK):
        block = clustered[start : start + _BLOCK]
        texts = [out.queries[i] for i in block]
        scores = score_rows(qv[start : start + _BLOCK], texts, v, rank, cfg.margin_score)
        for row, i in zip(scores, block, strict=True):
            exclude = {(i, j) for j in out.substitutes.get(i, ())}
            out.margins[i] = row_margin(row, i, group_of[i], cfg.margin_scope, exclude)
    return out


def _risk(cfg: RiftConfig, margin_min: float | None, coh: float, jac: float | None) -> Risk:
    if cfg.method == "rift":
        # Table 5: without margin analysis there is no HIGH or MEDIUM label to give
        return Risk.LOW if margin_min is None else cfg.thresholds.grade(margin_min)
    if cfg.method == "jaccard":
        return cfg.jaccard_thresholds.grade(jac if jac is not None else 0.0)
    return cfg.cohesion_thresholds.grade(coh)


def _margin_value(m: ToolMargin) -> float | None:
    return None if math.isinf(m.margin) else round(m.margin, 4)


def _cluster_report(
    tools: Sequence[RiftTool],
    group: tuple[tuple[int, ...], float, float | None],
    two: _LayerTwo | None,
    cfg: RiftConfig,
) -> ClusterReport:
    members, coh, jac = group
    labels = member_labels([(tools[i].server, tools[i].tool) for i in members])
    diag = diagnose(
        labels, [tools[i].summary for i in members], [tools[i].input_schema for i in members]
    )
    margin_min: float | None = None
    queries = margins_out = rivals = None
    subs: list[list[str]] = []
    if two is not None:
        finite = [two.margins[i].margin for i in members if not math.isinf(two.margins[i].margin)]
        margin_min = min(finite) if finite else None
        pairs = zip(labels, members, strict=True)
        queries = {lab: two.queries[i] for lab, i in zip(labels, members, strict=True)}
        margins_out = {lab: _margin_value(two.margins[i]) for lab, i in pairs}
        rivals = {
            lab: _label_of(tools, labels, members, two.margins[i].rival)
            for lab, i in zip(labels, members, strict=True)
        }
        subs = _substitute_labels(labels, members, two.substitutes)
    return ClusterReport(
        members=[(tools[i].server, tools[i].tool) for i in members],
        cohesion=round(coh, 4),
        margin_min=None if margin_min is None else round(margin_min, 4),
        risk=_risk(cfg, margin_min if two is not None else None, coh, jac).value,
        shared_tokens=list(diag.shared),
        distinct_tokens={k: list(v) for k, v in diag.distinct.items()},
        diagnosis=diag.diagnosis,
        regenerate=list(diag.regenerate),
        jaccard=None if jac is None else round(jac, 4),
        queries=queries,
        margins=margins_out,
        rivals=rivals,
        substitutes=subs,
    )


def _substitute_labels(
    labels: list[str], members: Sequence[int], subs: dict[int, set[int]]
) -> list[list[str]]:
    label = dict(zip(members, labels, strict=True))
    return [
        [label[i], label[j]]
        for i in members
        for j in sorted(subs.get(i, ()))
        if i < j and j in label
    ]


def _sort_key(c: ClusterReport) -> tuple[int, float, int]:
    return (
        -Risk(c.risk).rank,
        c.margin_min if c.margin_min is not None else -c.cohesion,
        -len(c.members),
    )


def analyze(
    tools: Sequence[RiftTool],
    vectors: np.ndarray,
    embed: Embed | None,
    config: RiftConfig | None = None,
    rank: RankScores | None = None,
) -> RiftReport:
    """Run the configured method over ``tools`` (row ``i`` of ``vectors`` is ``tools[i]``).

    ``embed`` embeds the synthetic queries (through the index's query path); ``rank`` gives
    discover's scores of every tool for queries (texts and their vectors), needed for
    ``margin_score="discover"``.
    """
    cfg = config or RiftConfig()
    cfg.validate()
    if len(tools) != vectors.shape[0]:
        raise UsageError(f"{len(tools)} tools but {vectors.shape[0]} vectors")
    if (cfg.margins_on or cfg.by_confusion) and embed is None:
        raise UsageError("margin analysis and the confusion grouping need an embedder")
    needs_rank = cfg.margins_on or cfg.by_confusion
    if needs_rank and cfg.margin_score == "discover" and rank is None:
        raise UsageError(
            "margin_score 'discover' needs discover's ranking; pass rank or use cosine"
        )
    embedder = QueryEmbedder(embed) if embed is not None else None
    t0 = time.perf_counter()
    groups = _groups(tools, vectors, cfg, embedder, rank)
    t_group = time.perf_counter() - t0 - (embedder.seconds if embedder else 0.0)
    t1 = time.perf_counter()
    before = embedder.seconds if embedder else 0.0
    two = (
        _layer_two(tools, vectors, groups, embedder, rank, cfg)
        if cfg.margins_on and embedder is not None
        else None
    )
    embed_s = embedder.seconds if embedder else 0.0
    t_margin = time.perf_counter() - t1 - (embed_s - before)
    t2 = time.perf_counter()
    clusters = sorted((_cluster_report(tools, g, two, cfg) for g in groups), key=_sort_key)
    timing = {
        "group_s": round(t_group, 4),
        "query_embed_s": round(embed_s, 4),
        "margin_s": round(t_margin, 4),
        "diagnose_s": round(time.perf_counter() - t2, 4),
    }
    summary = Summary.of(clusters)
    logger.info("rift: %s clusters, timing %s", summary.clusters, timing)
    return RiftReport(
        summary=summary,
        clusters=clusters,
        config=cfg.to_json(),
        tools_total=len(tools),
        timing=timing,
    )


def _label_of(
    tools: Sequence[RiftTool], labels: list[str], members: Sequence[int], index: int
) -> str | None:
    """The rival's label: its cluster label when it is a member, else ``server/tool``; None
    when the tool has no rival (its cluster mates are all its substitutes)."""
    if index < 0:
        return None
    for lab, i in zip(labels, members, strict=True):
        if i == index:
            return lab
    return f"{tools[index].server}/{tools[index].tool}"
