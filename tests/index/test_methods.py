from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cartograph.index.methods import (
    HAND_SET,
    Evidence,
    HybridParams,
    cosine_stats,
    hybrid_parts,
    hybrid_scores,
    stage_one_width,
    two_stage_scores,
)


@pytest.mark.parametrize(
    ("k", "m", "n", "expected"),
    [
        (5, 22, 374, 2),  # the paper: n_avg 17 -> floor(10/17)+1 = 1 -> at least 2
        (5, 10, 20, 6),  # n_avg 2 -> floor(10/2)+1 = 6
        (5, 3, 6, 3),  # capped at m
        (1, 1, 4, 1),  # a single server
        (5, 0, 0, 0),
    ],
)
def test_stage_one_width_follows_the_paper(k, m, n, expected):
    assert stage_one_width(k, m, n) == expected


def _evidence(tool_cos, centroid_cos, tool_server, bm25=None, server_cos=None, coverage=None):
    tool_cos = np.asarray(tool_cos, dtype=np.float32)
    return Evidence(
        coverage=None if coverage is None else np.asarray(coverage, dtype=np.float32),
        tool_cos=tool_cos,
        centroid_cos=np.asarray(centroid_cos, dtype=np.float32),
        server_cos=np.asarray(server_cos if server_cos is not None else centroid_cos, np.float32),
        bm25=np.asarray(bm25 if bm25 is not None else np.zeros_like(tool_cos), np.float32),
        tool_server=np.asarray(tool_server),
        n_servers=len(centroid_cos),
    )


def test_two_stage_ranks_tools_of_the_chosen_servers_first():
    # 3 servers x 4 tools; the best single tool (index 11) sits on the weakest server.
    tool_cos = [0.5, 0.4, 0.3, 0.2, 0.45, 0.35, 0.1, 0.1, 0.0, 0.0, 0.0, 0.9]
    ev = _evidence(tool_cos, [0.8, 0.7, 0.1], [0] * 4 + [1] * 4 + [2] * 4)
    scores = two_stage_scores(ev, k=2)  # s = max(2, floor(4/4)+1) = 2
    order = np.argsort(-scores, kind="stable")
    assert order[:8].tolist() == [0, 4, 1, 5, 2, 3, 6, 7]
    assert order[8] == 11  # the rest follow in flat cosine order


def test_hybrid_lets_lexical_evidence_lift_a_tool():
    tool_cos = [0.50, 0.49, 0.10, 0.05]
    ev_dense = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1])
    ev_lex = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1], bm25=[0.0, 12.0, 0.0, 0.0])
    assert int(np.argmax(hybrid_scores(ev_dense))) == 0
    assert int(np.argmax(hybrid_scores(ev_lex))) == 1
    assert int(np.argmax(hybrid_scores(ev_lex, HAND_SET))) == 1


def test_a_weak_best_lexical_match_does_not_outweigh_the_dense_leader():
    # The best BM25 is a single common word (max 1.5 < 4): the fitted fusion lets dense lead,
    # where the hand-set one (which only sees BM25 relative to its max) lets the word decide.
    rng = np.random.default_rng(3)
    tool_cos = np.concatenate([[0.8, 0.55], rng.uniform(0.0, 0.5, 100)])
    bm25 = np.zeros(102)
    bm25[1] = 1.5
    ev = _evidence(tool_cos, [0.5, 0.1], [0] * 51 + [1] * 51, bm25=bm25)
    assert int(np.argmax(hybrid_scores(ev))) == 0
    assert int(np.argmax(hybrid_scores(ev, HAND_SET))) == 1


def test_coverage_prefers_the_tool_that_holds_more_of_the_request():
    # Two tools alike on every channel but coverage: the one holding both query words wins.
    tool_cos = [0.40, 0.40, 0.1, 0.1]
    bm25 = [9.0, 9.0, 0.0, 0.0]
    base = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1], bm25=bm25)
    ev = replace(base, coverage=np.asarray([0.5, 1.0, 0.0, 0.0], dtype=np.float32))
    parts = hybrid_parts(ev)
    assert parts["coverage"][1] > parts["coverage"][0] > 0
    assert int(np.argmax(hybrid_scores(ev))) == 1
    assert "coverage" not in hybrid_parts(base)  # no coverage evidence: no term


