"""Layer 1 by confusion: on planted arrays, and on a real workspace (real cards, real MiniLM
embeddings, discover's own ranking) against a graph computed here by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components

from cartograph.index import embed_queries
from cartograph.rift import RiftConfig, RiftReport, synthetic_query
from cartograph.rift.confusion import (
    DEFAULT_CAP,
    Edges,
    confusion_clusters,
    merge_edges,
    row_edges,
)
from cartograph.rift.workspace import load_inputs, run_rift
from cartograph.storage import open_index, open_store
from cartograph.workspace import Workspace

from .conftest import discover_scores


def _unit(rows: list[list[float]]) -> np.ndarray:
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_an_edge_joins_every_tool_within_the_cutoff_of_the_tools_own_score() -> None:
    row = np.array([0.50, 0.45, 0.29, 0.60, 0.10])
    edges = row_edges(row, 0, 0.20)
    # 0.45 and 0.60 are within 0.20 of its own 0.50 (0.60 outranks it); 0.29 and 0.10 are not
    assert sorted(edges) == [(1, pytest.approx(0.05)), (3, pytest.approx(-0.10))]


def test_several_queries_keep_the_smallest_margin_of_a_pair() -> None:
    edges = merge_edges([(0, 1, 0.15), (0, 1, -0.02), (1, 0, 0.10)])
    assert edges.source.tolist() == [0, 1]
    assert edges.target.tolist() == [1, 0]
    assert edges.margin.tolist() == [-0.02, 0.10]


def test_a_chain_across_unrelated_cards_is_cut_at_the_cosine_cap() -> None:
    # two tight families (0, 1, 2) and (3, 4) bridged by one confusion edge 2 -> 3
    v = _unit([[1, 0.05, 0], [1, 0, 0.05], [1, 0.1, 0.1], [0, 1, 0.05], [0.05, 1, 0]])
    pairs = [(0, 1), (1, 2), (2, 3), (3, 4)]
    edges = Edges(
        np.asarray([a for a, _ in pairs]),
        np.asarray([b for _, b in pairs]),
        np.full(len(pairs), 0.05),
    )
    whole = confusion_clusters(v, edges, cap=None)
    assert [c.members for c in whole] == [(0, 1, 2, 3, 4)]
    cut = confusion_clusters(v, edges, cap=0.55)
    assert sorted(c.members for c in cut) == [(0, 1, 2), (3, 4)]


def test_a_part_with_no_confusion_edge_inside_is_not_a_cluster() -> None:
    # 0 -> 1 is the only edge; 2 and 3 are close cards joined to the component through 1 -> 2,
    # but once cut at the cap, (2, 3) holds no edge of its own
    v = _unit([[1, 0, 0], [1, 0.05, 0], [0, 1, 0], [0, 1, 0.05]])
    edges = Edges(np.asarray([0, 1, 3]), np.asarray([1, 2, 1]), np.asarray([0.1, 0.1, 0.1]))
    cut = confusion_clusters(v, edges, cap=0.55)
    assert [c.members for c in cut] == [(0, 1)]


def _hand_graph(home: Path) -> tuple[list[tuple[str, str]], dict[tuple[int, int], float]]:
    """Every edge of the workspace's confusion graph, computed here one query at a time through
    discover's hybrid score (with the action the task's tool name says) rather than Rift's
    blocked ranker."""
    ws = Workspace(home)
    index = open_index(ws)
    inputs = load_inputs(ws, open_store(ws))
    v = np.asarray(index.tool_vectors, dtype=np.float64)
    texts = [synthetic_query(t.tool, t.input_schema) for t in inputs.tools]
    qv = embed_queries(index.embedder, texts)
    edges: dict[tuple[int, int], float] = {}
    for a, text in enumerate(texts):
        spread = float((v @ qv[a]).std()) / index.hybrid_params.w_dense
        scores = discover_scores(index, text, qv[a]) * spread
        for b in range(len(texts)):
            margin = float(scores[a] - scores[b])
            if b != a and margin < 0.20:
                edges[(a, b)] = margin
    return list(index.tool_ids), edges


def test_confusion_components_are_the_components_of_the_hand_computed_graph(
    rift_home: Path,
) -> None:
    tool_ids, edges = _hand_graph(rift_home)
    assert edges, "the five servers have tools discover ranks within 0.20 of each other"
    ws = Workspace(rift_home)
    report = run_rift(ws, open_store(ws), RiftConfig(confusion_cap=None))
    n = len(tool_ids)
    graph = np.zeros((n, n), dtype=np.int8)
    for a, b in edges:
        graph[a, b] = 1
    _, labels = connected_components(graph, directed=False)
    want = {
        tuple(tool_ids[i] for i in np.nonzero(labels == lab)[0])
        for lab in set(labels.tolist())
        if (labels == lab).sum() >= 2
    }
    got = {tuple(sorted(c.members, key=tool_ids.index)) for c in report.clusters}
    assert got == want


def test_every_confusion_cluster_holds_an_edge_and_its_cards_agree_on_average(
    rift_home: Path, rift_report: RiftReport
) -> None:
    tool_ids, edges = _hand_graph(rift_home)
    pos = {t: i for i, t in enumerate(tool_ids)}
    joined = {frozenset(p) for p in edges}
    assert rift_report.config["grouping"] == "confusion"
    assert rift_report.clusters
    for cluster in rift_report.clusters:
        rows = [pos[(s, t)] for s, t in cluster.members]
        inside = {frozenset((a, b)) for a in rows for b in rows if a < b} & joined
        assert inside
        if len(rows) > 2:  # average linkage below the cap; a bare pair is kept whole
            assert cluster.cohesion >= DEFAULT_CAP - 1e-3
        subs = {frozenset(pos[tuple(x.split("/", 1))] for x in p) for p in cluster.substitutes}
        if inside <= subs:  # joined by substitutes alone (a mate may ride on card cosine)
            assert cluster.risk == "LOW" and cluster.substitutes
            assert cluster.margin_min is None or cluster.margin_min >= 0.20
        else:  # a pair within the MEDIUM margin (non-substitute, or it would not be a rival)
            assert cluster.margin_min is not None and cluster.margin_min < 0.20
            assert cluster.risk == ("HIGH" if cluster.margin_min < 0.0 else "MEDIUM")


def test_the_deprecated_read_file_alias_shares_a_confusion_cluster_with_its_successor(
    rift_report: RiftReport,
) -> None:
    cluster = next(c for c in rift_report.clusters if ("filesystem", "read_file") in c.members)
    assert ("filesystem", "read_text_file") in cluster.members
    assert cluster.risk in ("HIGH", "MEDIUM")


def test_the_paper_grouping_stays_selectable_with_the_papers_constants(rift_home: Path) -> None:
    ws = Workspace(rift_home)
    report = run_rift(ws, open_store(ws), RiftConfig(grouping="cosine"))
    assert report.config["grouping"] == "cosine"
    assert (report.config["margin_high"], report.config["margin_medium"]) == (0.10, 0.20)
    assert "confusion_cap" not in report.config


def test_substitutes_share_a_group_and_are_listed_apart_never_as_rivals(
    rift_report: RiftReport,
) -> None:
    # the two servers' move_file do the same job: discover ranks them together, but picking
    # either is no mistake, so the group lists them apart and has no rival to grade
    cluster = next(c for c in rift_report.clusters if ("filesystem", "move_file") in c.members)
    assert cluster.members == [("desktop-commander", "move_file"), ("filesystem", "move_file")]
    assert cluster.substitutes == [["desktop-commander/move_file", "filesystem/move_file"]]
    assert cluster.rivals == {"desktop-commander/move_file": None, "filesystem/move_file": None}
    assert cluster.margin_min is None and cluster.risk == "LOW"