def test_hand_set_params_are_the_formula_used_before():
    rng = np.random.default_rng(4)
    tool_cos = rng.uniform(0.0, 0.8, 60).astype(np.float32)
    bm25 = np.where(rng.random(60) < 0.3, rng.uniform(0.5, 9.0, 60), 0.0)
    servers = [i // 10 for i in range(60)]
    ev = _evidence(tool_cos, rng.uniform(0, 1, 6), servers, bm25=bm25, coverage=rng.random(60))
    z = (tool_cos - tool_cos.mean()) / tool_cos.std()
    srv = np.maximum(ev.server_cos, [tool_cos[i * 10 : i * 10 + 10].max() for i in range(6)])
    zs = (srv - srv.mean()) / srv.std()
    want = z + 4.5 * bm25 / bm25.max() + 0.15 * zs[np.asarray(servers)]
    assert np.allclose(hybrid_scores(ev, HAND_SET), want, atol=1e-5)
    assert HybridParams.hand_set(4.5, 0.5, 0.15) == HAND_SET


def test_rank_terms_reward_the_head_of_each_list_and_skip_unmatched_tools():
    tool_cos = [0.9, 0.5, 0.4, 0.3]
    ev = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1], bm25=[0.0, 0.0, 6.0, 0.0])
    only_ranks = HybridParams(0.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    rank = hybrid_parts(ev, only_ranks)["rank"]
    assert rank.tolist() == pytest.approx([1.0, 0.5, 1 / 3 + 1.0, 0.25])


def test_hybrid_keeps_a_confident_dense_margin_that_rank_fusion_would_flatten():
    # Tool 0 is far ahead on cosine; tool 1 only slightly ahead of the pack on BM25. Under
    # score fusion the dense margin wins; a rank-only fusion would tie them.
    rng = np.random.default_rng(0)
    tool_cos = np.concatenate([[0.9, 0.3], rng.uniform(0.0, 0.3, 200)])
    bm25 = np.concatenate([[0.0, 1.0], rng.uniform(0.0, 0.9, 200)])
    ev = _evidence(tool_cos, [0.5, 0.1], [0] * 101 + [1] * 101, bm25=bm25)
    assert int(np.argmax(hybrid_scores(ev))) == 0


def test_cosine_stats_from_moments_equal_the_full_scan():
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(500, 16))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    q = rng.normal(size=16)
    q /= np.linalg.norm(q)
    moments = (vecs.mean(axis=0), vecs.T @ vecs / len(vecs))
    mean, std = cosine_stats(moments, q)
    cos = vecs @ q
    assert mean == pytest.approx(float(cos.mean()), abs=1e-9)
    assert std == pytest.approx(float(cos.std()), abs=1e-9)


def test_hybrid_with_given_stats_ranks_like_the_full_scan_on_the_kept_top():
    # A store that returns only the nearest tools (others at a floor) and passes the exact
    # statistics ranks its kept tools exactly as the full evidence does.
    rng = np.random.default_rng(2)
    vecs = rng.normal(size=(300, 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    q = vecs[7] + 0.1 * rng.normal(size=8)
    q /= np.linalg.norm(q)
    tool_cos = (vecs @ q).astype(np.float32)
    servers = [i // 30 for i in range(300)]
    full = _evidence(tool_cos, np.zeros(10), servers)
    keep = np.argsort(-tool_cos)[:50]
    partial_cos = np.full_like(tool_cos, -1.0)
    partial_cos[keep] = tool_cos[keep]
    stats = cosine_stats((vecs.mean(axis=0), vecs.T @ vecs / len(vecs)), q)
    partial = replace(_evidence(partial_cos, np.zeros(10), servers), dense_stats=stats)
    top_full = np.argsort(-hybrid_scores(full))[:5].tolist()
    top_partial = np.argsort(-hybrid_scores(partial))[:5].tolist()
    assert top_full == top_partial
